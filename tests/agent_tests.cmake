# Tests of the learned placers (issue 9).
dp_add_test(test_measure)
dp_add_test(test_plot)
