#!/usr/bin/env bash
# reqfiles.sh - the source files one request passes through (ARCHITECTURE.md's
# "path of one request"; issue 33's figure): a throwaway pair, idserver under
# callgrind with instrumentation off, its first blocks buffered, then it on
# for N `ID` requests on the text port (one connection, pipelined) and off
# again; costs are counted only inside the text port's read, write and resume
# callbacks (conn.c), so timers and ticket fetches that merely run meanwhile do not
# count. Prints each src/ file with instructions executed there, then
# their count. Needs valgrind; ports PORT..PORT+2 (default 7242, pair 7307/7308).
#
#   scripts/reqfiles.sh [N] [COMMAND]     e.g. scripts/reqfiles.sh 100 'IDS 10'
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}
CMD=${2:-ID}
P=${REQFILES_PORT:-7242}
ODD=${REQFILES_ODD:-7307}
D=$(mktemp -d /tmp/reqfiles.XXXXXX)
trap 'kill "${pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; scripts/dbpair.sh down "$D/db" >/dev/null; rm -rf "$D"' EXIT
scripts/dbpair.sh up "$D/db" "$ODD" $((ODD + 1)) >/dev/null
IDGEN_DB_PASSWORD=$(cat "$D/db/db_password") valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
	--toggle-collect=conn_read_cb --toggle-collect=conn_write_cb --toggle-collect=conn_resume_cb \
	--callgrind-out-file="$D/cg.out" build/idserver --odd_port "$ODD" --even_port $((ODD + 1)) \
	--listen_port "$P" --state_file "$D/idserver.state" >"$D/log" 2>&1 &
pid=$!
for _ in $(seq 600); do
	b=$(printf 'STATS\n' | timeout 2 nc -N 127.0.0.1 "$P" 2>/dev/null | awk '$2 == "ids_buffered" { print $3 }') || true
	[ "${b:-0}" -gt 0 ] && break
	sleep 0.1
done
[ "${b:-0}" -gt 0 ] || { echo "reqfiles: no block buffered; log:" >&2; tail -n 5 "$D/log" >&2; exit 1; }
callgrind_control -i on "$pid" >/dev/null
for _ in $(seq "$N"); do printf '%s\n' "$CMD"; done | timeout 60 nc -N 127.0.0.1 "$P" | grep -c '^ERR' >"$D/errs" || true
callgrind_control -i off "$pid" >/dev/null
kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
[ "$(cat "$D/errs")" = 0 ] || { echo "reqfiles: $(cat "$D/errs") of $N answers were errors" >&2; exit 1; }
callgrind_annotate --inclusive=no --threshold=100 "$D"/cg.out* 2>/dev/null |
	{ grep -oE "/src/[a-z_0-9]+\.[ch]:" || true; } | sort -u | sed "s/:\$//; s|.*/src/|src/|" >"$D/files"
cat "$D/files"
echo "$(wc -l <"$D/files") src/ files for $N x '$CMD'"
