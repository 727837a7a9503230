#!/usr/bin/env bash
# Installs the Debian packages dplace needs (when run as root; otherwise it
# prints the exact apt-get command) and builds it into build/.
# usage: scripts/setup.sh [--sanitize]   (--sanitize: ASan+UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libjansson-dev libopenblas-dev libscotch-dev libmetis-dev coinor-libclp-dev clang
          python3-torch python3-torchvision libopenmpi-dev openmpi-bin
          python3-dev python3-numpy python3-pytest python3-hypothesis python3-pip python3-setuptools python3-wheel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "setup: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

dir=build
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DDPLACE_SANITIZE=ON)
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j2 >&2
echo "setup: built $dir/dplace" >&2
