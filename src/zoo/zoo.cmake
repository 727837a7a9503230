# The model zoo: TensorFlow-style training graphs of the four
# papers' benchmark models, their human-expert placements, the papers' step
# times beside the simulator's (`dplace zoo` is the CLI's).
dp_add_layer(zoo
  SOURCES
    src/zoo/zoo.c
    src/zoo/tfb.c
    src/zoo/models_rnn.c
    src/zoo/models_cnn.c
    src/zoo/models_bert.c
    src/zoo/expert.c
    src/zoo/zoo_calib.c
  BELOW sim graph common)
