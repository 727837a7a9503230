#!/bin/sh
# Lists the functions in src/ and bench/ longer than MAX lines (from the line
# where the function's declaration starts to its closing brace) and fails
# when there is one. Exit status: 0 none; 1 some.
# usage: scripts/check-functions.sh [DIR...]   (default: src/ and bench/ beside
# scripts/; each DIR a folder of the repository)
#
# The scan is a brace-depth count over each .c and .h file that ignores
# braces in comments, strings, character literals and preprocessor lines: a
# '{' at file level right after a ')' opens a function body.

MAX=120

set -u
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root/src" "$root/bench"
cd "$root" || exit 2
dirs=""
for d in "$@"; do
    [ -d "$d" ] || { echo "check-functions: no directory $d" >&2; exit 2; }
    d=$(cd "$d" && pwd)
    case $d in
    "$root"/*) dirs="$dirs ${d#"$root"/}" ;;
    *) echo "check-functions: $d is not a folder of $root" >&2; exit 2 ;;
    esac
done
files=$(find $dirs -name '*.[ch]' | LC_ALL=C sort)

long=$(awk -v max="$MAX" '
FNR == 1 { depth = 0; pdepth = 0; comment = 0; pp = 0; start = 0; fn = ""; name = ""; tok = ""; prev = ""; last = "" }
{
    line = $0
    if (!comment && (pp || line ~ /^[ \t]*#/)) { pp = line ~ /\\$/; next }
    n = length(line)
    for (i = 1; i <= n; i++) {
        c = substr(line, i, 1)
        if (comment) {
            if (c == "*" && substr(line, i + 1, 1) == "/") { comment = 0; i++ }
            continue
        }
        if (c == "/" && substr(line, i + 1, 1) == "*") { comment = 1; i++; continue }
        if (c == "/" && substr(line, i + 1, 1) == "/") break
        if (c == "\"" || c == "\047") { # a literal: skip to its closing quote
            for (i++; i <= n && substr(line, i, 1) != c; i++) if (substr(line, i, 1) == "\\") i++
            last = c; tok = ""
            continue
        }
        if (c == " " || c == "\t") { if (tok != "") { prev = tok; tok = "" } continue }
        if (depth > 0) {
            if (c == "{") depth++
            else if (c == "}" && --depth == 0) {
                if (fn != "" && FNR - start + 1 > max) printf "%d %s:%d: %s\n", FNR - start + 1, FILENAME, start, fn
                fn = ""; start = 0; name = ""; tok = ""; prev = ""; last = ""
            }
            continue
        }
        if (start == 0) start = FNR
        if (c ~ /[A-Za-z0-9_]/) { tok = tok c; last = c; continue }
        if (tok != "") { prev = tok; tok = "" }
        if (c == "(") { if (pdepth++ == 0 && name == "") name = prev }
        else if (c == ")") pdepth--
        else if (c == ";") { start = 0; name = ""; prev = "" }
        else if (c == "{") { fn = last == ")" ? name : ""; depth = 1; pdepth = 0; if (fn == "") start = FNR }
        last = c
    }
}' $files | sort -k1,1nr -k2)

status=0 # 1: a long function
while read -r lines where fn; do
    [ -n "$lines" ] || continue
    echo "$where $fn: $lines lines (over $MAX)"
    status=1
done <<EOF
$long
EOF
case $status in
0) echo "check-functions: no function in$dirs over $MAX lines" ;;
1) echo "check-functions: functions over $MAX lines in$dirs: split them along their phases" >&2 ;;
esac
exit $status
