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
  ${PROJECT_SOURCE_DIR}/src/nn/nn_gemm.c
)
target_sources(dplace PRIVATE ${DPLACE_NN_SOURCES})
# The element-wise kernels are written to vectorise: -O3 lets GCC do it, and
# -fno-trapping-math lets it if-convert the clamps and selects in them (no
# change to any result: the code never reads floating-point exception flags).
set_source_files_properties(${DPLACE_NN_SOURCES} PROPERTIES COMPILE_OPTIONS "-O3;-fno-trapping-math;-fno-math-errno")
target_link_libraries(dplace PUBLIC PkgConfig::OPENBLAS)
