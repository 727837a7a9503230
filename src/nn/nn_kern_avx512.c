/* nn kernels for AVX-512F + FMA (16 floats per vector); compiled with
 * -mavx512f -mfma and only called when the CPU has them (nn_kern_get). */
#define NN_VW 16
#define NN_OWN_GEMM 1
#define NN_KERNELS nn_kernels_avx512
#define NN_KERNELS_NAME "avx512"
#include "nn_kern_impl.h"
