# Tests of the neural-network engine (issue 5). Gradient checks use small
# sizes; all run in well under a second each, also under ASan+UBSan.
dp_add_test(test_nn_layers)
dp_add_test(test_nn_optim)
dp_add_test(test_nn_models)
dp_add_test(test_nn_kernels)
dp_add_test(test_nn_mars)
dp_add_test(test_nn_txl)
