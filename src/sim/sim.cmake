# The simulator layer: the cost model, placements, the discrete-event
# simulator and its trace.
dp_add_layer(sim
  SOURCES
    src/sim/cost.c
    src/sim/placement.c
    src/sim/sim.c
    src/sim/sim_delta.c
    src/sim/sim_eager.c
    src/sim/trace.c
  BELOW graph common)
