#!/usr/bin/env bash
# The served OpenAPI document as outside tools take it: @redocly/cli lint (its
# recommended rules) passes on /v1/openapi.json fetched from a running
# idserver (no error; the warnings are logged), openapi-typescript generates
# types from it, and a client on openapi-fetch (tests/js/openapi_client.mts)
# compiles against them with tsc --strict, then calls every operation the
# document defines (tsc refuses the client if one is missing) against the
# server with a real MariaDB pair: in ticket mode, then in fallback (both
# servers killed after the lease is held, the buffered ticket IDs drained).
# Every ID reaches it as a decimal string, the number beside it only below 2^53;
# no ID twice. Packages pinned in tests/js/package-lock.json (make deps).
. "$(dirname "$0")/lib.sh"

JS=$ROOT/tests/js
BIN=$JS/node_modules/.bin
for t in redocly openapi-typescript tsc; do
	[ -x "$BIN/$t" ] || fail "$BIN/$t missing: run make deps"
done
[ -d "$JS/node_modules/openapi-fetch" ] || fail "tests/js/node_modules/openapi-fetch missing: run make deps"
# Redocly: no telemetry, no update check (the test must not need the network).
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true

pair_up
HP=$((SVC_PORT + 1))
idserver_start svc "$SVC_PORT" --http_port "$HP" --lease_extend_ms 1000
wait_buffered "$SVC_PORT"
URL=http://127.0.0.1:$HP
IDS=$T_DIR/ids.txt
: >"$IDS"

# 1. The served document, linted.
C=$T_DIR/client
mkdir -p "$C"
curl -sf -o "$C/openapi.json" "$URL/v1/openapi.json" || fail "GET /v1/openapi.json"
cmp -s "$C/openapi.json" "$ROOT/docs/openapi.json" || fail "/v1/openapi.json is not docs/openapi.json (make all?)"
timeout 60 "$BIN/redocly" lint --extends=recommended --format=stylish "$C/openapi.json" >"$T_DIR/lint.out" 2>&1 ||
	fail "redocly lint: $(grep -E ' error ' "$T_DIR/lint.out" | head -n 10)$(tail -n 3 "$T_DIR/lint.out")"
grep -q 'Your API description is valid' "$T_DIR/lint.out" || fail "redocly lint: $(tail -n 5 "$T_DIR/lint.out")"
log "redocly $("$BIN/redocly" --version 2>/dev/null | tail -n 1) lint: no error," \
	"$(grep -c ' warning ' "$T_DIR/lint.out") warnings ($(awk '$2 == "warning" { print $3 }' "$T_DIR/lint.out" | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }'))"

# 2. Types generated from it, the client compiled against them with --strict.
timeout 60 "$BIN/openapi-typescript" "$C/openapi.json" -o "$C/api.d.ts" >"$T_DIR/gen.out" 2>&1 ||
	fail "openapi-typescript: $(tail -n 5 "$T_DIR/gen.out")"
cp "$JS/openapi_client.mts" "$C/"
ln -s "$JS/node_modules" "$C/node_modules"
cat >"$C/tsconfig.json" <<'EOF'
{
  "compilerOptions": {
    "strict": true,
    "module": "nodenext",
    "target": "es2022",
    "types": ["node"],
    "outDir": "out"
  },
  "files": ["openapi_client.mts"]
}
EOF
timeout 60 "$BIN/tsc" -p "$C/tsconfig.json" --strict >"$T_DIR/tsc.out" 2>&1 ||
	fail "tsc --strict: $(head -n 20 "$T_DIR/tsc.out")"
log "openapi-typescript $(node -p "require('$JS/node_modules/openapi-typescript/package.json').version"):" \
	"$(grep -c 'operations\["' "$C/api.d.ts") operations typed; tsc $("$BIN/tsc" --version | awk '{ print $2 }') --strict compiles the openapi-fetch client"

# 3. Every operation called, in ticket mode and in fallback.
client() {
	(cd "$C" && timeout 60 node out/openapi_client.mjs "$1" "$URL" "$IDS") >"$T_DIR/client-$1.out" 2>&1 ||
		fail "client $1: $(tail -n 5 "$T_DIR/client-$1.out")"
	log "$(tail -n 1 "$T_DIR/client-$1.out")"
}
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
client ticket
[ "$(stat "$SVC_PORT" mode)" = ticket ] || fail "not in ticket mode"
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
client fallback
[ "$(stat "$SVC_PORT" mode)" = fallback ] || fail "not in fallback mode: $(stat "$SVC_PORT" mode)"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs through the generated client"
log "ok: $n IDs through the openapi-fetch client in both modes, no duplicate"
