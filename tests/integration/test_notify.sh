#!/usr/bin/env bash
# systemd readiness (Type=notify; issue 34), against a notify socket this test
# owns (notify_listen.py, a datagram listener):
#  1. Started with its ticket servers down: STATUS=starting, then READY=1 with
#     STATUS=mode down, sent only once the text, HTTP and gRPC ports answer
#     (the listener connects to all three the moment READY=1 arrives).
#  2. The pair comes up: STATUS=mode ticket, with no READY=1 of its own.
#  3. SIGHUP: RELOADING=1 (with MONOTONIC_USEC), then READY=1.
#  4. SIGTERM: STOPPING=1.
#  5. An abstract socket (@name): READY=1 arrives there too.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
HTTP=$((SVC_PORT + 1))
GRPC=$((SVC_PORT + 2))
OUT=$T_DIR/notify.out

# listen SOCKET OUT: a notify listener probing the three ports on READY=1.
listen() {
	"$PY" "$ROOT/tests/integration/notify_listen.py" "$1" "$2" "$SVC_PORT" "$HTTP" "$GRPC" &
	PIDS+=("$!")
	wait_for "notify listener on $1" 10 listening "$2"
}
listening() { [ -f "$1" ] && has -x LISTENING "$1"; }
# got PATTERN: the notify log has a line matching the extended regex.
got() { has -E "$1" "$OUT"; }

tok=$(openssl rand -hex 16)
printf 'app:%s\n' "$tok" >"$T_DIR/tokens"
rm -f "$T_DIR/notify.sock" "$OUT"
listen "$T_DIR/notify.sock" "$OUT"
# The pair's password before the pair (dbpair.sh up keeps a db_password it finds).
mkdir -p "$T_DIR/db"
[ -s "$T_DIR/db/db_password" ] || openssl rand -hex 12 >"$T_DIR/db/db_password"
NOTIFY_SOCKET=$T_DIR/notify.sock "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port "$SVC_PORT" --http_port "$HTTP" --grpc_port "$GRPC" \
	--state_file "$T_DIR/svc.state" --auth_tokens_file "$T_DIR/tokens" --db_password_file "$T_DIR/db/db_password" \
	--connect_timeout_ms 200 --reprobe_max_ms 200 --refused_retry_ms 500 >"$T_DIR/svc.log" 2>&1 &
PID=$!
PIDS+=("$PID")

# 1. READY=1 once every port answers; the mode in STATUS=.
wait_for "READY=1" 20 got '(^|\|)READY=1(\||$)'
# The listener writes READY=1's line, then probes the ports, then its PROBE line:
# the probe is read once written, not the moment READY=1's line is.
wait_for "the listener's probe after READY=1" 10 got '^PROBE '
got '^STATUS=starting' || fail "no STATUS=starting before READY=1: $(cat "$OUT")"
ready=$(grep -m1 -E '(^|\|)READY=1(\||$)' "$OUT")
[[ "$ready" =~ STATUS=mode\ down ]] || fail "READY=1 without STATUS=mode down: '$ready'"
probe=$(grep -m1 '^PROBE' "$OUT")
[ "$probe" = "PROBE $SVC_PORT=ok $HTTP=ok $GRPC=ok" ] ||
	fail "a port did not answer when READY=1 arrived: '$probe'"
! has -E '(^|\|)READY=1' <(sed -n '1,/^PROBE/p' "$OUT" | grep -v "^$ready\$") ||
	fail "READY=1 twice at start: $(cat "$OUT")"
log "1. $ready; $probe"

# 2. The pair comes up: the mode moves, STATUS= follows (no READY=1 of its own).
pair_up
wait_for "STATUS=mode ticket" 30 got '^STATUS=mode ticket'
log "2. $(grep -m1 '^STATUS=mode ticket' "$OUT")"

# 3. SIGHUP: RELOADING=1, then READY=1 after it.
n=$(wc -l <"$OUT")
kill -HUP "$PID"
wait_for "READY=1 after RELOADING=1" 10 bash -c "tail -n +$((n + 1)) '$OUT' | grep -A100 -E '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' | grep -qE '^READY=1\|STATUS=mode ticket'"
log "3. SIGHUP: $(tail -n +$((n + 1)) "$OUT" | tr '\n' ' ')"

# 4. SIGTERM: STOPPING=1.
kill -TERM "$PID"
wait_for "STOPPING=1" 10 got '^STOPPING=1\|STATUS=draining'
wait_for "idserver exit" 15 bash -c "! kill -0 $PID 2>/dev/null"
log "4. SIGTERM: $(grep -m1 '^STOPPING=1' "$OUT")"

# 5. An abstract socket name.
ABS=@idgen-test-notify-$SVC_PORT-$$
OUT=$T_DIR/notify-abstract.out
rm -f "$OUT"
listen "$ABS" "$OUT"
NOTIFY_SOCKET=$ABS idserver_start abs "$SVC_PORT" --http_port "$HTTP" --grpc_port "$GRPC"
wait_for "READY=1 on $ABS" 10 got '^READY=1\|STATUS=mode (ticket|fallback|down)'
wait_for "the listener's probe on $ABS" 10 got '^PROBE '
log "5. $ABS: $(grep -m1 '^READY=1' "$OUT"); $(grep -m1 '^PROBE' "$OUT")"
log "ok"
