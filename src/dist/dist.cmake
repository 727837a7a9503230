# Distributed runs over MPI (include/dplace/dist.h,
# docs/distributed.md): roles over ranks, the sync evaluation over worker
# ranks, the async controllers and parameter server, the search over ranks. Built only when CMake
# finds MPI (the top CMakeLists.txt includes this fragment then).
dp_add_layer(dist
  SOURCES
    src/dist/dist.c
    src/dist/dist_wait.c
    src/dist/dist_sync.c
    src/dist/dist_async.c
    src/dist/dist_search.c
  BELOW agent search run place nn sim graph common
  LIBS MPI::MPI_C)
