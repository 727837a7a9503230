# Tests of the neural-network engine (issue 5).
dp_add_test(test_nn_layers)
