#!/usr/bin/env bash
# A restart with the clock an hour behind during an outage (issue 16): both
# ticket servers dead, idserver SIGKILLed and restarted under libfaketime 1 h
# back resumes its lease window from the state file, but the window's floor is
# an hour ahead of its clock. Every request is answered at once with ERR CLOCK
# naming how far behind (none hangs waiting for the clock); STATS mode is down
# with mode_reason saying why, and /health is 503 saying the same. With the
# servers back, tickets are served; the row is not re-adopted with the skewed
# clock, and no other number is claimed with it. Every ID of every process
# collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
HTTP_PORT=$((SVC_PORT + 100))
FLAGS=(--lease_window_ms 60000 --lease_extend_ms 500 --reprobe_max_ms 300 --http_port "$HTTP_PORT")
BEHIND=$(faketime_env FAKETIME=-3600s)
st() { stat "$SVC_PORT" "$1"; }
held() { [ "$(st lease_state)" = held ]; }
ticket_mode() { [ "$(st mode)" = ticket ] && [ "$(st odd_state)" = up ] && [ "$(st even_state)" = up ]; }
health() { curl -s -o "$T_DIR/health" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/health"; }

# ask: sends the request lines on stdin (ID, IDS n, BLOCK n) at once, bounded by
# 10 s; every ID replied goes into $IDS as "first count" ranges. Prints one
# word per reply (ok or the ERR code), then the elapsed ms; a reply missing
# (a request left hanging) prints "missing".
ask() {
	local t0 t1
	cat >"$T_DIR/requests"
	t0=$(date +%s%3N)
	timeout 10 nc -N 127.0.0.1 "$SVC_PORT" <"$T_DIR/requests" >"$T_DIR/replies" || true
	t1=$(date +%s%3N)
	python3 - "$IDS" "$T_DIR/replies" "$((t1 - t0))" "$T_DIR/requests" <<'PY'
import sys
out, replies, ms = open(sys.argv[1], "a"), open(sys.argv[2]).read().splitlines(), sys.argv[3]
reqs = open(sys.argv[4]).read().splitlines()
words = []
for i, req in enumerate(reqs):
    if i >= len(replies):
        words.append("missing")
        continue
    w = replies[i].split()
    if w[0] == "ERR":
        words.append(w[1])
        continue
    if req.startswith("BLOCK"):
        out.write("%d %d\n" % (int(w[0]), int(w[1])))
    else:
        for x in w:
            out.write("%d 1\n" % int(x))
    words.append("ok")
print(" ".join(words), ms)
PY
}
# many N LINE: the line N times (one connection, pipelined).
many() { local i; for i in $(seq "$1"); do echo "$2"; done; }

# 1. A lease, tickets, then the outage: fallback IDs from the lease.
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
wait_for "a lease" 10 held
wait_buffered "$SVC_PORT"
w=$(st lease_worker)
srv=$([ $((w % 2)) = 1 ] && echo odd || echo even)
read -r -a r <<<"$(many 20 'IDS 1000' | ask)"
[[ "${r[*]}" != *[A-Z]* ]] || fail "tickets: ${r[*]}"
holder=$(db_sql "$srv" "SELECT holder FROM idgen.idgen_leases WHERE worker = $w")
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
b=$(st ids_buffered)
many $((b / 4096)) 'BLOCK 4096' | ask >/dev/null
many $((b % 4096)) ID | ask >/dev/null
[ "$(st ids_buffered)" = 0 ] || fail "ticket IDs still buffered: $(st ids_buffered)"
out=$({ many 50 'IDS 1000'; echo 'BLOCK 4096'; } | ask)
[[ "$out" != *[A-Z]* ]] || fail "fallback before the restart: $out"
[ "$(st mode)" = fallback ] || fail "mode $(st mode) in the outage, want fallback"
# The window_end the database acknowledged last (an extend whose reply was lost
# may have put the row up to one extend further).
end_before=$(st lease_window_end)
log "worker $w (the $srv server's) served the outage; window_end $end_before"

# 2. SIGKILL, restarted with the clock 1 h behind: the lease is resumed, but
# its floor is an hour ahead of the clock. Every request answered at once.
kill -KILL "$svc_PID"
wait "$svc_PID" 2>/dev/null || true
IDSERVER_WRAP=$BEHIND idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
grep -q "lease resumed from the state file: worker $w " "$T_DIR/svc.log" ||
	fail "no resumption: $(grep -m2 'state file' "$T_DIR/svc.log")"
read -r -a r <<<"$(printf '%s\n' ID 'BLOCK 4096' 'IDS 1000' ID 'BLOCK 1' 'IDS 1' | ask)"
ms=${r[-1]}
unset 'r[-1]'
[[ "${r[*]}" != *missing* ]] || fail "requests left hanging with the clock 1 h behind: ${r[*]} after $ms ms"
[ "$ms" -lt 3000 ] || fail "6 requests took $ms ms with the clock 1 h behind"
[ "${r[1]}" = CLOCK ] && [ "${r[4]}" = CLOCK ] || fail "clock 1 h behind: ${r[*]}, want ERR CLOCK"
for x in "${r[@]}"; do [ "$x" = ok ] || [ "$x" = CLOCK ] || fail "clock 1 h behind: ${r[*]}"; done
msg=$(q "$SVC_PORT" 'BLOCK 4096\n')
[[ "$msg" =~ ^"ERR CLOCK clock behind the Snowflake lease's floor by "(3[56][0-9]{5})" ms" ]] ||
	fail "the refusal does not say how far behind: '$msg'"
log "clock 1 h behind: ${r[*]} in $ms ms ('${msg:0:72}...')"

# A load of every kind for 2 s: no request waits, every one is answered.
"$IDBENCH" --port "$SVC_PORT" --connections 4 --pipeline 8 --command MIX --duration 2 \
	--allow-errors --dump "$T_DIR/bench-ids.txt" --label behind >"$T_DIR/bench.out" 2>&1 ||
	fail "idbench: $(tail -n 2 "$T_DIR/bench.out")"
log "load of ID/IDS/BLOCK for 2 s: $(grep -oE 'err_CLOCK=[0-9]+' "$T_DIR/bench.out" | head -n 1), nothing else"
others=$(grep '^RESULT' "$T_DIR/bench.out" | grep -oE 'err_(CONN|TIMEOUT|UNAVAILABLE|BADREQ|RANGE|OTHER|PROTO|BADID)=[0-9]+' | grep -v '=0$' || true)
[ -z "$others" ] || fail "under load with the clock 1 h behind: $others"
[ -s "$T_DIR/bench-ids.txt" ] && cat "$T_DIR/bench-ids.txt" >>"$IDS"

# mode and /health say why.
[ "$(st mode)" = down ] || fail "mode $(st mode), want down"
reason=$(q "$SVC_PORT" 'STATS\n' | sed -n 's/^STAT mode_reason //p' | tr -d '\r')
[[ "$reason" == "no ticket server up; clock behind the Snowflake lease's floor by "*" ms (clock_wait_ms=1000)" ]] ||
	fail "mode_reason '$reason'"
[ "$(health)" = 503 ] && grep -q '"mode_reason":"no ticket server up; clock behind the Snowflake' "$T_DIR/health" ||
	fail "/health: $(cat "$T_DIR/health")"
code=$(curl -s -o "$T_DIR/body" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/v1/id")
[ "$code" = 503 ] && grep -q '"code":"CLOCK"' "$T_DIR/body" || fail "/v1/id: $code $(cat "$T_DIR/body")"
log "mode down: $reason; /health 503"

# 3. The servers return: tickets at once. The skewed clock neither re-adopts
# nor moves the row, and claims no other number (skew refused).
db_start odd
db_start even
wait_for "ticket mode" 20 ticket_mode
out=$({ many 20 'IDS 1000'; many 20 'BLOCK 4096'; } | ask)
[[ "$out" != *[A-Z]* ]] || fail "tickets with the clock 1 h behind: $out"
sleep 2		# four lease ticks
read -r end_now holder_now <<<"$(db_sql "$srv" "SELECT window_end, holder FROM idgen.idgen_leases WHERE worker = $w")"
[ "$end_now" -ge "$end_before" ] && [ "$end_now" -le $((end_before + 1000)) ] ||
	fail "worker $w's window_end moved from $end_before to $end_now with the clock 1 h behind"
[ "$holder_now" = "$holder" ] && [ "$(st lease_adopted)" = 0 ] ||
	fail "the lease was re-adopted with the clock 1 h behind ($holder -> $holder_now)"
# ERR CLOCK asked for a fresh number; its claim is refused for the skew.
[ "$(st lease_skew_refusals)" -ge 1 ] || fail "no skew refusal counted"
grep -qE "lease REFUSED: local clock is -3[56][0-9]{5} ms off" "$T_DIR/svc.log" ||
	fail "no skew refusal logged: $(grep -m3 'lease' "$T_DIR/svc.log" | tail -n 1)"
log "servers back: tickets served; worker $w's row untouched (window_end $end_now)"

# 4. Stopped, restarted with a true clock: a lease again, tickets, then an
# outage served by the fallback. Every ID of the three processes is unique.
kill -TERM "$svc_PID"
wait_for "svc gone" 10 bash -c "! kill -0 $svc_PID 2>/dev/null"
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
wait_for "a lease" 10 held
wait_buffered "$SVC_PORT"
out=$(many 20 'IDS 1000' | ask)
[[ "$out" != *[A-Z]* ]] || fail "tickets after the restart: $out"
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
b=$(st ids_buffered)
many $((b / 4096)) 'BLOCK 4096' | ask >/dev/null
many $((b % 4096)) ID | ask >/dev/null
out=$({ many 50 'IDS 1000'; echo 'BLOCK 4096'; } | ask)
[[ "$out" != *[A-Z]* ]] || fail "fallback after the restart: $out"
n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the restarts"
log "ok: $n IDs across three processes, no duplicate"
