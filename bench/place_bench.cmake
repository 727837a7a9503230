# Benchmark of the baseline placers (issue 4): a program, never a timed test.
add_executable(bench_baseline ${CMAKE_CURRENT_SOURCE_DIR}/bench_baseline.c)
target_include_directories(bench_baseline PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_baseline PRIVATE dplace)
