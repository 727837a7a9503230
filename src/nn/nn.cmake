# Neural-network engine (issue 5): layers, optimiser, checkpoints on OpenBLAS.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
set(DPLACE_NN_SOURCES
  ${PROJECT_SOURCE_DIR}/src/nn/nn_layers.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_rnn.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_graph.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_params.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_check.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_models.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_seq2seq.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_mars.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_txl.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_gemm.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_pool.c
  ${PROJECT_SOURCE_DIR}/src/nn/nn_kern_base.c
)
target_sources(dplace PRIVATE ${DPLACE_NN_SOURCES})
# The element-wise kernels are written to vectorise: -O3 lets GCC do it, and
# -fno-trapping-math lets it if-convert the clamps and selects in them (no
# change to any result: the code never reads floating-point exception flags).
set_source_files_properties(${DPLACE_NN_SOURCES} PROPERTIES COMPILE_OPTIONS "-O3;-fno-trapping-math;-fno-math-errno")
target_link_libraries(dplace PUBLIC PkgConfig::OPENBLAS)
find_package(Threads REQUIRED)
target_link_libraries(dplace PUBLIC Threads::Threads)

# Vector kernels for AVX2 and AVX-512 (nn_kern_impl.h compiled per ISA, picked
# at run time by nn_kern_get). -ffp-contract=fast turns a * b + c into FMAs
# in these files only.
include(CheckCCompilerFlag)
check_c_compiler_flag("-mavx512f -mfma" DPLACE_NN_HAVE_AVX512_FLAGS)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND DPLACE_NN_HAVE_AVX512_FLAGS)
  set(DPLACE_NN_AVX2 ${PROJECT_SOURCE_DIR}/src/nn/nn_kern_avx2.c)
  set(DPLACE_NN_AVX512 ${PROJECT_SOURCE_DIR}/src/nn/nn_kern_avx512.c)
  target_sources(dplace PRIVATE ${DPLACE_NN_AVX2} ${DPLACE_NN_AVX512})
  set_source_files_properties(${DPLACE_NN_AVX2} PROPERTIES COMPILE_OPTIONS
    "-O3;-fno-trapping-math;-fno-math-errno;-ffp-contract=fast;-mavx2;-mfma")
  set_source_files_properties(${DPLACE_NN_AVX512} PROPERTIES COMPILE_OPTIONS
    "-O3;-fno-trapping-math;-fno-math-errno;-ffp-contract=fast;-mavx512f;-mfma;-mprefer-vector-width=512")
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/nn/nn_gemm.c PROPERTIES COMPILE_DEFINITIONS
    NN_HAVE_X86_KERNELS=1)
endif()
