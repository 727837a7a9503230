# Tests of the learned placers (issue 9).
dp_add_test(test_measure)
dp_add_test(test_plot)
dp_add_test(test_agent)
dp_add_test(test_agent_mars)
add_test(NAME test_cli_optimize COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_optimize.sh $<TARGET_FILE:dplace_cli>
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
