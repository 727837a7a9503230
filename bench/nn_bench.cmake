# Benchmark of the nn engine (issue 5): a program, never a timed test.
add_executable(bench_policy ${CMAKE_CURRENT_SOURCE_DIR}/bench_policy.c)
target_include_directories(bench_policy PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_policy PRIVATE dplace)
# Mars's PPO round against ../shared/anchors/torch_mars_policy.py (issue 11).
add_executable(bench_mars ${CMAKE_CURRENT_SOURCE_DIR}/bench_mars.c)
target_include_directories(bench_mars PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_mars PRIVATE dplace)
