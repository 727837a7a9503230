# Calibration: a device set's cost-model parameters fitted to measured step
# times, and the placements worth measuring (include/dplace/calib.h).
dp_add_layer(calib
  SOURCES
    src/calib/calib.c
    src/calib/calib_propose.c
    src/calib/calib_csv.c
  BELOW run place sim graph common)
