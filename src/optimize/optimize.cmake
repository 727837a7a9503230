# One optimisation job for any caller (include/dplace/optimize.h): the
# reference placements, an agent or the search through the run driver,
# the search after a learned agent, the trace; a job's settings, their
# table and the presets (include/dplace/settings_job.h).
dp_add_layer(optimize
  SOURCES
    src/optimize/optimize.c
    src/optimize/optimize_json.c
    src/optimize/optimize_prepare.c
    src/optimize/settings_job.c
    src/optimize/presets.c
  BELOW agent search run place nn sim graph common)
