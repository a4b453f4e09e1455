#!/usr/bin/env bash
# gen-settings.sh - writes what describes the settings from the one table that
# defines them (src/config.c, printed by `idserver --dump-settings FORMAT`):
# idserver.conf (the sample `make run` loads), the settings in man/idserver.8
# and the settings reference in docs/operations.md (between their "settings:
# begin"/"settings: end" markers). `idserver --help` prints the same table.
#
#   gen-settings.sh           rewrite the three files (run after editing the table)
#   gen-settings.sh --check   write them aside and diff: exit 1 when a file differs
#                             (test_config runs this, so they cannot drift)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
IDSERVER=$BUILD/idserver
check=0
[ "${1:-}" = --check ] && check=1
[ -x "$IDSERVER" ] || { echo "gen-settings: no $IDSERVER (make all first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The sample: the local pair of `make run` (scripts/run.sh, dbpair.sh: var/),
# every port of the quick start on, and B set as every deployment should.
{
	printf '; The sample configuration: the local pair of `make run` (HTTP and gRPC on,\n'
	printf '; data under var/). Written by scripts/gen-settings.sh: edit src/config.c.\n'
	"$IDSERVER" --dump-settings conf --http_port 4243 --grpc_port 4244 \
		--db_password_file var/db_password --state_file var/idserver.state \
		--block_size 1048576
} >"$out/idserver.conf"
"$IDSERVER" --dump-settings man >"$out/man"
"$IDSERVER" --dump-settings md >"$out/md"

# splice FILE BEGIN END GENERATED: FILE with the lines between the marker lines
# (which contain BEGIN and END) replaced by GENERATED.
splice() {
	python3 - "$@" <<'PY'
import sys
path, begin, end, gen = sys.argv[1:]
lines = open(path).read().split("\n")
b = [i for i, l in enumerate(lines) if begin in l]
e = [i for i, l in enumerate(lines) if end in l]
if len(b) != 1 or len(e) != 1 or e[0] < b[0]:
    sys.exit("gen-settings: %s: want one '%s' line before one '%s' line" % (path, begin, end))
body = open(gen).read().rstrip("\n").split("\n")
sys.stdout.write("\n".join(lines[:b[0] + 1] + body + lines[e[0]:]))
PY
}
splice man/idserver.8 'settings: begin' 'settings: end' "$out/man" >"$out/idserver.8"
splice docs/operations.md 'settings: begin' 'settings: end' "$out/md" >"$out/operations.md"

rc=0
for f in idserver.conf man/idserver.8 docs/operations.md; do
	new=$out/$(basename "$f")
	if [ $check = 1 ]; then
		diff -u "$f" "$new" >&2 || { echo "gen-settings: $f differs from src/config.c's table: run scripts/gen-settings.sh" >&2; rc=1; }
	elif ! cmp -s "$f" "$new"; then
		cp "$new" "$f"
		echo "gen-settings: wrote $f"
	fi
done
exit $rc
