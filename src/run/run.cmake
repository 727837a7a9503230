# The run driver every method runs under (budgets, logs, best placement,
# checkpoints, cancellation; include/dplace/run.h) and the SVG training curve.
dp_add_layer(run
  SOURCES
    src/run/run.c
    src/run/plot.c
    src/run/settings.c
    src/run/reference.c
  BELOW place sim graph common)
