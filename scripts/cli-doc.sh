#!/usr/bin/env bash
# Writes docs/cli.md, the command-line reference, from the dplace program's
# own help texts (dplace --help, every command's --help, and optimize's
# settings by group), so the reference is the help and never drifts from
# it. With --check it writes nothing and fails, naming the command to run,
# when docs/cli.md is not what the program prints (CTest check_cli_doc).
# usage: scripts/cli-doc.sh [--check] [DPLACE]   (default DPLACE: build/dplace)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
D=${1:-build/dplace}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
{
  echo "# Command-line reference"
  echo
  echo "What \`dplace\` and each of its commands print for \`--help\`, and the"
  echo "settings of \`dplace optimize\` by component group (\`--set help=all\`;"
  echo "the search's with \`--agent search --set help\`). This page is written"
  echo "by scripts/cli-doc.sh from the program itself; the test check_cli_doc"
  echo "fails when it is out of date. What the settings mean in depth:"
  echo "docs/agents.md and docs/search.md."
  echo
  echo "## dplace"
  echo
  echo '```'
  "$D" --help
  echo '```'
  for c in simulate devices zoo baseline group import optimize calibrate; do
    echo
    echo "## dplace $c"
    echo
    echo '```'
    "$D" "$c" --help
    echo '```'
  done
  echo
  echo "## dplace optimize: the settings of a learned agent"
  echo
  echo '```'
  "$D" optimize --agent dplace --set help=all
  echo '```'
  echo
  echo "## dplace optimize: the settings of the search"
  echo
  echo '```'
  "$D" optimize --agent search --set help
  echo '```'
} >"$out"
if [ $check = 1 ]; then
  if ! cmp -s "$out" docs/cli.md; then
    echo "cli-doc: docs/cli.md is not what $D prints; run scripts/cli-doc.sh" >&2
    diff "$out" docs/cli.md | head -20 >&2 || true
    exit 1
  fi
  echo "cli-doc: docs/cli.md is current"
  exit 0
fi
cp "$out" docs/cli.md
echo "cli-doc: wrote docs/cli.md ($(wc -l <docs/cli.md) lines)" >&2
