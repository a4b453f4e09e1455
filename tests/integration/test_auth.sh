#!/usr/bin/env bash
# Tokens (auth_tokens_file) with real clients on every protocol: redis-cli
# (right, wrong, missing, --user/--pass, --user default), ioredis (password only,
# username default), HELLO 3 AUTH default, redis-py, netcat's text AUTH, curl
# with and without Bearer, grpcio with authorization metadata, libidgen through
# the idgen command (IDGEN_TOKEN, --token-file), gRPC reflection (a token needed;
# from an address being slowed down, refused unread). A read-only token is refused
# IDs and allowed STATS; a token removed from the file and SIGHUP stops working
# on a connection that stays open, also when the same edit adds a malformed line
# (left out, named, shown in STATS, /health and /metrics); failures are counted in STATS and /metrics,
# and an address that keeps failing is answered later, not sooner. /metrics and
# /health behind a token (auth_open_metrics=0); a bad file refuses the start;
# no token in any log. Every ID handed out is collected: none twice.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
IDGEN=$BUILD/idgen
GP=$((SVC_PORT + 1))
HP=$((SVC_PORT + 2))
S2=$((SVC_PORT + 3))
HP2=$((SVC_PORT + 4))
GP2=$((SVC_PORT + 5))
DELAY_MS=400
TOKA=alice-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKR=reader-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKB=bare-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKL=limited-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
WRONG=wrong-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKENS=$T_DIR/tokens
IDS=$T_DIR/ids.txt	# "first count" ranges, for check_unique
: >"$IDS"
cat >"$TOKENS" <<EOF
# test tokens: name:token[:ro|rw,ns=NAME...]
alice:$TOKA
reader:$TOKR:ro
limited:$TOKL:rw,ns=default

$TOKB
EOF
grpc_stubs

# qa PORT TOKEN LINES: the text protocol after AUTH TOKEN (its OK line dropped).
qa() { local p=$1 t=$2; shift 2; q "$p" "AUTH $t\\n$*" | sed 1d; }
astat() { qa "$1" "$TOKR" 'STATS\n' | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'; }
ids_in() { tr ' ' '\n' | grep -E '^[0-9]+$' | awk '{ print $1, 1 }' >>"$IDS"; }

# start NAME PORT [flags]: as idserver_start, its probe authenticated.
start() {
	local name=$1 port=$2 pid
	shift 2
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$port" --state_file "$T_DIR/$name.state" \
		--auth_tokens_file "$TOKENS" --auth_fail_delay_ms "$DELAY_MS" "$@" \
		>"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "${name}_PID=$pid"
	for _ in $(seq 1 100); do
		[ "$(qa "$port" "$TOKA" 'PING\n' 2>/dev/null)" = PONG ] && return 0
		alive "$pid" || fail "$name exited at start: $(tail -n 3 "$T_DIR/$name.log")"
		sleep 0.1
	done
	fail "$name did not answer an authenticated PING on port $port"
}

pair_up
log "a bad token file refuses the start (exit 2, the line named, no token shown)"
printf 'ok:%s\nbad name:%s\n' "$TOKA" "$TOKB" >"$T_DIR/bad_tokens"
rc=0
"$IDSERVER" --auth_tokens_file "$T_DIR/bad_tokens" --listen_port "$SVC_PORT" \
	>"$T_DIR/bad.log" 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "bad token file: exit $rc, want 2"
grep -q 'line 2' "$T_DIR/bad.log" || fail "bad token file: line not named: $(cat "$T_DIR/bad.log")"
! grep -qF -e "$TOKA" -e "$TOKB" "$T_DIR/bad.log" || fail "a token in the refusal"

start svc "$SVC_PORT" --grpc_port "$GP" --http_port "$HP"
grep -q 'authentication on: 4 tokens (1 read-only)' "$T_DIR/svc.log" || fail "no start line"
wait_buffered "$SVC_PORT" astat

log "gRPC reflection (before any failure from this address): a token needed, read-only suffices"
cat >"$T_DIR/py/reflect_call.py" <<'PY'
import grpc
LIST_SERVICES = b"\x3a\x00"        # ServerReflectionRequest{list_services: ""}
def reflect(ch):
    return ch.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=lambda b: b, response_deserializer=lambda b: b)
PY
"$PY" - "$T_DIR/py" "$GP" "$TOKR" <<'PY' || fail "gRPC reflection"
import sys
sys.path.insert(0, sys.argv[1])
import grpc
from reflect_call import reflect, LIST_SERVICES
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[2])
try:
    list(reflect(ch)(iter([LIST_SERVICES]), timeout=5))
    sys.exit("reflection answered without a token")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e.code()
got = b"".join(reflect(ch)(iter([LIST_SERVICES]),
    metadata=[("authorization", "Bearer " + sys.argv[3])], timeout=5))
assert b"hispeeddesign.idgen.v1.IdGeneratorService" in got, got[:200]
PY

log "text protocol: missing, wrong, right, read-only"
out=$(q "$SVC_PORT" 'ID\nPING\nAUTH %s\nID\n' "$WRONG")
[ "$out" = "$(printf 'ERR NOAUTH Authentication required.\nERR NOAUTH Authentication required.\nERR WRONGPASS invalid username-password pair or user is disabled.\nERR NOAUTH Authentication required.')" ] ||
	fail "text without a token: $out"
qa "$SVC_PORT" "$TOKA" 'IDS 10\nID\n' | ids_in
out=$(qa "$SVC_PORT" "$TOKR" 'ID\nBLOCK 5\nDECODE 2097152\nSTATS\n')
grep -q '^ERR NOPERM ' <<<"$out" || fail "read-only token given IDs: $out"
[ "$(grep -c '^ERR NOPERM' <<<"$out")" = 2 ] || fail "read-only: $out"
grep -q '^ticket block=2 server=even' <<<"$out" || fail "read-only DECODE: $out"
grep -q '^STAT auth_tokens 4$' <<<"$out" || fail "read-only STATS: $out"
# A token limited to namespaces (ns=): the default sequence only, here.
out=$(qa "$SVC_PORT" "$TOKL" 'ID\nID default\nID orders\nIDS 2 orders\n')
[ "$(grep -cE '^[0-9]+$' <<<"$out")" = 2 ] || fail "limited token, default: $out"
[ "$(grep -c '^ERR NOPERM this token may not take IDs of this namespace' <<<"$out")" = 2 ] ||
	fail "limited token, another namespace: $out"

log "redis-cli: REDISCLI_AUTH right, wrong, missing; --user/--pass (AUTH user token)"
export REDISCLI_AUTH=$TOKA
out=$(redis-cli -p "$SVC_PORT" IDS 5 2>&1) || fail "redis-cli with the token: $out"
echo "$out" | ids_in
[ "$(echo "$out" | wc -l)" = 5 ] || fail "redis-cli IDS 5: $out"
out=$(REDISCLI_AUTH=$WRONG redis-cli -p "$SVC_PORT" ID 2>&1 || true)
grep -q 'AUTH failed: WRONGPASS' <<<"$out" && grep -q 'NOAUTH Authentication required.' <<<"$out" ||
	fail "redis-cli wrong token: $out"
unset REDISCLI_AUTH
out=$(redis-cli -p "$SVC_PORT" ID 2>&1 || true)
[ "$out" = "NOAUTH Authentication required." ] || fail "redis-cli without a token: $out"
out=$(redis-cli -p "$SVC_PORT" --no-auth-warning --user alice --pass "$TOKA" ID 2>&1)
[[ "$out" =~ ^[0-9]+$ ]] || fail "redis-cli --user alice: $out"
echo "$out" | ids_in
out=$(redis-cli -p "$SVC_PORT" --no-auth-warning --user bob --pass "$TOKA" ID 2>&1 || true)
grep -q WRONGPASS <<<"$out" || fail "redis-cli --user bob (not the token's name): $out"
# User "default" is the password alone, as in Redis (issue 31): alice's token too.
out=$(redis-cli -p "$SVC_PORT" --no-auth-warning --user default --pass "$TOKA" IDS 2 2>&1)
[ "$(grep -cE '^[0-9]+$' <<<"$out")" = 2 ] || fail "redis-cli --user default --pass (a named token): $out"
echo "$out" | ids_in
out=$(redis-cli -p "$SVC_PORT" --no-auth-warning --user default --pass "$WRONG" ID 2>&1 || true)
grep -q WRONGPASS <<<"$out" || fail "redis-cli --user default, a wrong token: $out"
out=$(REDISCLI_AUTH=$TOKR redis-cli -p "$SVC_PORT" ID 2>&1 || true)
grep -q '^NOPERM ' <<<"$out" || fail "redis-cli read-only ID: $out"
REDISCLI_AUTH=$TOKR redis-cli -p "$SVC_PORT" INFO stats | has '^auth_denied:[1-9]' ||
	fail "redis-cli read-only INFO"

log "redis-py: password, username + password, wrong, pipelined"
"$PY" - "$SVC_PORT" "$TOKA" "$WRONG" "$TOKB" "$TOKR" <<'PY' >>"$IDS" || fail "redis-py"
import sys, redis
port, tok, wrong, bare = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
r = redis.Redis(port=port, password=tok)
ids = [r.execute_command("ID")] + r.execute_command("IDS", 100)
p = r.pipeline(transaction=False)
for _ in range(50):
    p.execute_command("ID")
ids += p.execute()
ids += redis.Redis(port=port, username="alice", password=tok).execute_command("IDS", 10)
ids += redis.Redis(port=port, username="default", password=bare).execute_command("IDS", 10)
for kw in ({"password": wrong}, {"username": "bob", "password": tok}):
    try:
        redis.Redis(port=port, **kw).execute_command("ID")
        sys.exit("refused credentials served: %r" % (kw.keys(),))
    except redis.exceptions.ResponseError as e:     # redis-py has no class for WRONGPASS
        assert str(e).startswith("WRONGPASS"), e
try:
    redis.Redis(port=port, password=sys.argv[5]).execute_command("ID")
    sys.exit("a read-only token got an ID")
except redis.exceptions.NoPermissionError:
    pass
try:
    redis.Redis(port=port).execute_command("ID")
    sys.exit("no token served")
except redis.exceptions.AuthenticationError as e:
    assert "Authentication required" in str(e), e
for i in ids:
    print(i, 1)
PY

log "ioredis: password only, username default (AUTH default <token>), HELLO 3 AUTH default <token>"
JS=$ROOT/tests/js
[ -d "$JS/node_modules/ioredis" ] || fail "tests/js/node_modules missing: run make deps"
for who in "--password $TOKA" "--username default --password $TOKA" "--username alice --password $TOKA"; do
	# shellcheck disable=SC2086
	(cd "$ROOT" && NODE_PATH=$JS/node_modules timeout 60 node tests/js/redis_pipeline.js 127.0.0.1 \
		"$SVC_PORT" 100 "$IDS" $who) >"$T_DIR/js.out" 2>&1 || fail "ioredis: $(tail -n 3 "$T_DIR/js.out")"
	log "$(cat "$T_DIR/js.out")"
done
rc=0
(cd "$ROOT" && NODE_PATH=$JS/node_modules timeout 60 node tests/js/redis_pipeline.js 127.0.0.1 \
	"$SVC_PORT" 10 "$IDS" --username default --password "$WRONG") >"$T_DIR/js.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q WRONGPASS "$T_DIR/js.out" || fail "ioredis, default and a wrong token: rc $rc $(tail -n 2 "$T_DIR/js.out")"
"$PY" - "$SVC_PORT" "$TOKA" <<'PY' >>"$IDS" || fail "HELLO 3 AUTH default"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
def resp(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
s.sendall(resp(b"HELLO", b"3", b"AUTH", b"default", sys.argv[2].encode()) + resp(b"ID"))
f = s.makefile("rb")
hello = f.readline()
assert hello.startswith(b"-NOPROTO"), hello     # authenticated; RESP2 it is
head = f.readline()
body = f.readline() if head.startswith(b"$") else head[1:]
assert body.strip().isdigit(), (head, body)
print(int(body), 1)
PY

log "curl: Bearer right, wrong, missing, read-only; /metrics and /health open by default"
code=$(curl -s -o "$T_DIR/h.out" -D "$T_DIR/h.hdr" -w '%{http_code}' "http://127.0.0.1:$HP/v1/id")
[ "$code" = 401 ] && grep -qi '^WWW-Authenticate: Bearer realm="idgen"' "$T_DIR/h.hdr" &&
	grep -q '"NOAUTH"' "$T_DIR/h.out" || fail "HTTP without a token: $code $(cat "$T_DIR/h.out")"
code=$(curl -s -o "$T_DIR/h.out" -D "$T_DIR/h.hdr" -w '%{http_code}' -H "Authorization: Bearer $WRONG" \
	"http://127.0.0.1:$HP/v1/id")
[ "$code" = 401 ] && grep -qi 'error="invalid_token"' "$T_DIR/h.hdr" || fail "HTTP wrong token: $code"
curl -sf -H "Authorization: Bearer $TOKA" "http://127.0.0.1:$HP/v1/ids?count=100" >"$T_DIR/h.out" ||
	fail "HTTP with the token"
"$PY" -c 'import json,sys; [print(i, 1) for i in json.load(open(sys.argv[1]))["ids_str"]]' \
	"$T_DIR/h.out" >>"$IDS"
curl -sf -H "Authorization: Bearer $TOKA" -H 'Content-Type: application/json' \
	-d '{"count": 50}' "http://127.0.0.1:$HP/v1/block" >"$T_DIR/h.out" || fail "HTTP POST block"
"$PY" -c 'import json,sys; b=json.load(open(sys.argv[1])); print(b["first_str"], b["count"])' \
	"$T_DIR/h.out" >>"$IDS"
code=$(curl -s -o /dev/null -D "$T_DIR/h.hdr" -w '%{http_code}' -H "Authorization: Bearer $TOKR" \
	"http://127.0.0.1:$HP/v1/id")
[ "$code" = 403 ] && grep -qi 'error="insufficient_scope"' "$T_DIR/h.hdr" || fail "HTTP read-only ID: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/stats")
[ "$code" = 401 ] || fail "/stats without a token: $code"
curl -sf -H "Authorization: Bearer $TOKR" "http://127.0.0.1:$HP/stats" | has '"auth_failures":' ||
	fail "/stats with the read-only token"
curl -sf "http://127.0.0.1:$HP/health" >/dev/null || fail "/health should be open (auth_open_metrics=1)"
curl -sf "http://127.0.0.1:$HP/metrics" >"$T_DIR/metrics.txt" || fail "/metrics should be open"
grep -qE '^idgen_auth_failures_total [1-9]' "$T_DIR/metrics.txt" || fail "no auth_failures in /metrics"
lint=$(promtool check metrics <"$T_DIR/metrics.txt" 2>&1) && [ -z "$lint" ] || fail "promtool: $lint"

log "gRPC: authorization metadata right, missing, wrong, read-only; health open"
"$PY" - "$T_DIR/py" "$GP" "$TOKA" "$TOKR" "$WRONG" <<'PY' >>"$IDS" || fail "gRPC"
import sys
sys.path.insert(0, sys.argv[1])
import grpc, idgen_pb2, idgen_pb2_grpc, health_pb2, health_pb2_grpc
from reflect_call import reflect, LIST_SERVICES
port, tok, ro, wrong = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ch = grpc.insecure_channel("127.0.0.1:" + port)
s = idgen_pb2_grpc.IdGeneratorServiceStub(ch)
def md(t):
    return [("authorization", "Bearer " + t)]
ids = list(s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=100), metadata=md(tok),
    timeout=5).ids)
ids.append(s.GenerateId(idgen_pb2.GenerateIdRequest(), metadata=md(tok), timeout=5).id)
want = {None: grpc.StatusCode.UNAUTHENTICATED, wrong: grpc.StatusCode.UNAUTHENTICATED,
        ro: grpc.StatusCode.PERMISSION_DENIED}
for t, code in want.items():
    try:
        s.GenerateId(idgen_pb2.GenerateIdRequest(), metadata=md(t) if t else None, timeout=5)
        sys.exit("gRPC served with %s" % ("no token" if t is None else "a refused token"))
    except grpc.RpcError as e:
        assert e.code() == code, (e.code(), code, e.details())
h = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
assert h.status == health_pb2.HealthCheckResponse.SERVING, h
# Reflection is answered outside the core, with no timer to hold a failure: from an
# address being slowed down (this one, by now) it refuses every token unread.
try:
    list(reflect(ch)(iter([LIST_SERVICES]), metadata=md(ro), timeout=5))
    sys.exit("reflection answered an address being slowed down")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED and "too many" in e.details(), e
for i in ids:
    print(i, 1)
PY

log "libidgen through the idgen command: IDGEN_TOKEN, --token-file, none"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$SVC_PORT" ids 200 | awk '{ print $1, 1 }' >>"$IDS" ||
	fail "idgen with IDGEN_TOKEN"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$SVC_PORT" block 300 >"$T_DIR/block.out" || fail "idgen block"
cat "$T_DIR/block.out" >>"$IDS"
printf '%s\n' "$TOKR" >"$T_DIR/ro.token"
"$IDGEN" -s "127.0.0.1:$SVC_PORT" --token-file "$T_DIR/ro.token" stats | has '^STAT auth_tokens 4$' ||
	fail "idgen --token-file stats"
rc=0
out=$("$IDGEN" -s "127.0.0.1:$SVC_PORT" -t 500 id 2>&1) || rc=$?
[ $rc = 1 ] && grep -q 'NOAUTH' <<<"$out" || fail "idgen without a token: rc=$rc $out"
rc=0
out=$(IDGEN_TOKEN=$WRONG "$IDGEN" -s "127.0.0.1:$SVC_PORT" ping 2>&1) || rc=$?
[ $rc = 1 ] && grep -q 'token refused: ERR WRONGPASS' <<<"$out" || fail "idgen wrong token: rc=$rc $out"
! grep -qF "$WRONG" <<<"$out" || fail "the token in idgen's message"

log "failures counted; an address that keeps failing is answered ${DELAY_MS} ms later"
f0=$(astat "$SVC_PORT" auth_failures)
[ "$f0" -ge 5 ] || fail "auth_failures $f0"
"$PY" - "$SVC_PORT" "$TOKA" "$WRONG" "$DELAY_MS" <<'PY' >"$T_DIR/slow.out" || fail "slowdown: $(cat "$T_DIR/slow.out")"
import socket, sys, time
port, tok, wrong, delay = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]) / 1000
def timed(line, n=1):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    f = s.makefile("rwb")
    t0 = time.monotonic()
    f.write((line + "\n").encode() * n)
    f.flush()
    out = [f.readline().decode().strip() for _ in range(n)]
    dt = time.monotonic() - t0
    s.close()
    return dt, out
# This address has failed more than 3 times in the last minute (above).
dt_ok, out = timed("AUTH " + tok)
assert out == ["OK"], out
dt_bad, out = timed("AUTH " + wrong)
assert out[0].startswith("ERR WRONGPASS"), out
dt5, out = timed("AUTH " + wrong, 5)           # pipelined: each one held
assert all(o.startswith("ERR WRONGPASS") for o in out), out
print("right %.3f s, wrong %.3f s, 5 wrong pipelined %.3f s" % (dt_ok, dt_bad, dt5))
assert dt_ok < delay / 2, "a right token was held"
assert dt_bad >= delay * 0.9, "a wrong token was answered in %.3f s" % dt_bad
assert dt5 >= 5 * delay * 0.9, "5 wrong tokens answered in %.3f s" % dt5
PY
cat "$T_DIR/slow.out" >&2
[ "$(astat "$SVC_PORT" auth_delayed)" -ge 6 ] || fail "auth_delayed $(astat "$SVC_PORT" auth_delayed)"
[ "$(astat "$SVC_PORT" auth_failures)" -ge $((f0 + 6)) ] || fail "auth_failures not counted"

log "revocation: the token removed from the file and SIGHUP, connections kept open"
"$PY" - "$SVC_PORT" "$HP" "$TOKB" "$TOKENS" "$svc_PID" <<'PY' >>"$IDS" || fail "revocation"
import os, redis, signal, socket, sys, time, urllib.request, urllib.error, http.client
port, hp, tok, path, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
f = s.makefile("rwb")
def cmd(c):
    f.write((c + "\n").encode()); f.flush()
    return f.readline().decode().strip()
assert cmd("AUTH " + tok) == "OK"
ids = [int(cmd("ID"))]
r = redis.Redis(port=port, password=tok, single_connection_client=True)
ids.append(r.execute_command("ID"))
h = http.client.HTTPConnection("127.0.0.1", hp, timeout=10)       # keep-alive
def get():
    h.request("GET", "/v1/id", headers={"Authorization": "Bearer " + tok})
    resp = h.getresponse()
    return resp.status, resp.read()
st, body = get()
assert st == 200, (st, body)
ids.append(int(__import__("json").loads(body)["id_str"]))
lines = [l for l in open(path) if tok not in l]
open(path + ".new", "w").writelines(lines)
os.rename(path + ".new", path)
os.kill(pid, signal.SIGHUP)
time.sleep(0.5)
assert cmd("ID") == "ERR NOAUTH Authentication required.", "text connection still served"
try:
    r.execute_command("ID")
    sys.exit("RESP connection still served")
except redis.exceptions.AuthenticationError:
    pass
st, body = get()
assert st == 401, (st, body)
for i in ids:
    print(i, 1)
PY
grep -q 'SIGHUP: auth_tokens_file reread: 3 tokens (1 read-only)' "$T_DIR/svc.log" ||
	fail "no reload line: $(tail -n 2 "$T_DIR/svc.log")"
[ "$(astat "$SVC_PORT" auth_reloads)" = 1 ] && [ "$(astat "$SVC_PORT" auth_tokens)" = 3 ] ||
	fail "reload not counted"
[ "$(astat "$SVC_PORT" auth_reload_clean)" = 1 ] && [ "$(astat "$SVC_PORT" auth_reload_error)" = none ] ||
	fail "a clean reload not shown as clean"

log "revocation with a malformed line in the same edit (issue 31): the lines that parse apply"
# alice's line removed and a malformed line added, one edit, one SIGHUP: alice is
# refused on a new connection and on connections that stay open (their next
# request), the other tokens serve, the bad line is named in the log, and the
# reload shows as not clean in STATS, /health and /metrics until a clean one.
cp "$TOKENS" "$T_DIR/tokens.good"
"$PY" - "$SVC_PORT" "$TOKA" "$TOKR" "$TOKENS" "$svc_PID" <<'PY' >>"$IDS" || fail "revocation with a bad line"
import os, redis, signal, socket, sys, time
port, tok, ro, path, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
f = s.makefile("rwb")
def cmd(c):
    f.write((c + "\n").encode()); f.flush()
    return f.readline().decode().strip()
assert cmd("AUTH " + tok) == "OK"
ids = [int(cmd("ID"))]
r = redis.Redis(port=port, password=tok, single_connection_client=True)
ids.append(r.execute_command("ID"))
lines = [l for l in open(path) if tok not in l]
lines.insert(2, "x:short\n")           # a token of 5 characters: malformed
open(path + ".new", "w").writelines(lines)
os.rename(path + ".new", path)
os.kill(pid, signal.SIGHUP)
time.sleep(0.5)
assert cmd("ID") == "ERR NOAUTH Authentication required.", "an open text connection still served"
try:
    r.execute_command("ID")
    sys.exit("an open RESP connection still served")
except redis.exceptions.AuthenticationError:
    pass
try:
    redis.Redis(port=port, password=tok).execute_command("ID")
    sys.exit("a new connection served with the revoked token")
except redis.exceptions.ResponseError as e:
    assert str(e).startswith("WRONGPASS"), e
assert redis.Redis(port=port, password=ro).execute_command("PING")
for i in ids:
    print(i, 1)
PY
wait_for "the reload line" 5 grep -q 'SIGHUP: auth_tokens_file reread: 2 tokens (1 read-only); 1 line left out' "$T_DIR/svc.log"
grep 'left out' "$T_DIR/svc.log" | tail -n 1 | has "line 3: a token is 16..256 characters" ||
	fail "the bad line not named: $(grep 'left out' "$T_DIR/svc.log" | tail -n 1)"
qa "$SVC_PORT" "$TOKL" 'IDS 3\n' | ids_in
[ "$(astat "$SVC_PORT" auth_reload_clean)" = 0 ] && [ "$(astat "$SVC_PORT" auth_reload_errors)" = 1 ] &&
	[ "$(astat "$SVC_PORT" auth_tokens)" = 2 ] || fail "STATS: the partial reload not shown"
qa "$SVC_PORT" "$TOKR" 'STATS\n' | has '^STAT auth_reload_error .*line 3: a token is' ||
	fail "STATS auth_reload_error: $(qa "$SVC_PORT" "$TOKR" 'STATS\n' | grep auth_reload_error)"
curl -sf "http://127.0.0.1:$HP/health" >"$T_DIR/health.json" || fail "/health"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["auth_tokens_file"] == "not clean" and "line 3" in d["auth_tokens_file_error"], d' \
	"$T_DIR/health.json" || fail "/health: $(cat "$T_DIR/health.json")"
curl -sf "http://127.0.0.1:$HP/metrics" >"$T_DIR/metrics2.txt" || fail "/metrics"
grep -q '^idgen_auth_reload_errors_total 1$' "$T_DIR/metrics2.txt" &&
	grep -q '^idgen_auth_reload_clean 0$' "$T_DIR/metrics2.txt" || fail "/metrics: the partial reload not shown"
lint=$(promtool check metrics <"$T_DIR/metrics2.txt" 2>&1) && [ -z "$lint" ] || fail "promtool: $lint"
# An unreadable file: the previous tokens stay (nothing was read to apply), not clean.
mv "$TOKENS" "$TOKENS.away"
kill -HUP "$svc_PID"
wait_for "the refused reload" 5 grep -q "cannot read .*; the previous 2 tokens stay" "$T_DIR/svc.log"
[ "$(astat "$SVC_PORT" auth_reload_failures)" = 1 ] && [ "$(astat "$SVC_PORT" auth_reload_errors)" = 2 ] ||
	fail "the unreadable file not counted"
# Fixed: clean again everywhere.
cp "$T_DIR/tokens.good" "$TOKENS"
kill -HUP "$svc_PID"
clean_now() { [ "$(astat "$SVC_PORT" auth_reload_clean)" = 1 ]; }
wait_for "the clean reload" 5 clean_now
curl -sf "http://127.0.0.1:$HP/health" | has '"auth_tokens_file":"clean"' || fail "/health not clean again"
curl -sf "http://127.0.0.1:$HP/metrics" | has '^idgen_auth_reload_clean 1$' || fail "/metrics not clean again"
qa "$SVC_PORT" "$TOKA" 'IDS 3\n' | ids_in

log "auth_open_metrics=0: /metrics, /health and gRPC health need a token"
start svc2 "$S2" --http_port "$HP2" --grpc_port "$GP2" --auth_open_metrics 0
wait_buffered "$S2" astat
for p in metrics health; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP2/$p")
	[ "$code" = 401 ] || fail "/$p without a token: $code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKR" "http://127.0.0.1:$HP2/$p")
	[ "$code" = 200 ] || fail "/$p with the read-only token: $code"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP2/v1/openapi.json")
[ "$code" = 200 ] || fail "/v1/openapi.json should stay open: $code"
"$PY" - "$T_DIR/py" "$GP2" "$TOKR" <<'PY' || fail "gRPC health behind a token"
import sys
sys.path.insert(0, sys.argv[1])
import grpc, health_pb2, health_pb2_grpc
h = health_pb2_grpc.HealthStub(grpc.insecure_channel("127.0.0.1:" + sys.argv[2]))
try:
    h.Check(health_pb2.HealthCheckRequest(), timeout=5)
    sys.exit("health answered without a token")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e.code()
r = h.Check(health_pb2.HealthCheckRequest(), metadata=[("authorization", "Bearer " + sys.argv[3])],
    timeout=5)
assert r.status == health_pb2.HealthCheckResponse.SERVING
PY
qa "$S2" "$TOKA" 'IDS 10\n' | ids_in

log "no token in any log, STATS or /metrics"
qa "$SVC_PORT" "$TOKR" 'STATS\n' >"$T_DIR/stats.txt"
for t in "$TOKA" "$TOKR" "$TOKB" "$WRONG"; do
	! grep -qF "$t" "$T_DIR"/*.log "$T_DIR/stats.txt" "$T_DIR/metrics.txt" ||
		fail "a token in $(grep -lF "$t" "$T_DIR"/*.log "$T_DIR/stats.txt" "$T_DIR/metrics.txt")"
done

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the authenticated clients"
log "OK: $n IDs from redis-cli, redis-py, netcat, curl, grpcio and idgen, none twice"
