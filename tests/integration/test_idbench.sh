#!/usr/bin/env bash
# The benchmark's own check must be able to fail: idbench against a server that
# repeats an ID now and then reports the duplicates and exits 1; against an
# honest one it passes. (No MariaDB needed.)
. "$(dirname "$0")/lib.sh"

NULLSERVER=$BUILD/nullserver
PORT=$((SVC_PORT + 50))

start_null() {
	"$NULLSERVER" --port "$PORT" --fake-idgen "$@" >"$T_DIR/null.log" 2>&1 &
	PIDS+=($!)
	wait_for "nullserver" 5 bash -c "[ \"\$(printf 'PING\n' | nc -N 127.0.0.1 $PORT 2>/dev/null)\" = PONG ]"
}
stop_null() { kill -TERM "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true; }

start_null
for cmd in ID 'IDS 1000' 'BLOCK 4096' MIX; do
	"$IDBENCH" --port "$PORT" --connections 8 --pipeline 8 --command "$cmd" --requests 20000 \
		>"$T_DIR/ok.out" 2>&1 || fail "honest server, $cmd: $(tail -n 1 "$T_DIR/ok.out")"
	grep -q ' duplicates=0 .*verified=yes' "$T_DIR/ok.out" || fail "honest server, $cmd: not verified"
done
stop_null

start_null --repeat-every 1000
for cmd in ID 'IDS 10' 'BLOCK 100'; do
	rc=0
	"$IDBENCH" --port "$PORT" --connections 4 --pipeline 4 --command "$cmd" --requests 20000 \
		>"$T_DIR/dup.out" 2>&1 || rc=$?
	[ $rc = 1 ] || fail "repeating server, $cmd: idbench exit $rc, want 1"
	d=$(grep -oE ' duplicates=[0-9]+' "$T_DIR/dup.out" | cut -d= -f2)
	[ "${d:-0}" -gt 0 ] || fail "repeating server, $cmd: no duplicates reported"
	log "repeating server, $cmd: $d duplicates caught"
done
stop_null
log "ok"
