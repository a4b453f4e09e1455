#!/usr/bin/env bash
# fnlen.sh - lists the functions in src/*.c longer than LIMIT lines (issue 17).
#
#   scripts/fnlen.sh [LIMIT]    LIMIT defaults to 80
#
# A function's length is the number of lines after the one that names it, up to
# and including its closing "}" (ctags' end - line; the numbers issue 17 quotes).
# It relies on style(9): the name starts its line, the braces stand alone in
# column 0. Prints "file:line name length" for each function over LIMIT,
# longest first; exits 1 if any.
set -euo pipefail

limit=${1:-80}
case $limit in
''|*[!0-9]*) echo "usage: fnlen.sh [LIMIT]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

over=$(awk -v limit="$limit" '
	FNR == 1 { name = ""; start = 0 }
	/^[A-Za-z_][A-Za-z0-9_]*\(/ {
		name = $0; sub(/\(.*/, "", name); decl = FNR; next
	}
	/^\{/ && name != "" { start = FNR; next }
	/^\}/ && start > 0 {
		len = FNR - decl
		if (len > limit)
			printf "%d %s:%d %s %d\n", len, FILENAME, decl, name, len
		name = ""; start = 0
	}
' src/*.c | sort -rn | cut -d' ' -f2-)
if [ -n "$over" ]; then
	echo "$over"
	exit 1
fi
