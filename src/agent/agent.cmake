# Learned placers (issue 9): the agent framework (features, groupers, placer,
# algorithm, evaluators), the external measuring command and the SVG training
# curve, and the `dplace optimize` command.
find_package(Threads REQUIRED)
target_sources(dplace PRIVATE
  ${PROJECT_SOURCE_DIR}/src/agent/measure.c
  ${PROJECT_SOURCE_DIR}/src/run/plot.c
  ${PROJECT_SOURCE_DIR}/src/run/run.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent_train.c
  ${PROJECT_SOURCE_DIR}/src/agent/encoder_groups.c
  ${PROJECT_SOURCE_DIR}/src/agent/encoder_ops.c
  ${PROJECT_SOURCE_DIR}/src/agent/placer_seq.c
  ${PROJECT_SOURCE_DIR}/src/agent/placer_independent.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent_config.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent_features.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent_eval.c
  ${PROJECT_SOURCE_DIR}/src/agent/agent_ckpt.c
)
target_link_libraries(dplace PUBLIC Threads::Threads)
target_sources(dplace_cli PRIVATE
  ${PROJECT_SOURCE_DIR}/src/cli/cmd_optimize.c
)
