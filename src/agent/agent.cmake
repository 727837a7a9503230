# Learned placers (the encoder and placer interfaces: docs/architecture.md):
# the core, the encoders and placers, presets, features, the evaluator,
# checkpoints and the external measuring command (`dplace optimize` is the
# CLI's).
dp_add_layer(agent
  SOURCES
    src/agent/measure.c
    src/agent/agent.c
    src/agent/agent_train.c
    src/agent/agent_warm.c
    src/agent/agent_walks.c
    src/agent/encoder_groups.c
    src/agent/encoder_ops.c
    src/agent/placer_seq.c
    src/agent/placer_independent.c
    src/agent/agent_config.c
    src/agent/agent_features.c
    src/agent/agent_eval.c
    src/agent/agent_ckpt.c
    src/agent/pretrained_policy.c
    src/agent/pretrained_decode.c
    src/agent/pretrained.c
    src/agent/pretrained_default.c
  BELOW run place nn sim graph common
  LIBS Threads::Threads)
# The shipped policy (policies/pretrained.dpp), compiled in as bytes.
set(DP_POLICY_FILE ${PROJECT_SOURCE_DIR}/policies/pretrained.dpp)
set(DP_POLICY_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/embed.cmake)
if(EXISTS ${DP_POLICY_FILE})
  list(APPEND DP_POLICY_DEPENDS ${DP_POLICY_FILE})
endif()
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/pretrained_blob.c
  COMMAND ${CMAKE_COMMAND} -DIN=${DP_POLICY_FILE} -DOUT=${PROJECT_BINARY_DIR}/pretrained_blob.c
          -DNAME=dp_pretrained_blob -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${DP_POLICY_DEPENDS} VERBATIM)
target_sources(dplace_agent PRIVATE ${PROJECT_BINARY_DIR}/pretrained_blob.c)
