# Learned placers (issue 9): the agent framework (features, groupers, placer,
# algorithm, evaluators), the external measuring command and the SVG training
# curve (`dplace optimize` is the CLI's).
dp_add_layer(agent
  SOURCES
    src/agent/measure.c
    src/agent/plot.c
    src/agent/agent.c
    src/agent/agent_config.c
    src/agent/agent_features.c
    src/agent/agent_eval.c
    src/agent/agent_ckpt.c
    src/agent/agent_policy.c
    src/agent/agent_mars.c
  BELOW place nn sim graph common
  LIBS Threads::Threads)
