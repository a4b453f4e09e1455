#!/usr/bin/env bash
# The lease window runs out during an outage (a short window for the test):
# fallback IDs until window_end, then ERR UNAVAILABLE, never an ID past the
# window and never a duplicate; STATS says the lease expired and why the mode is
# down; with a server back the service resumes.
. "$(dirname "$0")/lib.sh"

pair_up
# Small blocks: what the load leaves buffered is used up well inside the 3 s
# window, however slow the build (a sanitizer build on a busy machine drained
# 4 million buffered IDs more slowly than the window ran out).
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = 65536"; done
HTTP_PORT=$((SVC_PORT + 100))
idserver_start svc "$SVC_PORT" --lease_window_ms 3000 --lease_extend_ms 500 --http_port "$HTTP_PORT" \
	--block_size 65536
health() { printf 'GET /health HTTP/1.0\r\n\r\n' | timeout 5 nc -N 127.0.0.1 "$HTTP_PORT" | head -n 1 | cut -d' ' -f2; }
st() { stat "$SVC_PORT" "$1"; }
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
worker=$(st lease_worker)

"$IDBENCH" --port "$SVC_PORT" --connections 8 --pipeline 2 --command 'IDS 100' --duration 9 \
	--allow-errors --dump "$T_DIR/ids.txt" --label window >"$T_DIR/bench.out" 2>&1 & bench=$!
sleep 1
kill -KILL "$(db_pid odd)" "$(db_pid even)"
log "both servers killed; the window (3 s) is no longer extended"
sleep 0.6
end=$(st lease_window_end)
# (IDS 1000: more than the load leaves of the buffered ticket IDs.)
wait_for "ERR UNAVAILABLE once the window is over" 8 bash -c "[ \"\$(printf 'IDS 1000\n' | nc -N 127.0.0.1 $SVC_PORT | cut -d' ' -f1-2)\" = 'ERR UNAVAILABLE' ]"
# What the load left buffered is still served (mode ticket, /health 200 meanwhile);
# once it is used up, the service is down.
used_up() {
	local b
	b=$(st ids_buffered)
	[ "$b" = 0 ] && return 0
	for _ in $(seq "$b"); do echo ID; done | timeout 10 nc -N 127.0.0.1 "$SVC_PORT" >/dev/null
	return 1
}
wait_for "the buffered ticket IDs used up" 10 used_up
[ "$(st mode)" = down ] || fail "mode $(st mode) after the window ran out, want down"
[ "$(health)" = 503 ] || fail "/health says $(health) while down"
# The lease is still ours but over: expired, not held; the reason says so.
[ "$(st lease_state)" = expired ] || fail "lease_state $(st lease_state) after the window ran out, want expired"
reason=$(q "$SVC_PORT" 'STATS\n' | sed -n 's/^STAT mode_reason //p' | tr -d '\r')
[[ "$reason" == "no ticket server up; the Snowflake lease window ended at 20"* ]] || fail "mode_reason '$reason'"
printf 'GET /health HTTP/1.0\r\n\r\n' | timeout 5 nc -N 127.0.0.1 "$HTTP_PORT" | has '"lease":"expired"' ||
	fail "/health does not say the lease expired"
msg=$(q "$SVC_PORT" 'IDS 1000\n')
[[ "$msg" == "ERR UNAVAILABLE no ticket server reachable and no valid Snowflake lease window" ]] ||
	fail "past the window: '$msg'"
wait $bench || fail "idbench: $(tail -n 2 "$T_DIR/bench.out")"
grep -oE 'requests=[0-9]+ ids=[0-9]+|err_UNAVAILABLE=[0-9]+' "$T_DIR/bench.out" | tr '\n' ' ' >&2; echo >&2
unavail=$(grep -oE 'err_UNAVAILABLE=[0-9]+' "$T_DIR/bench.out" | cut -d= -f2)
[ "$unavail" -gt 0 ] || fail "the load never saw ERR UNAVAILABLE"
others=$(grep '^RESULT' "$T_DIR/bench.out" | grep -oE 'err_(CONN|TIMEOUT|BADREQ|RANGE|CLOCK|OTHER|PROTO|BADID)=[0-9]+' | grep -v '=0$' || true)
[ -z "$others" ] || fail "unexpected errors: $others"

# No ID after the window's end; none twice; all Snowflake ones of our worker.
check_unique "$T_DIR/ids.txt" >/dev/null || fail "duplicate IDs"
python3 - "$T_DIR/ids.txt" "$end" "$worker" <<'PY' || fail "a Snowflake ID outside the lease window"
import sys
end, worker, n = int(sys.argv[2]), int(sys.argv[3]), 0
for line in open(sys.argv[1]):
    first, count = map(int, line.split())
    if first < 2**53:
        continue
    for i in (first, first + count - 1):
        if i >> 22 > end or (i >> 12) & 1023 != worker:
            sys.exit("id %d: ts %d > window_end %d or worker %d != %d" % (i, i >> 22, end, (i >> 12) & 1023, worker))
    n += count
if n == 0:
    sys.exit("no Snowflake IDs at all")
print("%d Snowflake IDs, all at or before window_end %d" % (n, end), file=sys.stderr)
PY

# A server returns: tickets again, and a window again.
db_start even
wait_for "ticket mode" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"mode\"{print \$3}')\" = ticket ]"
[ "$(health)" = 200 ] || fail "/health says $(health) after recovery"
id=$(q "$SVC_PORT" 'ID\n')
[[ "$id" =~ ^[0-9]+$ ]] && [ "$id" -lt 9007199254740992 ] || fail "after recovery: '$id'"
wait_for "lease window again" 10 bash -c "[ \$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"lease_window_end\"{print \$3}') -gt $end ]"
log "ok: UNAVAILABLE after the window ($unavail requests), resumed with ticket $id"
