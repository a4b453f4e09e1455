#!/usr/bin/env bash
# Flags and config file: clear one-line errors, --help matches the sample config.
. "$(dirname "$0")/lib.sh"

# expect_error WHAT NEEDLE ARGS...: exit 2 with one line naming the problem.
expect_error() {
	local what=$1 needle=$2 rc=0 out
	shift 2
	out=$("$IDSERVER" "$@" 2>&1) || rc=$?
	[ $rc -eq 2 ] || fail "$what: exit $rc, want 2"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$what: not one line: $out"
	grep -q -- "$needle" <<<"$out" || fail "$what: '$out' lacks '$needle'"
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
expect_error "password file" "db_password_file: cannot read" --db_password_file /nonexistent
expect_error "bounds relation" "reprobe_max_ms" --reprobe_min_ms 500 --reprobe_max_ms 100

# --help documents every setting, and the sample config uses exactly those keys.
help=$("$IDSERVER" --help)
keys=$(grep -E '^[a-z_]+ *=' "$ROOT/idserver.conf" | sed 's/ *=.*//' | sort)
hkeys=$(printf '%s\n' "$help" | grep -oE '^  --[a-z_]+ (N|STR)' | sed 's/^  --//; s/ .*//' | sort)
[ "$keys" = "$hkeys" ] || fail "idserver.conf keys differ from --help: $(diff <(echo "$keys") <(echo "$hkeys") | tr '\n' ' ')"
# ... and the README's settings table lists them all.
for k in $hkeys; do
	grep -q "\`$k\`" "$ROOT/README.md" || fail "README does not document $k"
done

# Flags win over the file; the password never shows in ps or logs.
pair_up
cp "$ROOT/idserver.conf" "$T_DIR/svc.conf"
sed -i "s|^db_password_file.*|db_password_file = $T_DIR/db/db_password|; s/^listen_port.*/listen_port = 1/" "$T_DIR/svc.conf"
"$IDSERVER" --config "$T_DIR/svc.conf" --listen_port "$SVC_PORT" --odd_port "$ODD_PORT" \
	--even_port "$EVEN_PORT" >"$T_DIR/svc.log" 2>&1 &
PIDS+=($!)
wait_for "service on the flag's port" 10 bash -c "[ \"\$(printf 'PING\n' | nc -N 127.0.0.1 $SVC_PORT 2>/dev/null)\" = PONG ]"
pw=$(cat "$T_DIR/db/db_password")
! grep -q -- "$pw" "/proc/${PIDS[-1]}/cmdline" || fail "password in the command line"
! grep -q -- "$pw" "$T_DIR/svc.log" || fail "password in the log"
log "ok"
