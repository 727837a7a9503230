# Tests of the baseline placers and groupers (issue 4).
dp_add_test(test_place)
dp_add_test(test_units)
dp_add_test(test_group)
add_test(NAME test_cli_place COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_place.sh $<TARGET_FILE:dplace_cli>
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
