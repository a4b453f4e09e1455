#!/usr/bin/env bash
# Flags and config file: clear one-line errors; --help, the sample config, the man
# page's settings and docs/operations.md's reference all come from src/config.c's table.
. "$(dirname "$0")/lib.sh"

# expect_error WHAT NEEDLE ARGS...: exit 2 with one line naming the problem (NEEDLE
# is a fixed string). Ports and state file are this test's unless ARGS name others
# (the last flag wins), so a check that fails to refuse starts nothing shared.
expect_error() {
	local what=$1 needle=$2 rc=0 out
	shift 2
	out=$(timeout 5 "$IDSERVER" --listen_port "$SVC_PORT" --odd_port "$ODD_PORT" \
	    --even_port "$EVEN_PORT" --state_file "$T_DIR/config.state" "$@" 2>&1) || rc=$?
	[ $rc -eq 2 ] || fail "$what: exit $rc, want 2: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$what: not one line: $out"
	grep -qF -- "$needle" <<<"$out" || fail "$what: '$out' lacks '$needle'"
}

expect_error "unknown flag" "unknown option '--bogus'" --bogus 1
expect_error "unknown flag=" "unknown setting 'bogus'" --bogus=1
expect_error "bad number" "listen_port: '99999' is not a whole number in 1..65535" --listen_port 99999
expect_error "negative" "connect_timeout_ms: '-5'" --connect_timeout_ms=-5
expect_error "missing value" "needs a value" --listen_port
expect_error "stray arg" "unexpected argument 'foo'" foo
expect_error "missing file" "cannot read config file '/nonexistent.conf'" --config /nonexistent.conf
printf 'listen_port = 4242\nno_such_key = 1\n' >"$T_DIR/bad.conf"
expect_error "bad key in file" "bad.conf:2: unknown setting 'no_such_key'" --config "$T_DIR/bad.conf"
expect_error "password file" "db_password_file: cannot read '/nonexistent': No such file or directory" \
	--db_password_file /nonexistent
expect_error "password file missing" "db_password_file: cannot read '$T_DIR/nope': No such file or directory" \
	--db_password_file "$T_DIR/nope"
expect_error "password file a directory" "db_password_file: '$T_DIR' is not a regular file" \
	--db_password_file "$T_DIR"
mkfifo "$T_DIR/pw.fifo"
expect_error "password file a FIFO (not opened: that would block)" \
	"db_password_file: '$T_DIR/pw.fifo' is not a regular file" --db_password_file "$T_DIR/pw.fifo"
if [ "$(id -u)" != 0 ]; then
	: >"$T_DIR/pw.unreadable"
	chmod 000 "$T_DIR/pw.unreadable"
	expect_error "password file unreadable" \
		"db_password_file: cannot read '$T_DIR/pw.unreadable': Permission denied" \
		--db_password_file "$T_DIR/pw.unreadable"
fi
expect_error "bounds relation" "reprobe_max_ms" --reprobe_min_ms 500 --reprobe_max_ms 100
expect_error "reserve vs window" "fallback_reserve_ms (1000) must be below lease_window_ms (1000)" \
	--lease_window_ms 1000 --lease_extend_ms 500 --fallback_reserve_ms 1000

# Hosts are numeric IP addresses, v4 or v6: no resolver, no unix socket.
why="host names block the event loop and 'localhost' makes the MariaDB client use a unix socket, ignoring the port"
expect_error "odd_host name" "odd_host: 'localhost' is not an IP address ($why)" --odd_host localhost
expect_error "even_host name" "even_host: 'db.example' is not an IP address ($why)" --even_host db.example
expect_error "listen_host name" "listen_host: 'localhost' is not an IP address (the text protocol binds" \
	--listen_host localhost
expect_error "http_host name" "http_host: 'localhost' is not an IP address (the HTTP endpoints bind" \
	--http_host localhost
expect_error "empty host" "odd_host: '' is not an IP address" --odd_host ''
# A tier of regions has one layout: region_bits 5 and B = 2^20 (docs/design.md 12.3).
rule="but a tier of regions has region_bits 5 and B = 1048576 in every region"
expect_error "region_bits other than 0 or 5" "the config sets region_bits 2 and block_size 0, $rule" \
	--tier_increment 8 --region_bits 2
expect_error "a region's own B" "the config sets region_bits 5 and block_size 524288, $rule" \
	--tier_increment 4 --region_bits 5 --block_size 524288
expect_error "region_bits 5 and B = 2^20 accepted" "db_password_file: cannot read '$T_DIR/nope'" \
	--tier_increment 4 --region_bits 5 --block_size 1048576 --db_password_file "$T_DIR/nope"
# other_regions: REGION=ODD_IP:PORT,EVEN_IP:PORT entries, each checked.
R=(--tier_increment 8 --region_bits 5)
expect_error "other region is ours" "other_regions: every region must be another than region 0" \
	"${R[@]}" --other_regions "0=10.0.0.1:3306,10.0.0.2:3306"
expect_error "other region twice" "listed once" \
	"${R[@]}" --other_regions "1=10.0.0.1:3306,10.0.0.2:3306 1=10.0.0.3:3306,10.0.0.4:3306"
expect_error "other region beyond M" "with its pair inside tier_increment 4" \
	--tier_increment 4 --region_bits 5 --other_regions "2=10.0.0.1:3306,10.0.0.2:3306"
expect_error "other region beyond its bits" "below 2^region_bits (1 regions)" \
	--tier_increment 4 --other_regions "1=10.0.0.1:3306,10.0.0.2:3306"
expect_error "other region without its even server" "other_regions: cannot read" \
	"${R[@]}" --other_regions "1=10.0.0.1:3306"
expect_error "other region by host name" "other_regions: 'db1.example' is not an IP address" \
	"${R[@]}" --other_regions "1=db1.example:3306,10.0.0.2:3306"
expect_error "other region port" "other_regions: cannot read" \
	"${R[@]}" --other_regions "1=10.0.0.1:99999,10.0.0.2:3306"
expect_error "seven other regions" "other_regions: more than 6 regions" \
	--tier_increment 16 --region_bits 5 --other_regions \
	"1=10.0.0.1:1,10.0.0.1:2 2=10.0.0.1:3,10.0.0.1:4 3=10.0.0.1:5,10.0.0.1:6 4=10.0.0.1:7,10.0.0.1:8 5=10.0.0.1:9,10.0.0.1:10 6=10.0.0.1:11,10.0.0.1:12 7=10.0.0.1:13,10.0.0.1:14"

# more_servers: OFFSET=IP:PORT entries above every region's pair, at most M.
expect_error "more_servers: a pair's offset" "more_servers: every offset must be listed once, above the pair (at least 3) and at most tier_increment 8" \
	--tier_increment 8 --more_servers "2=10.0.0.3:3306"
expect_error "more_servers: beyond M" "at most tier_increment 4" --tier_increment 4 --more_servers "5=10.0.0.3:3306"
expect_error "more_servers: twice" "listed once" --tier_increment 8 --more_servers "3=10.0.0.3:3306 3=10.0.0.4:3306"
expect_error "more_servers: seven" "more_servers: more than 6 servers" --tier_increment 16 \
	--more_servers "3=10.0.0.3:3306 4=10.0.0.4:3306 5=10.0.0.5:3306 6=10.0.0.6:3306 7=10.0.0.7:3306 8=10.0.0.8:3306 9=10.0.0.9:3306"
expect_error "more_servers: host name" "more_servers: 'db3' is not an IP address" --tier_increment 8 \
	--more_servers "3=db3:3306"
expect_error "more_servers with regions" "more_servers: servers beyond the pair need a tier of one region (region_bits 0)" \
	--tier_increment 8 --region_bits 5 --more_servers "5=10.0.0.5:3306"
expect_error "more_servers: no address" "more_servers: cannot read the address of offset 3" \
	--tier_increment 8 --more_servers "3="
expect_error "more_servers accepted (IPv6, out of order)" "db_password_file: cannot read '$T_DIR/nope'" \
	--tier_increment 8 --more_servers "4=[::1]:3319;3=10.0.0.3:3306" --db_password_file "$T_DIR/nope"

# The password file is read after every other check: reaching its error means the
# settings before it passed.
expect_error "IPv6 and IPv4 hosts accepted" "db_password_file: cannot read '$T_DIR/nope'" \
	--odd_host ::1 --even_host 10.0.0.1 --listen_host ::1 --http_host 0.0.0.0 \
	"${R[@]}" --other_regions "1=[::1]:3317,10.0.0.2:3318; 3=10.0.0.5:1,10.0.0.6:2" \
	--db_password_file "$T_DIR/nope"

# An empty db_user would connect as the OS user: refused from a flag and from a file.
expect_error "empty db_user flag" "db_user is empty (the MariaDB client would connect as the OS user)" \
	--db_user ''
printf 'db_user =\n' >"$T_DIR/nouser.conf"
expect_error "empty db_user in file" "db_user is empty (the MariaDB client would connect as the OS user)" \
	--config "$T_DIR/nouser.conf"

# TLS to the ticket servers: known words, readable files, settings that go together.
expect_error "db_tls word" "db_tls: 'on' is not off or required" --db_tls on
expect_error "db_tls_min_version word" "db_tls_min_version: 'TLSv1.1' is not TLSv1.2 or TLSv1.3" \
	--db_tls required --db_tls_min_version TLSv1.1
expect_error "TLS file with TLS off" "db_tls is off but a db_tls_*_file is set" \
	--db_tls_ca_file /etc/hostname
expect_error "client certificate without key" "db_tls_cert_file and db_tls_key_file go together" \
	--db_tls required --db_tls_cert_file /etc/hostname
expect_error "no host check without own CA" "db_tls_verify_host = 0 needs db_tls_ca_file" \
	--db_tls required --db_tls_verify_host 0
expect_error "CA file missing" "db_tls_ca_file: cannot read '$T_DIR/nope.pem': No such file or directory" \
	--db_tls required --db_tls_ca_file "$T_DIR/nope.pem"
expect_error "CA file a directory" "db_tls_ca_file: '$T_DIR' is not a regular file" \
	--db_tls required --db_tls_ca_file "$T_DIR"

# The state file need not exist (nor its directory), but must not be a directory.
expect_error "state_file a directory" "state_file: '$T_DIR' is not a regular file" --state_file "$T_DIR"
expect_error "state_file in a missing directory accepted" "db_password_file: cannot read '$T_DIR/nope'" \
	--state_file "$T_DIR/no/such/dir/x.state" --db_password_file "$T_DIR/nope"
expect_error "fallback_reserve_ms just below the window accepted" \
	"db_password_file: cannot read '$T_DIR/nope'" --lease_window_ms 1000 --lease_extend_ms 500 \
	--fallback_reserve_ms 999 --db_password_file "$T_DIR/nope"

# --help documents every setting, and the sample config uses exactly those keys.
help=$("$IDSERVER" --help)
keys=$(grep -E '^[a-z_]+ *=' "$ROOT/idserver.conf" | sed 's/ *=.*//' | sort)
hkeys=$(printf '%s\n' "$help" | grep -oE '^  --[a-z_]+ (N|STR)' | sed 's/^  --//; s/ .*//' | sort)
[ "$keys" = "$hkeys" ] || fail "idserver.conf keys differ from --help: $(diff <(echo "$keys") <(echo "$hkeys") | tr '\n' ' ')"
# ... and the settings table of docs/operations.md lists them all.
for k in $hkeys; do
	grep -q "\`$k\`" "$ROOT/docs/operations.md" || fail "docs/operations.md does not document $k"
done
# ... and all three, with the man page's settings, are written from the settings
# table (src/config.c): regenerating them changes nothing.
out=$(BUILD=$BUILD "$ROOT/scripts/gen-settings.sh" --check 2>&1) ||
	fail "settings described apart from src/config.c's table: $(head -c 800 <<<"$out")"
out=$("$IDSERVER" --dump-settings xml 2>&1) && fail "--dump-settings xml exited 0"
grep -qF "unknown format 'xml'" <<<"$out" || fail "--dump-settings xml: $out"

# --version: name and version, exit 0, on every command; the version is defined
# once (include/idgen.h) and the man pages carry the same.
ver=$(sed -n 's/^#define IDGEN_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' "$ROOT/include/idgen.h")
[ -n "$ver" ] || fail "no IDGEN_VERSION in include/idgen.h"
for cmd in idserver idgenctl idgen; do
	out=$("$BUILD/$cmd" --version) || fail "$cmd --version exited $?"
	[ "$out" = "$cmd $ver" ] || fail "$cmd --version printed '$out', want '$cmd $ver'"
done
out=$("$IDSERVER" --config /nonexistent.conf --version) || fail "idserver --config X --version exited $?"
[ "$out" = "idserver $ver" ] || fail "idserver --config X --version printed '$out'"
for page in idserver.8 idgenctl.8 idgen.1; do
	grep -q "^\.TH .*\"idgen $ver\"" "$ROOT/man/$page" || fail "man/$page: .TH does not carry idgen $ver"
done

# --check-config loads what a start or a reload would (settings, certificates and
# keys, CA files, the tokens file), prints ok and exits 0, or names the first
# problem and exits 1; it listens on nothing and reaches no database (no pair is
# up: a start would wait for it), so it returns at once.
tls_ca ca
tls_leaf srv ca
tls_leaf other ca
tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
printf 'alice:%s\nbob:%s:ro\n' "$(tok)" "$(tok)" >"$T_DIR/tokens"
echo pw >"$T_DIR/pw"
cat >"$T_DIR/check.conf" <<EOF
listen_port = $SVC_PORT
odd_port = $ODD_PORT
even_port = $EVEN_PORT
state_file = $T_DIR/check.state
db_password_file = $T_DIR/pw
listen_tls = on
tls_cert_file = $TLS_DIR/srv-cert.pem
tls_key_file = $TLS_DIR/srv-key.pem
tls_verify_client = optional
tls_ca_file = $TLS_DIR/ca-cert.pem
auth_tokens_file = $T_DIR/tokens
db_tls = required
db_tls_ca_file = $TLS_DIR/ca-cert.pem
EOF
# check_config WANT_RC NEEDLE ARGS...: idserver --check-config --config check.conf ARGS.
check_config() {
	local want=$1 needle=$2 rc=0 out
	shift 2
	out=$(timeout 5 "$IDSERVER" --check-config --config "$T_DIR/check.conf" "$@" 2>&1) || rc=$?
	[ $rc -eq "$want" ] || fail "--check-config $*: exit $rc, want $want: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "--check-config $*: not one line: $out"
	grep -qF -- "$needle" <<<"$out" || fail "--check-config $*: '$out' lacks '$needle'"
	! ss -Htln "sport = :$SVC_PORT" | has . || fail "--check-config $*: something listens on $SVC_PORT"
	[ ! -e "$T_DIR/check.state" ] || fail "--check-config $*: the state file was written"
}
t0=$SECONDS
check_config 0 ok
[ "$(timeout 5 "$IDSERVER" --check-config --config "$T_DIR/check.conf" 2>/dev/null)" = ok ] ||
	fail "--check-config: stdout is not 'ok'"
check_config 0 ok --http_port $((SVC_PORT + 1)) --http_tls on \
	--http_tls_cert_file "$TLS_DIR/other-cert.pem" --http_tls_key_file "$TLS_DIR/other-key.pem"
[ $((SECONDS - t0)) -le 3 ] || fail "--check-config took $((SECONDS - t0)) s (did it wait for a database?)"
check_config 1 "tls_cert_file: cannot read '$T_DIR/nope.pem'" --tls_cert_file "$T_DIR/nope.pem"
check_config 1 "cannot load the certificate '$T_DIR/tokens'" --tls_cert_file "$T_DIR/tokens"
check_config 1 "cannot load the key '$TLS_DIR/other-key.pem': " --tls_key_file "$TLS_DIR/other-key.pem"
check_config 1 "key values mismatch (tls_key_file)" --tls_key_file "$TLS_DIR/other-key.pem"
check_config 1 "cannot load the client CA '$T_DIR/pw'" --tls_ca_file "$T_DIR/pw"
check_config 1 "db_tls_ca_file: cannot load '$T_DIR/pw' as CA certificates" --db_tls_ca_file "$T_DIR/pw"
check_config 1 "db_tls_key_file: cannot load" --db_tls_cert_file "$TLS_DIR/srv-cert.pem" \
	--db_tls_key_file "$TLS_DIR/other-key.pem"
check_config 1 "db_password_file: cannot read '$T_DIR/nope'" --db_password_file "$T_DIR/nope"
check_config 1 "no cipher match (tls_ciphers)" --tls_ciphers RC4-MD5
check_config 1 "(tls_ciphersuites)" --tls_ciphersuites TLS_NO_SUCH_SUITE
printf 'alice:%s\nbob:x:y:z:w\n' "$(tok)" >"$T_DIR/tokens.bad"
check_config 1 "line 2" --auth_tokens_file "$T_DIR/tokens.bad"
check_config 1 "auth_tokens_file: cannot read '$T_DIR/no-tokens'" --auth_tokens_file "$T_DIR/no-tokens"
check_config 1 "unknown option '--bogus'" --bogus 1
printf 'no_such_key = 1\n' >>"$T_DIR/check.conf"
check_config 1 "check.conf:14: unknown setting 'no_such_key'"
log "--check-config: ok on 2 good configs, the problem named (exit 1) on 14 bad ones"

# Flags win over the file; the password never shows in ps or logs.
pair_up
cp "$ROOT/idserver.conf" "$T_DIR/svc.conf"
sed -i "s|^db_password_file.*|db_password_file = $T_DIR/db/db_password|; s/^listen_port.*/listen_port = 1/" "$T_DIR/svc.conf"
"$IDSERVER" --config "$T_DIR/svc.conf" --listen_port "$SVC_PORT" --odd_port "$ODD_PORT" \
	--even_port "$EVEN_PORT" --state_file "$T_DIR/svc.state" >"$T_DIR/svc.log" 2>&1 &
PIDS+=($!)
wait_for "service on the flag's port" 10 bash -c "[ \"\$(printf 'PING\n' | nc -N 127.0.0.1 $SVC_PORT 2>/dev/null)\" = PONG ]"
pw=$(cat "$T_DIR/db/db_password")
! grep -q -- "$pw" "/proc/${PIDS[-1]}/cmdline" || fail "password in the command line"
! grep -q -- "$pw" "$T_DIR/svc.log" || fail "password in the log"

# log_level filters, log_format = json writes one object a line (time, level,
# message); an unknown word is refused like any bad value.
expect_error "log_level word" "log_level: 'verbose' is not one of debug|info|warn|error" --log_level verbose
expect_error "log_format word" "log_format: 'xml' is not one of text|json" --log_format xml
# logrun NAME ARGS...: an idserver with ARGS until it answers PING, then drained.
logrun() {
	local name=$1 pid
	shift
	IDGEN_DB_PASSWORD=$pw "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
		--listen_port "$SVC_PORT" --state_file "$T_DIR/$name.state" "$@" >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_for "$name answering PING" 10 bash -c "[ \"\$(printf 'PING\n' | nc -N 127.0.0.1 $SVC_PORT 2>/dev/null)\" = PONG ]"
	kill -TERM "$pid"
	wait_for "$name exit" 15 bash -c "! kill -0 $pid 2>/dev/null"
}
# jsonlog FILE LEVELS: every line one JSON object with exactly time, level, message,
# a level of LEVELS (a regex); prints the levels seen.
jsonlog() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import json, re, sys
seen = set()
for n, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    assert list(o) == ["time", "level", "message"], (n, line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), (n, line)
    assert re.fullmatch(sys.argv[2], o["level"]), (n, line)
    seen.add(o["level"])
print(" ".join(sorted(seen)))
PY
}
kill -TERM "${PIDS[-1]}"
wait_for "service exit" 15 bash -c "! kill -0 ${PIDS[-1]} 2>/dev/null"
logrun json --log_format json
seen=$(jsonlog "$T_DIR/json.log" 'info|warn|error') || fail "log_format = json: $(head -n 3 "$T_DIR/json.log")"
has '"message":"idserver starting: odd 127.0.0.1' "$T_DIR/json.log" || fail "json log lacks the start line"
has '"message":"idserver stopped"' "$T_DIR/json.log" || fail "json log lacks the stop line"
# An odd server nobody listens on: warn lines, and no info line at warn.
logrun warn --log_format json --log_level warn --odd_port 1 --connect_timeout_ms 100
seen2=$(jsonlog "$T_DIR/warn.log" 'warn|error') || fail "log_level = warn: $(grep -m3 -v '"warn"' "$T_DIR/warn.log")"
has '"level":"warn","message":"odd ticket server unreachable at start' "$T_DIR/warn.log" ||
	fail "log_level = warn lacks the warn line: $(head -n 3 "$T_DIR/warn.log")"
logrun text --log_level error --odd_port 1 --connect_timeout_ms 100
[ ! -s "$T_DIR/text.log" ] || fail "log_level = error wrote: $(head -n 3 "$T_DIR/text.log")"
NOTIFY_SOCKET=$T_DIR/no.sock logrun debug --log_level debug
has -E '^[0-9T:.-]+Z debug NOTIFY_SOCKET: READY=1' "$T_DIR/debug.log" || fail "log_level = debug: no debug line"
log "json: $(wc -l <"$T_DIR/json.log") lines, levels $seen; warn: levels $seen2; error: none; debug: $(grep -c ' debug ' "$T_DIR/debug.log") debug lines"
log "ok"
