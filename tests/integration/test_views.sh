#!/usr/bin/env bash
# Reading is not an event (issue 17): the mode moves on events and on time (a
# timer at the lease window's end), and reading STATS, /health and /metrics
# 10,000 times changes no state and logs nothing.
#  1. Both ticket servers killed and the pool drained: fallback. Nobody reads
#     anything; the window ends (lease_window_ms 3000); the mode must turn
#     down by itself, one log line, within a second of the window's end.
#  2. STATS x 10,000 (text), /health x 10,000 and /metrics x 1,000 (HTTP
#     keep-alive): no new log line, mode_changes unchanged.
. "$(dirname "$0")/lib.sh"

pair_up
HP=$((SVC_PORT + 1))
idserver_start svc "$SVC_PORT" --http_port "$HP" --grpc_port 0 --lease_window_ms 3000 \
	--lease_extend_ms 500 --reprobe_min_ms 60000 --reprobe_max_ms 60000
wait_for "a lease" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"lease_state\"{print \$3}')\" = held ]"
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
[[ "$(q "$SVC_PORT" 'ID\n')" =~ ^[0-9]+$ ]] || fail "no fallback ID"
end_ms=$(stat "$SVC_PORT" lease_window_end)
# From here, no read until the mode has turned down by itself.
start=$(date +%s%N)
wait_for "the window's end logged without a read" 10 grep -q 'mode fallback -> down: no ticket server up; the Snowflake lease window ended' "$T_DIR/svc.log"
took=$((($(date +%s%N) - start) / 1000000))
log "1. fallback -> down by itself, ${took} ms after the last read (window end $end_ms)"

lines=$(wc -l <"$T_DIR/svc.log")
changes=$(stat "$SVC_PORT" mode_changes)
for _ in $(seq 10000); do echo STATS; done | timeout 60 nc -N 127.0.0.1 "$SVC_PORT" | grep -c '^END' | has -x 10000 ||
	fail "10,000 STATS not all answered"
/usr/bin/python3 - "$HP" <<'PY' || fail "HTTP reads"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
for path, n in (("/health", 10000), ("/metrics", 1000), ("/stats", 1000)):
    for _ in range(n):
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert r.status in (200, 503), (path, r.status)
PY
[ "$(wc -l <"$T_DIR/svc.log")" = "$lines" ] || fail "reading logged: $(tail -n +$((lines + 1)) "$T_DIR/svc.log" | head -n 3)"
[ "$(stat "$SVC_PORT" mode_changes)" = "$changes" ] || fail "reading changed the mode"
[ "$(stat "$SVC_PORT" mode)" = down ] || fail "mode is $(stat "$SVC_PORT" mode), want down"
log "2. 10,000 STATS, 10,000 /health, 1,000 /metrics, 1,000 /stats: no log line, mode_changes $changes"
log "ok"
