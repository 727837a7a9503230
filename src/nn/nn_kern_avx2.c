/* nn kernels for AVX2 + FMA (8 floats per vector); compiled with -mavx2
 * -mfma and only called when the CPU has them (nn_kern_get). */
#define NN_VW 8
#define NN_OWN_GEMM 1
#define NN_KERNELS nn_kernels_avx2
#define NN_KERNELS_NAME "avx2"
#include "nn_kern_impl.h"
