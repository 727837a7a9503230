# Baseline placers and grouping heuristics: Scotch and METIS from
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

# The place layer: units, baseline placers, groupers (`dplace baseline` and
# `dplace group` are the CLI's).
# libscotch needs libscotcherr (its error printer); dplace defines
# SCOTCH_errorPrint itself, and the program's definition wins, so Scotch's
# messages come back in dp_error instead of going to stderr.
dp_add_layer(place
  SOURCES
    src/place/units.c
    src/place/place_common.c
    src/place/place_simple.c
    src/place/place_accel.c
    src/place/place_partition.c
    src/place/place_scotch.c
    src/place/place_metis.c
    src/place/place_list.c
    src/place/place_forward.c
    src/place/place_sct.c
    src/place/group.c
    src/place/group_fluid.c
  BELOW sim graph common
  LIBS ${DPLACE_SCOTCH_LIBRARY} ${DPLACE_SCOTCHERR_LIBRARY} ${DPLACE_METIS_LIBRARY} ${DPLACE_CLP_LIBRARY}
       ${DPLACE_COINUTILS_LIBRARY} Threads::Threads)
# Only the three wrappers see the libraries' headers.
set_source_files_properties(src/place/place_scotch.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_SCOTCH_INCLUDE_DIR})
set_source_files_properties(src/place/place_metis.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_METIS_INCLUDE_DIR})
set_source_files_properties(src/place/place_sct.c PROPERTIES
  INCLUDE_DIRECTORIES ${DPLACE_CLP_INCLUDE_DIR})
