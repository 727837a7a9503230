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
  BELOW run place nn sim graph common
  LIBS Threads::Threads)
