/* nn kernels for the compiler's baseline ISA (4 floats per vector); the
 * matrix products are OpenBLAS's. Used where no wider ISA is available. */
#define NN_VW 4
#define NN_KERNELS nn_kernels_base
#define NN_KERNELS_NAME "base"
#include "nn_kern_impl.h"
