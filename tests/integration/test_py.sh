#!/usr/bin/env bash
# Python clients, as docs/clients.md shows them (tests/py/redis_ids.py and
# grpc_ids.py, quoted there verbatim): redis-py (a pipeline is MULTI/EXEC) and
# grpcio with stubs generated from proto/idgen.proto, on Debian's Python. In
# ticket mode, then in fallback (both MariaDB servers killed after the lease is
# held, the buffered ticket IDs drained): every ID an exact int of the mode's
# region, no duplicate across both clients and both modes.
. "$(dirname "$0")/lib.sh"

PY=$ROOT/tests/py
ROUNDS=10
for f in redis_ids.py grpc_ids.py; do
	python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
		"$PY/$f" "$ROOT/docs/clients.md" || fail "docs/clients.md does not quote tests/py/$f verbatim"
done
pair_up
grpc_stubs
GP=$((SVC_PORT + 2))
idserver_start svc "$SVC_PORT" --grpc_port "$GP" --lease_extend_ms 1000
IDS=$T_DIR/ids.txt
: >"$IDS"
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
wait_buffered "$SVC_PORT"
py() {
	timeout 120 /usr/bin/python3 "$PY/check.py" "$1" 127.0.0.1 "$SVC_PORT" "$GP" "$ROUNDS" \
		"$IDS" "$T_DIR/py" >"$T_DIR/py-$1.out" 2>&1 || fail "$1: $(tail -n 5 "$T_DIR/py-$1.out")"
	while read -r line; do log "$line"; done <"$T_DIR/py-$1.out"
}
py ticket
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
py fallback
[ "$(stat "$SVC_PORT" mode)" = fallback ] || fail "not in fallback mode: $(stat "$SVC_PORT" mode)"
n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the Python clients"
want=$((2 * ROUNDS * (1002 + 100 + 1001)))
[ "$n" -eq "$want" ] || fail "$n IDs collected, expected $want"
log "ok: $n IDs through redis-py and grpcio in both modes, exact, no duplicate"
