# Simulator-guided placement search (include/dplace/search.h,
# docs/search.md): unit levels, moves, the Metropolis chains on threads,
# checkpoints; a run-driver method (`dplace optimize --agent search`).
dp_add_layer(search
  SOURCES
    src/search/search.c
    src/search/search_options.c
    src/search/search_chain.c
    src/search/search_units.c
    src/search/search_moves.c
    src/search/search_ckpt.c
  BELOW run place sim graph common
  LIBS Threads::Threads)
