# The neural-network engine: layers, optimiser, checkpoints on
# OpenBLAS. It needs the common layer only.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
set(DPLACE_NN_SOURCES
  src/nn/nn_layers.c
  src/nn/nn_rnn.c
  src/nn/nn_graph.c
  src/nn/nn_params.c
  src/nn/nn_check.c
  src/nn/nn_models.c
  src/nn/nn_seq2seq.c
  src/nn/nn_mars.c
  src/nn/nn_txl.c
  src/nn/nn_gemm.c
  src/nn/nn_pool.c
  src/nn/nn_kern_base.c
)
dp_add_layer(nn SOURCES ${DPLACE_NN_SOURCES} BELOW common LIBS PkgConfig::OPENBLAS Threads::Threads)
# The element-wise kernels are written to vectorise: -O3 lets GCC do it, and
# -fno-trapping-math lets it if-convert the clamps and selects in them (no
# change to any result: the code never reads floating-point exception flags).
set_source_files_properties(${DPLACE_NN_SOURCES} PROPERTIES COMPILE_OPTIONS "-O3;-fno-trapping-math;-fno-math-errno")

# Vector kernels for AVX2 and AVX-512 (nn_kern_impl.h compiled per ISA, picked
# at run time by nn_kern_get). -ffp-contract=fast turns a * b + c into FMAs
# in these files only.
include(CheckCCompilerFlag)
check_c_compiler_flag("-mavx512f -mfma" DPLACE_NN_HAVE_AVX512_FLAGS)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND DPLACE_NN_HAVE_AVX512_FLAGS)
  target_sources(dplace_nn PRIVATE src/nn/nn_kern_avx2.c src/nn/nn_kern_avx512.c)
  set_source_files_properties(src/nn/nn_kern_avx2.c PROPERTIES COMPILE_OPTIONS
    "-O3;-fno-trapping-math;-fno-math-errno;-ffp-contract=fast;-mavx2;-mfma")
  set_source_files_properties(src/nn/nn_kern_avx512.c PROPERTIES COMPILE_OPTIONS
    "-O3;-fno-trapping-math;-fno-math-errno;-ffp-contract=fast;-mavx512f;-mfma;-mprefer-vector-width=512")
  set_source_files_properties(src/nn/nn_gemm.c PROPERTIES COMPILE_DEFINITIONS NN_HAVE_X86_KERNELS=1)
endif()
