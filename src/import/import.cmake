# Importers of graphs described by other tools (issue 3): the MSR
# dnn-partitioning graphs and splits, and `dplace import`. Included by the top
# CMakeLists.txt after the dplace and dplace_cli targets exist.
target_sources(dplace PRIVATE
  ${PROJECT_SOURCE_DIR}/src/import/import_msr.c
  ${PROJECT_SOURCE_DIR}/src/import/import_msr_split.c
)
target_sources(dplace_cli PRIVATE ${PROJECT_SOURCE_DIR}/src/cli/cmd_import.c)
