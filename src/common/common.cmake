# The common layer: status codes and errors, the seeded RNG, growable arrays,
# interning, atomic files, the thread fan-out, JSON helpers (and the header-only heap.h, uf.h).
dp_add_layer(common
  SOURCES
    src/common/error.c
    src/common/rng.c
    src/common/util.c
    src/common/bytes.c
    src/common/json_util.c
  LIBS PkgConfig::JANSSON Threads::Threads m)
