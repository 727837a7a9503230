# Importers of graphs described by other tools: the MSR
# dnn-partitioning graphs and splits (`dplace import` is the CLI's).
dp_add_layer(import
  SOURCES
    src/import/import_msr.c
    src/import/import_msr_split.c
  BELOW graph common)
