#!/usr/bin/env bash
# Tokens without a flag day (docs/operations.md, "Rolling out tokens"), with
# real clients. (1) An idserver without tokens and libidgen with one (the idgen
# command, IDGEN_TOKEN): IDs and STATS served, one warning on stderr, no
# failure. (2) auth_mode = optional: clients without a token are served on
# every protocol (netcat, redis-cli, curl, grpcio) and counted exactly in
# auth_anonymous (STATS, INFO, /stats, /metrics); a wrong token is still
# refused (WRONGPASS, 401, UNAUTHENTICATED), a right one works, a read-only one
# is still refused IDs. (3) HTTP Basic credentials (curl -u): the password is
# the token, the user "default" or the token's name (as RESP's AUTH), empty for
# none; a 401 carries both the Bearer and the Basic challenge. Bad auth_mode
# settings refuse the start. Every ID handed out is collected: none twice.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
IDGEN=$BUILD/idgen
A=$SVC_PORT		# no tokens
B=$((SVC_PORT + 1))	# tokens, auth_mode = optional
GB=$((SVC_PORT + 2))
HB=$((SVC_PORT + 3))
C=$((SVC_PORT + 4))	# tokens, required (the default)
HC=$((SVC_PORT + 5))
TOKA=alice-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKR=reader-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKB=bare-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
WRONG=wrong-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TOKENS=$T_DIR/tokens
IDS=$T_DIR/ids.txt	# "first count" ranges, for check_unique
: >"$IDS"
printf 'alice:%s\nreader:%s:ro\n%s\n' "$TOKA" "$TOKR" "$TOKB" >"$TOKENS"
grpc_stubs

# qa PORT TOKEN LINES: the text protocol after AUTH TOKEN (its OK line dropped).
qa() { local p=$1 t=$2; shift 2; q "$p" "AUTH $t\\n$*" | sed 1d; }
# astat PORT NAME: a STAT read with alice's token (not anonymous, not counted).
astat() { qa "$1" "$TOKA" 'STATS\n' | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'; }
keep() { grep -E '^[0-9]+$' | awk '{ print $1, 1 }' >>"$IDS"; }
idof() { $PY -c 'import json, sys; print(json.load(sys.stdin)["id_str"])'; }

pair_up
log "auth_mode: a bad word, or optional without tokens, refuses the start"
for args in "--auth_mode maybe --auth_tokens_file $TOKENS" "--auth_mode optional"; do
	rc=0
	# shellcheck disable=SC2086
	"$IDSERVER" $args --listen_port "$A" >"$T_DIR/bad.log" 2>&1 || rc=$?
	[ $rc -eq 2 ] && grep -q 'auth_mode' "$T_DIR/bad.log" ||
		fail "$args: exit $rc: $(cat "$T_DIR/bad.log")"
done

log "(1) libidgen with a token, idserver without: served, warned once"
idserver_start a "$A"
wait_buffered "$A"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$A" ids 5 >"$T_DIR/a.out" 2>"$T_DIR/a.err" ||
	fail "idgen ids with a token against an idserver without tokens: $(cat "$T_DIR/a.err")"
[ "$(grep -cE '^[0-9]+$' "$T_DIR/a.out")" = 5 ] || fail "idgen ids 5: $(cat "$T_DIR/a.out")"
keep <"$T_DIR/a.out"
[ "$(wc -l <"$T_DIR/a.err")" = 1 ] && has "^idgen: warning: .*has no auth_tokens_file" "$T_DIR/a.err" ||
	fail "want one warning line: $(cat "$T_DIR/a.err")"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$A" stats >"$T_DIR/a.stats" 2>"$T_DIR/a.err" ||
	fail "idgen stats with a token: $(cat "$T_DIR/a.err")"
has '^STAT auth_tokens 0$' "$T_DIR/a.stats" || fail "idgen stats: $(head -n 3 "$T_DIR/a.stats")"
has "warning: 127.0.0.1:$A has no auth_tokens_file" "$T_DIR/a.err" || fail "stats: no warning"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$A" --json block 100 2>"$T_DIR/a.err" |
	$PY -c 'import json, sys; d = json.load(sys.stdin); print(d["first_str"], d["count"])' >>"$IDS" ||
	fail "idgen --json block: $(cat "$T_DIR/a.err")"
$PY -c 'import json, sys; d = json.loads(open(sys.argv[1]).read()); assert d["warning"]["code"] == "auth_unneeded", d' \
	"$T_DIR/a.err" || fail "--json: the warning is not one JSON line: $(cat "$T_DIR/a.err")"

log "(2) auth_mode = optional: anonymous served and counted, tokens still checked"
idserver_start b "$B" --grpc_port "$GB" --http_port "$HB" --auth_tokens_file "$TOKENS" \
	--auth_mode optional --auth_fail_delay_ms 0
has 'auth_mode optional' "$T_DIR/b.log" || fail "no start line for auth_mode optional"
wait_buffered "$B" astat
a0=$(astat "$B" auth_anonymous)
[[ $a0 =~ ^[0-9]+$ ]] || fail "STATS has no auth_anonymous: '$a0'"
# Seven requests without a token: text ID and PING, RESP ID and INFO, HTTP
# /v1/id and /stats, gRPC GenerateId.
out=$(q "$B" 'ID\nPING\n')
[ "$(printf '%s\n' "$out" | sed -n 2p)" = PONG ] || fail "text, anonymous: $out"
printf '%s\n' "$out" | sed -n 1p | keep
timeout 10 redis-cli -p "$B" ID | keep
timeout 10 redis-cli -p "$B" INFO stats | tr -d '\r' | has '^auth_anonymous:' || fail "INFO, anonymous"
curl -sf "http://127.0.0.1:$HB/v1/id" | idof | keep || fail "HTTP /v1/id, anonymous"
curl -sf "http://127.0.0.1:$HB/stats" | $PY -c 'import json, sys; assert "auth_anonymous" in json.load(sys.stdin)' ||
	fail "/stats, anonymous"
"$PY" - "$T_DIR/py" "$GB" "$TOKA" "$TOKR" "$WRONG" <<'PY' >>"$IDS" || fail "gRPC"
import sys
sys.path.insert(0, sys.argv[1])
import grpc, idgen_pb2, idgen_pb2_grpc
port, tok, ro, wrong = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
s = idgen_pb2_grpc.IdGeneratorServiceStub(grpc.insecure_channel("127.0.0.1:" + port))
def md(t):
    return [("authorization", "Bearer " + t)]
ids = [s.GenerateId(idgen_pb2.GenerateIdRequest(), timeout=5).id]	# the anonymous one
ids.append(s.GenerateId(idgen_pb2.GenerateIdRequest(), metadata=md(tok), timeout=5).id)
for t, code in ((wrong, grpc.StatusCode.UNAUTHENTICATED), (ro, grpc.StatusCode.PERMISSION_DENIED)):
    try:
        s.GenerateId(idgen_pb2.GenerateIdRequest(), metadata=md(t), timeout=5)
        sys.exit("gRPC served a refused token")
    except grpc.RpcError as e:
        assert e.code() == code, (e.code(), code, e.details())
for i in ids:
    print(i, 1)
PY
a1=$(astat "$B" auth_anonymous)
[ "$a1" = $((a0 + 7)) ] || fail "auth_anonymous went $a0 -> $a1 for 7 anonymous requests"
log "7 anonymous requests: auth_anonymous $a0 -> $a1"
# The same row in every view.
qa "$B" "$TOKA" 'ID\n' | keep
[ "$(timeout 10 redis-cli -p "$B" -a "$TOKA" --no-auth-warning INFO stats | tr -d '\r' |
	sed -n 's/^auth_anonymous://p')" = "$a1" ] || fail "INFO auth_anonymous is not $a1"
[ "$(curl -s -H "Authorization: Bearer $TOKA" "http://127.0.0.1:$HB/stats" |
	$PY -c 'import json, sys; print(json.load(sys.stdin)["auth_anonymous"])')" = "$a1" ] ||
	fail "/stats auth_anonymous is not $a1"
# /metrics is open (auth_open_metrics), so this read counts no request.
[ "$(curl -s "http://127.0.0.1:$HB/metrics" | sed -n 's/^idgen_auth_anonymous_total //p')" = "$a1" ] ||
	fail "/metrics idgen_auth_anonymous_total is not $a1"
# Wrong tokens are still refused, everywhere; right ones work; read-only still read-only.
out=$(q "$B" "AUTH $WRONG\\n")
[[ $out == "ERR WRONGPASS "* ]] || fail "text AUTH wrong: $out"
out=$(timeout 10 redis-cli -p "$B" -a "$WRONG" --no-auth-warning ID 2>&1)
[[ $out == *WRONGPASS* ]] || fail "redis-cli -a wrong: $out"
timeout 10 redis-cli -p "$B" -a "$TOKA" --no-auth-warning ID | keep
out=$(timeout 10 redis-cli -p "$B" -a "$TOKR" --no-auth-warning ID 2>&1)
[[ $out == *NOPERM* ]] || fail "redis-cli, read-only token, ID: $out"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $WRONG" "http://127.0.0.1:$HB/v1/id")
[ "$code" = 401 ] || fail "HTTP Bearer wrong: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -u "default:$WRONG" "http://127.0.0.1:$HB/v1/id")
[ "$code" = 401 ] || fail "HTTP Basic wrong: $code"
curl -sf -H "Authorization: Bearer $TOKA" "http://127.0.0.1:$HB/v1/id" | idof | keep ||
	fail "HTTP Bearer right"
IDGEN_TOKEN=$TOKA "$IDGEN" -s "127.0.0.1:$B" ids 3 2>"$T_DIR/b.err" | keep
[ ! -s "$T_DIR/b.err" ] || fail "idgen with a right token warned: $(cat "$T_DIR/b.err")"
rc=0
IDGEN_TOKEN=$WRONG "$IDGEN" -s "127.0.0.1:$B" id >/dev/null 2>"$T_DIR/b.err" || rc=$?
[ $rc = 1 ] && has 'token refused: ERR WRONGPASS' "$T_DIR/b.err" ||
	fail "idgen with a wrong token: exit $rc, $(cat "$T_DIR/b.err")"

log "(3) HTTP Basic credentials: the token as the password"
idserver_start_c() {
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$C" --http_port "$HC" \
		--state_file "$T_DIR/c.state" --auth_tokens_file "$TOKENS" --auth_fail_delay_ms 0 \
		>"$T_DIR/c.log" 2>&1 &
	PIDS+=("$!")
	wait_for "c up" 10 bash -c "curl -sf -H 'Authorization: Bearer $TOKA' http://127.0.0.1:$HC/stats >/dev/null"
}
idserver_start_c
wait_buffered "$C" astat
U=http://127.0.0.1:$HC/v1/id
# basic USER TOKEN WANT: curl -u USER:TOKEN's status is WANT (200: its ID kept).
basic() {
	local code
	code=$(curl -s -o "$T_DIR/basic.out" -w '%{http_code}' -u "$1:$2" "$U")
	[ "$code" = "$3" ] || fail "curl -u $1:<token> got $code, want $3: $(cat "$T_DIR/basic.out")"
	[ "$3" != 200 ] || idof <"$T_DIR/basic.out" | keep
}
basic default "$TOKA" 200
basic alice "$TOKA" 200
basic "" "$TOKB" 200
basic default "$TOKB" 200
basic bob "$TOKA" 401
basic anyone "$TOKB" 401
basic alice "$WRONG" 401
basic reader "$TOKR" 403
# Bearer still works; a 401 offers both schemes.
curl -sf -H "Authorization: Bearer $TOKA" "$U" | idof | keep || fail "Bearer on C"
curl -s -D "$T_DIR/h401" -o /dev/null "$U"
head -n 1 "$T_DIR/h401" | has ' 401 ' || fail "no credentials: $(head -n 1 "$T_DIR/h401")"
grep -i '^WWW-Authenticate: Bearer realm="idgen"' "$T_DIR/h401" >/dev/null &&
	grep -i '^WWW-Authenticate: Basic realm="idgen"' "$T_DIR/h401" >/dev/null ||
	fail "401 challenges: $(grep -i www-auth "$T_DIR/h401")"
# Required mode: anonymous refused, not counted.
[ "$(astat "$C" auth_anonymous)" = 0 ] || fail "required mode counted anonymous requests"
! grep -qF -e "$TOKA" -e "$TOKB" -e "$TOKR" -e "$WRONG" "$T_DIR"/*.log || fail "a token in a log"

n=$(check_unique "$IDS")
log "ok: $n IDs, no duplicate"
