# The graph layer: dp_graph (src/graph) and dp_devices (src/devices), side by
# side in one library; neither calls the other.
dp_add_layer(graph
  SOURCES
    src/graph/graph.c
    src/graph/graph_json.c
    src/graph/synth.c
    src/devices/devices.c
    src/devices/presets.c
    src/devices/generations.c
  BELOW common)
