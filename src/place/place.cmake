# Baseline placers and grouping heuristics (issue 4): Scotch and METIS from
# Debian (libscotch-dev, libmetis-dev; scripts/setup.sh installs them).
# Debian's default Scotch header (/usr/include/scotch/scotch.h) and library
# (libscotch.so) are the 32-bit-integer build; place_scotch.c checks at run
# time that the library's integer width matches the header's.
find_path(DPLACE_SCOTCH_INCLUDE_DIR scotch.h PATH_SUFFIXES scotch REQUIRED)
find_library(DPLACE_SCOTCH_LIBRARY scotch REQUIRED)
find_library(DPLACE_SCOTCHERR_LIBRARY scotcherr REQUIRED)
find_path(DPLACE_METIS_INCLUDE_DIR metis.h REQUIRED)
find_library(DPLACE_METIS_LIBRARY metis REQUIRED)
# m-SCT's LP relaxation: COIN-OR CLP from Debian (coinor-libclp-dev; its C
# interface, coin/Clp_C_Interface.h).
find_path(DPLACE_CLP_INCLUDE_DIR coin/Clp_C_Interface.h REQUIRED)
find_library(DPLACE_CLP_LIBRARY Clp REQUIRED)
find_library(DPLACE_COINUTILS_LIBRARY CoinUtils REQUIRED)

target_sources(dplace PRIVATE
  ${PROJECT_SOURCE_DIR}/src/place/units.c
  ${PROJECT_SOURCE_DIR}/src/place/place_common.c
  ${PROJECT_SOURCE_DIR}/src/place/place_simple.c
  ${PROJECT_SOURCE_DIR}/src/place/place_partition.c
  ${PROJECT_SOURCE_DIR}/src/place/place_scotch.c
  ${PROJECT_SOURCE_DIR}/src/place/place_metis.c
  ${PROJECT_SOURCE_DIR}/src/place/place_list.c
  ${PROJECT_SOURCE_DIR}/src/place/place_forward.c
  ${PROJECT_SOURCE_DIR}/src/place/place_sct.c
  ${PROJECT_SOURCE_DIR}/src/place/group.c
  ${PROJECT_SOURCE_DIR}/src/place/group_fluid.c
)
# Only the three wrappers see the libraries' headers.
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/place/place_scotch.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_SCOTCH_INCLUDE_DIR})
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/place/place_metis.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_METIS_INCLUDE_DIR})
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/place/place_sct.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_CLP_INCLUDE_DIR})
# libscotch needs libscotcherr (its error printer); dplace defines
# SCOTCH_errorPrint itself, and the program's definition wins, so Scotch's
# messages come back in dp_error instead of going to stderr.
target_link_libraries(dplace PUBLIC ${DPLACE_SCOTCH_LIBRARY} ${DPLACE_SCOTCHERR_LIBRARY} ${DPLACE_METIS_LIBRARY}
  ${DPLACE_CLP_LIBRARY} ${DPLACE_COINUTILS_LIBRARY})

target_sources(dplace_cli PRIVATE
  ${PROJECT_SOURCE_DIR}/src/cli/cmd_baseline.c
  ${PROJECT_SOURCE_DIR}/src/cli/cmd_group.c
)
