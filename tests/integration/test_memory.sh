#!/usr/bin/env bash
# Memory comes back after a flood (issue 16): 15,000 HTTP keep-alive
# connections, each served one /v1/ids?count=1000, held, then closed. After
# they close, idserver's RSS must be at most its idle RSS plus 1 KB per
# descriptor number used (libevent's descriptor-indexed tables keep their
# size; everything else is given back). The figures go to the log.
. "$(dirname "$0")/lib.sh"
N=${MEMORY_FLOOD_HTTP:-15000}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((N + 200)) ] ||
	fail "the descriptor limit is $(ulimit -n); $N connections need $((N + 200))"
pair_up
HP=$((SVC_PORT + 1))
idserver_start svc "$SVC_PORT" --http_port "$HP" --grpc_port 0 --max_clients $((N + 1000)) \
	--http_timeout_ms 600000
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$svc_PID/status"; }
fds() { ls "/proc/$svc_PID/fd" | wc -l; }

# Warm: every path used once, so the idle figure includes what any request allocates.
for _ in $(seq 20); do curl -s "http://127.0.0.1:$HP/v1/ids?count=1000" >/dev/null; done
q "$SVC_PORT" 'IDS 1000\n' >/dev/null
sleep 1
rss0=$(rss)
python3 "$ROOT/tests/integration/flood.py" http "$N" "$HP" 3 >"$T_DIR/flood.out" 2>&1 &
FLOOD_PID=$!
PIDS+=("$FLOOD_PID")
wait_for "$N HTTP connections" 120 grep -q READY "$T_DIR/flood.out"
peak=$(rss)
maxfd=$(ls "/proc/$svc_PID/fd" | sort -n | tail -n 1)
wait_for "the flood closed" 60 grep -q CLOSED "$T_DIR/flood.out"
wait_for "idserver closed them" 30 bash -c "[ \$(ls /proc/$svc_PID/fd | wc -l) -lt 100 ]"
sleep 2
after=$(rss)
limit=$((rss0 + maxfd))
log "RSS: ${rss0} kB idle, ${peak} kB with $N HTTP connections, ${after} kB after they closed (limit ${limit} kB: idle + 1 kB x $maxfd descriptors)"
log "memory_trims $(stat "$SVC_PORT" memory_trims), memory_trim_us_max $(stat "$SVC_PORT" memory_trim_us_max)"
if [ "$after" -gt "$limit" ]; then
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 } /^Rss:/ && $2 > 500 { print $2 " kB " name }' "/proc/$svc_PID/smaps" >&2
	fail "RSS after the HTTP flood: ${after} kB > ${limit} kB"
fi
# Still serving.
[[ "$(curl -s "http://127.0.0.1:$HP/v1/id")" == *'"id_str"'* ]] || fail "HTTP no longer answers"
log "ok"
