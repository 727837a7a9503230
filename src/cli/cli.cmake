# The dplace program: one cmd_*.c per subcommand, on every layer below.
add_executable(dplace_cli
  src/cli/main.c
  src/cli/cli_opt.c
  src/cli/cli_util.c
  src/cli/cmd_simulate.c
  src/cli/cmd_devices.c
  src/cli/cmd_zoo.c
  src/cli/cmd_import.c
  src/cli/cmd_baseline.c
  src/cli/cmd_group.c
  src/cli/cmd_optimize.c
  src/cli/cmd_calibrate.c
  src/cli/optimize_run.c
  src/cli/optimize_progress.c
  src/cli/optimize_report.c
  src/cli/optimize_mpi.c
)
set_target_properties(dplace_cli PROPERTIES OUTPUT_NAME dplace)
target_include_directories(dplace_cli PRIVATE src)
# `dplace --version` prints the version of project() (docs/releasing.md).
target_compile_definitions(dplace_cli PRIVATE DPLACE_VERSION="${PROJECT_VERSION}")
target_link_libraries(dplace_cli PRIVATE dplace_optimize dplace_agent dplace_search dplace_zoo dplace_import dplace_calib)
if(MPI_C_FOUND)
  target_link_libraries(dplace_cli PRIVATE dplace_dist)
  target_compile_definitions(dplace_cli PRIVATE DPLACE_HAVE_MPI=1)
endif()
