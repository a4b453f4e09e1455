#!/usr/bin/env bash
# libidgen and the idgen command over TLS (issue 21; docs/design.md section
# 11.7), against idservers with listen_tls = on and certificates of a throwaway
# CA (lib.sh's tls_ca and tls_leaf):
#  1. IDs with the right CA: the idgen command (--tls --cacert, and IDGEN_TLS /
#     IDGEN_TLS_CA), its stats and ping, and the C API through idgen_load (4
#     threads, next/ids/block mixed, and a fork); a session resumed when an
#     idserver closes idle connections (idle_timeout_ms).
#  2. Refused by the client: another CA, a certificate for another name (and
#     served once --servername names it), an expired certificate, cleartext
#     against a TLS port and TLS against a cleartext one; options that cannot
#     work (a CA file with TLS off, a certificate without its key, a file that
#     does not load) are usage errors (exit 2).
#  3. mTLS (tls_verify_client = required) with tokens: a client certificate
#     and IDGEN_TOKEN are served (command and C API), no certificate or one of
#     another CA is refused in the handshake, a certificate without the token
#     gets NOAUTH.
# No timing bound: it runs in a lane. Every ID is checked distinct.
. "$(dirname "$0")/lib.sh"
IDGEN=$BUILD/idgen
LOAD=$BUILD/idgen_load
TLS=$TLS_DIR
D=$T_DIR/ids
mkdir -p "$D"

tls_ca ca; tls_ca otherca
tls_leaf server ca; tls_leaf client ca; tls_leaf otherclient otherca
tls_leaf wronghost ca "" DNS:ids.example
tls_leaf expired ca "$(date -d '-2 days' '+%Y-%m-%d %H:%M:%S')"
CA=$TLS/ca-cert.pem
S=$SVC_PORT				# TLS, client certificates optional
W=$((SVC_PORT + 1))			# TLS, a certificate for ids.example only
X=$((SVC_PORT + 2))			# TLS, an expired certificate
M=$((SVC_PORT + 3))			# mTLS required, tokens
C=$((SVC_PORT + 4))			# cleartext
I=$((SVC_PORT + 5))			# TLS, idle connections closed after 300 ms

# tls_start NAME PORT CERT FLAGS...: an idserver whose text port speaks TLS with
# CERT's certificate; waits until it answers PING over TLS (after $PRE: AUTH).
PRE=
tls_start() {
	local name=$1 port=$2 cert=$3 pid
	shift 3
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$port" --state_file "$T_DIR/$name.state" \
		--listen_tls on --tls_cert_file "$TLS/$cert-cert.pem" --tls_key_file "$TLS/$cert-key.pem" \
		"$@" >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 1 100); do
		printf "${PRE}PING\nQUIT\n" | timeout 10 openssl s_client -quiet -connect "127.0.0.1:$port" \
			-cert "$TLS/client-cert.pem" -key "$TLS/client-key.pem" 2>/dev/null | has -x PONG && return 0
		alive "$pid" || fail "$name exited at start: $(tail -n 3 "$T_DIR/$name.log")"
		sleep 0.1
	done
	fail "$name did not answer PING over TLS on port $port within 10 s"
}
# refused NAME WANT_RC WANT_TEXT COMMAND...: COMMAND exits WANT_RC, its output
# holds WANT_TEXT (idgen's on stderr, idgen_load's on stdout), and no ID.
refused() {
	local name=$1 want=$2 text=$3 rc=0
	shift 3
	"$@" >"$T_DIR/$name.out" 2>"$T_DIR/$name.err" || rc=$?
	[ "$rc" = "$want" ] && cat "$T_DIR/$name.err" "$T_DIR/$name.out" | has -F -- "$text" &&
		! grep -qE '^[0-9]+$' "$T_DIR/$name.out" ||
		fail "$name: exit $rc, '$(cat "$T_DIR/$name.err")' (want $want and '$text')"
}

pair_up
tls_start s "$S" server --tls_ca_file "$CA" --tls_verify_client optional
tls_start w "$W" wronghost
tls_start x "$X" expired
TOKEN=$(openssl rand -hex 16)
printf 'app:%s\n' "$TOKEN" >"$T_DIR/tokens"
chmod 600 "$T_DIR/tokens"
PRE="AUTH $TOKEN\n" tls_start m "$M" server --tls_ca_file "$CA" --tls_verify_client required \
	--auth_tokens_file "$T_DIR/tokens"
idserver_start c "$C"
tls_start i "$I" server --idle_timeout_ms 300
# tls_stat PORT NAME: one STATS value over TLS, after PRE (wait_buffered's reader).
tls_stat() {
	printf "${PRE:-}STATS\nQUIT\n" | timeout 10 openssl s_client -quiet -connect "127.0.0.1:$1" \
		-cert "$TLS/client-cert.pem" -key "$TLS/client-key.pem" 2>/dev/null |
		awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'
}
m_stat() { PRE="AUTH $TOKEN\n" tls_stat "$@"; }
for p in "$S" "$W" "$I"; do wait_buffered "$p" tls_stat; done
wait_buffered "$M" m_stat

# 1. The right CA: the command, by flags and by environment, and the C API.
T=(--tls --cacert "$CA")
id=$("$IDGEN" -s "127.0.0.1:$S" "${T[@]}" id) || fail "idgen --tls id exited $?"
[[ $id =~ ^[1-9][0-9]*$ ]] || fail "idgen --tls id printed '$id'"
echo "$id 1" >"$D/cli"
"$IDGEN" -s "127.0.0.1:$S" "${T[@]}" ids 5 >"$T_DIR/ids5" || fail "idgen --tls ids 5 exited $?"
[ "$(wc -l <"$T_DIR/ids5")" = 5 ] && sort -n -c "$T_DIR/ids5" || fail "idgen --tls ids 5: $(cat "$T_DIR/ids5")"
awk '{ print $1, 1 }' "$T_DIR/ids5" >>"$D/cli"
read -r first n < <("$IDGEN" -s "127.0.0.1:$S" "${T[@]}" block 100)
[ "$n" = 100 ] || fail "idgen --tls block 100 printed '$first $n'"
echo "$first $n" >>"$D/cli"
id=$(IDGEN_TLS=1 IDGEN_TLS_CA=$CA IDGEN_SERVER=localhost:$S "$IDGEN" id) || fail "IDGEN_TLS=1 idgen id (localhost) exited $?"
echo "$id 1" >>"$D/cli"
"$IDGEN" -s "127.0.0.1:$S" "${T[@]}" stats | has '^STAT tls_handshakes [1-9]' || fail "idgen --tls stats"
"$IDGEN" -s "127.0.0.1:$S,127.0.0.1:$X" "${T[@]}" ping >"$T_DIR/ping" && fail "ping with an expired certificate exited 0"
grep -qE "^PONG 127.0.0.1:$S [0-9]+ us$" "$T_DIR/ping" && grep -q "^DOWN 127.0.0.1:$X .*expired" "$T_DIR/ping" ||
	fail "idgen --tls ping: $(cat "$T_DIR/ping")"
IDGEN_TLS=1 IDGEN_TLS_CA=$CA "$LOAD" -s "127.0.0.1:$S" -t 4 -n 300000 --mix --dump "$D/mix" >"$T_DIR/mix.out" ||
	fail "idgen_load over TLS: $(cat "$T_DIR/mix.out")"
grep -q 'bad=0 errors=0' "$T_DIR/mix.out" && grep -qE 'tls_handshakes=[1-9]' "$T_DIR/mix.out" ||
	fail "idgen_load over TLS: $(cat "$T_DIR/mix.out")"
IDGEN_TLS=1 IDGEN_TLS_CA=$CA "$LOAD" -s "127.0.0.1:$S" -t 2 -n 100000 --mix --fork --dump "$D/fork" >"$T_DIR/fork.out" ||
	fail "idgen_load --fork over TLS: $(cat "$T_DIR/fork.out")"
grep -q 'role=child.*forks=1' "$T_DIR/fork.out" && grep -q 'role=parent.*forks=0' "$T_DIR/fork.out" ||
	fail "fork over TLS: $(cat "$T_DIR/fork.out")"
# idle_timeout_ms 300 closes the kept connection between refills: each new one resumes.
IDGEN_TLS=1 IDGEN_TLS_CA=$CA "$LOAD" -s "127.0.0.1:$I" -t 1 -d 3 --pace 600000 --lead-ms 0 --min-held 1 \
	--fetch-ids 1024 --dump "$D/idle" >"$T_DIR/idle.out" || fail "idle-closed TLS connections: $(cat "$T_DIR/idle.out")"
hs=$(sed -n 's/.* tls_handshakes=\([0-9]*\) .*/\1/p' "$T_DIR/idle.out")
res=$(sed -n 's/.* tls_resumed=\([0-9]*\).*/\1/p' "$T_DIR/idle.out")
[ "${hs:-0}" -ge 3 ] && [ "${res:-0}" -ge $((hs - 1)) ] && grep -q ' failures=0 ' "$T_DIR/idle.out" ||
	fail "sessions after idle closes: $(cat "$T_DIR/idle.out")"
log "1. idgen --tls (id, ids, block, stats, ping), IDGEN_TLS=1 to localhost, the C API (4 threads, a fork): IDs over TLS; $hs handshakes after idle closes, $res resumed"

# 2. Refusals by the client.
refused otherca 1 "does not verify for '127.0.0.1'" "$IDGEN" -s "127.0.0.1:$S" --tls --cacert "$TLS/otherca-cert.pem" id
refused system 1 'does not verify' "$IDGEN" -s "127.0.0.1:$S" --tls id
refused wronghost 1 'does not verify for '"'"'127.0.0.1'"'"'' "$IDGEN" -s "127.0.0.1:$W" "${T[@]}" id
refused servername 1 'does not verify for '"'"'ids.example'"'"'' "$IDGEN" -s "127.0.0.1:$S" "${T[@]}" --servername ids.example ids 2
id=$("$IDGEN" -s "127.0.0.1:$W" "${T[@]}" --servername ids.example id) || fail "--servername ids.example exited $?"
echo "$id 1" >>"$D/cli"
refused expired 1 'certificate has expired' "$IDGEN" -s "127.0.0.1:$X" "${T[@]}" id
refused expired-env 1 'certificate has expired' env IDGEN_TLS=1 IDGEN_TLS_CA="$CA" "$LOAD" -s "127.0.0.1:$X" -d 1
refused cleartext 1 "127.0.0.1:$S" "$IDGEN" -s "127.0.0.1:$S" -t 1000 id
refused tls-to-cleartext 1 'TLS handshake' "$IDGEN" -s "127.0.0.1:$C" "${T[@]}" id
refused ca-without-tls 2 'tls_ca_file is set but TLS is off' "$IDGEN" -s "127.0.0.1:$S" --cacert "$CA" id
refused env-ca-without-tls 2 'IDGEN_TLS_CA is set but TLS is off' env IDGEN_TLS_CA="$CA" "$IDGEN" -s "127.0.0.1:$S" id
refused cert-without-key 2 'go together' "$IDGEN" -s "127.0.0.1:$M" "${T[@]}" --cert "$TLS/client-cert.pem" id
refused bad-ca-file 2 'cannot load the CA file' "$IDGEN" -s "127.0.0.1:$S" --tls --cacert "$T_DIR/nonexistent.pem" id
refused bad-tls-env 2 "IDGEN_TLS is 'yes'" env IDGEN_TLS=yes "$IDGEN" -s "127.0.0.1:$S" id
refused json-expired 1 '"code":"service"' "$IDGEN" --json -s "127.0.0.1:$X" "${T[@]}" id
log "2. refused: another CA, the system's store, a certificate for another name (served with --servername), an expired one, cleartext to TLS and TLS to cleartext; bad options exit 2"

# 3. mTLS required, and a token.
CC=(--cert "$TLS/client-cert.pem" --key "$TLS/client-key.pem")
"$IDGEN" -s "127.0.0.1:$M" "${T[@]}" "${CC[@]}" id >/dev/null 2>"$T_DIR/notoken.err" && fail "mTLS without a token served"
grep -q 'token refused\|NOAUTH' "$T_DIR/notoken.err" || fail "mTLS without a token: $(cat "$T_DIR/notoken.err")"
IDGEN_TOKEN=$TOKEN "$IDGEN" -s "127.0.0.1:$M" "${T[@]}" "${CC[@]}" ids 7 >"$T_DIR/m7" || fail "mTLS with a token: exit $?"
[ "$(wc -l <"$T_DIR/m7")" = 7 ] || fail "mTLS with a token: $(cat "$T_DIR/m7")"
awk '{ print $1, 1 }' "$T_DIR/m7" >>"$D/cli"
IDGEN_TOKEN=$TOKEN IDGEN_TLS=1 IDGEN_TLS_CA=$CA IDGEN_TLS_CERT=$TLS/client-cert.pem IDGEN_TLS_KEY=$TLS/client-key.pem \
	"$LOAD" -s "127.0.0.1:$M" -t 2 -n 100000 --mix --dump "$D/mtls" >"$T_DIR/mtls.out" ||
	fail "idgen_load with mTLS and a token: $(cat "$T_DIR/mtls.out")"
IDGEN_TOKEN=$TOKEN "$IDGEN" -s "127.0.0.1:$M" "${T[@]}" "${CC[@]}" stats | has '^STAT pid ' || fail "idgen stats over mTLS"
refused nocert 1 'certificate required' env IDGEN_TOKEN="$TOKEN" "$IDGEN" -s "127.0.0.1:$M" "${T[@]}" id
refused othercert 1 "127.0.0.1:$M" env IDGEN_TOKEN="$TOKEN" "$IDGEN" -s "127.0.0.1:$M" "${T[@]}" \
	--cert "$TLS/otherclient-cert.pem" --key "$TLS/otherclient-key.pem" id
! grep -rqF "$TOKEN" "$T_DIR"/*.err "$T_DIR"/*.out "$T_DIR"/m.log || fail "the token shows in an error or a log"
log "3. mTLS: a client certificate and IDGEN_TOKEN served (command and C API); no token NOAUTH, no certificate or another CA's refused in the handshake"

n=$(check_unique "$D"/*) || fail "DUPLICATE IDs over TLS"
log "PASS: $n IDs from libidgen and idgen over TLS, all distinct"
