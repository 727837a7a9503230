# The model zoo (issue 3): TensorFlow-style training graphs of the seed
# papers' benchmark models, their human-expert placements.
target_sources(dplace PRIVATE
  ${PROJECT_SOURCE_DIR}/src/zoo/zoo.c
  ${PROJECT_SOURCE_DIR}/src/zoo/tfb.c
  ${PROJECT_SOURCE_DIR}/src/zoo/models_rnn.c
  ${PROJECT_SOURCE_DIR}/src/zoo/models_cnn.c
  ${PROJECT_SOURCE_DIR}/src/zoo/models_bert.c
  ${PROJECT_SOURCE_DIR}/src/zoo/expert.c
  ${PROJECT_SOURCE_DIR}/src/zoo/zoo_calib.c
)
target_sources(dplace_cli PRIVATE ${PROJECT_SOURCE_DIR}/src/cli/cmd_zoo.c)
