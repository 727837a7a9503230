#!/usr/bin/env bash
# The layer rule at the source level (docs/architecture.md, "Layers"): every
# `#include "..."` of a file under src/ names a header of its own layer or of
# one below it, as the libraries are linked (src/*/*.cmake, dp_add_layer's
# BELOW); a header under src/MODULE/ other than src/common/ is private to
# MODULE; and every src/*/*.c is listed in a CMake fragment. Prints each
# breach as FILE:LINE: the include and why; exit status 1 when there is one.
# usage: scripts/check-layers.sh   (from anywhere; CTest runs it as check_layers)
set -euo pipefail
cd "$(dirname "$0")/.."

# The layer of each module (a folder under src/).
declare -A layer_of=(
  [common]=common
  [graph]=graph [devices]=graph
  [sim]=sim
  [import]=import
  [nn]=nn
  [place]=place
  [zoo]=zoo
  [run]=run
  [calib]=calib
  [search]=search
  [agent]=agent
  [optimize]=optimize
  [dist]=dist
  [cli]=cli
)

# The layer of each public header include/dplace/NAME.h.
declare -A header_layer=(
  [common]=common
  [graph]=graph [devices]=graph
  [placement]=sim [cost]=sim [sim]=sim
  [import]=import
  [nn]=nn [nn_check]=nn [nn_models]=nn [nn_mars]=nn [nn_txl]=nn
  [units]=place [place]=place [group]=place
  [zoo]=zoo
  [run]=run [plot]=run [settings]=run [reference]=run
  [calib]=calib
  [search]=search
  [agent]=agent [agent_config]=agent [measure]=agent [pretrained]=agent
  [optimize]=optimize [settings_job]=optimize
  [dist]=dist
)

# The layers each layer may include: itself and those it links (keep in step
# with the BELOW lists of src/*/*.cmake).
declare -A may_use=(
  [common]="common"
  [graph]="graph common"
  [sim]="sim graph common"
  [import]="import graph common"
  [nn]="nn common"
  [place]="place sim graph common"
  [zoo]="zoo sim graph common"
  [run]="run place sim graph common"
  [calib]="calib run place sim graph common"
  [search]="search run place sim graph common"
  [agent]="agent run place nn sim graph common"
  [dist]="dist agent search run place nn sim graph common"
  [optimize]="optimize agent search run place nn sim graph common"
  [cli]="cli optimize dist agent search calib run place nn zoo import sim graph common"
)

breaches=0
breach() { # WHERE MESSAGE
  echo "$1: $2"
  breaches=$((breaches + 1))
}

for h in include/dplace/*.h; do
  name=${h##*/}; name=${name%.h}
  [ -n "${header_layer[$name]:-}" ] || breach "$h" "a public header in no layer (add it to scripts/check-layers.sh)"
done

for d in src/*/; do
  module=${d#src/}; module=${module%/}
  [ -n "${layer_of[$module]:-}" ] || breach "$d" "module src/$module is in no layer (add it to scripts/check-layers.sh)"
done

# every include line of src/, as FILE:LINE:#include "HEADER"
while IFS=: read -r f line text; do
  inc=${text#*\"}; inc=${inc%%\"*}
  module=${f#src/}; module=${module%%/*}
  layer=${layer_of[$module]:-}
  [ -n "$layer" ] || continue
  at="$f:$line: #include \"$inc\""
  case $inc in
    dplace/*.h) # a public header
      name=${inc#dplace/}; name=${name%.h}
      owner=""
      target=${header_layer[$name]:-}
      ;;
    */*) # a header of src/OWNER
      owner=${inc%%/*}
      target=${layer_of[$owner]:-}
      ;;
    *) # a header beside the file
      [ -e "${f%/*}/$inc" ] || breach "$at" "no such header in ${f%/*}"
      continue
      ;;
  esac
  if [ -z "$target" ]; then
    breach "$at" "a header of no layer"
  elif [[ " ${may_use[$layer]} " != *" $target "* ]]; then
    breach "$at" "layer $layer (src/$module) may not use layer $target"
  elif [ -n "$owner" ] && [ "$owner" != "$module" ] && [ "$owner" != common ]; then
    breach "$at" "a header private to src/$owner"
  fi
done < <(grep -H -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src/*/*.[ch])

# every C file is in a layer's list
listed=" $(cat src/*/*.cmake | tr -s '()\t\n' '    ') "
for f in src/*/*.c; do
  [[ $listed == *" $f "* ]] || breach "$f" "in no layer's source list (src/*/*.cmake)"
done

if [ "$breaches" -gt 0 ]; then
  echo "check-layers: $breaches breach(es) of the layer rule (docs/architecture.md, \"Layers\")" >&2
  exit 1
fi
echo "check-layers: every include of src/ keeps to the layers"
