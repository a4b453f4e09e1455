#!/usr/bin/env bash
# JavaScript clients, as docs/clients.md shows them (tests/js/*_ids.js, quoted
# there verbatim): ioredis with stringNumbers, fetch reading id_str/ids_str,
# grpc-js with proto-loader's longs: String, on Node with the packages pinned in
# tests/js/package-lock.json (`make deps` installs them). In ticket mode, then in
# fallback (both MariaDB servers killed after the lease is held, the buffered
# ticket IDs drained), every ID reaches the program as an exact decimal string,
# never twice, and the HTTP bodies carry numeric IDs only below 2^53. The unsafe
# defaults (ioredis without stringNumbers, longs: Number) are run too: exact in
# ticket mode, repeated IDs in fallback, which is why docs/clients.md avoids them.
# The idgen command's --json output follows the HTTP rule in both modes, with
# the server's decode names and /stats's types.
# ioredis's multi() (MULTI/EXEC) and pipeline() (tests/js/redis_multi.js).
# TypeScript (tests/js/ids.ts, quoted in docs/clients.md verbatim): tsc --noEmit
# --strict against the packages' own type definitions (typescript pinned in
# package-lock.json), then compiled and run by check.js with the JS clients.
# gRPC server reflection (tests/js/reflect.js): grpc-js-reflection-client lists
# the services (v1alpha and v1), builds a client from the served descriptors
# alone and calls both RPCs; one v1 stream answers several requests in turn.
. "$(dirname "$0")/lib.sh"

JS=$ROOT/tests/js
ROUNDS=10
command -v node >/dev/null || fail "node not found (make deps)"
[ -d "$JS/node_modules/ioredis" ] && [ -d "$JS/node_modules/@grpc/grpc-js" ] &&
	[ -d "$JS/node_modules/@grpc/proto-loader" ] && [ -x "$JS/node_modules/.bin/tsc" ] &&
	[ -d "$JS/node_modules/grpc-js-reflection-client" ] || fail "tests/js/node_modules missing: run make deps"
# docs/clients.md's JavaScript section quotes each client file whole.
for f in redis_ids.js http_ids.js grpc_ids.js ids.ts; do
	python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
		"$JS/$f" "$ROOT/docs/clients.md" || fail "docs/clients.md does not quote tests/js/$f verbatim"
done
# The TypeScript client type-checks with --strict against the real type
# definitions of ioredis, @grpc/grpc-js, @grpc/proto-loader and Node; then it is
# compiled for check.js to run (NODE_PATH: the output lives outside tests/js).
"$JS/node_modules/.bin/tsc" -p "$JS/tsconfig.json" --noEmit --strict >"$T_DIR/tsc.out" 2>&1 ||
	fail "tsc --noEmit --strict tests/js/ids.ts: $(head -n 20 "$T_DIR/tsc.out")"
"$JS/node_modules/.bin/tsc" -p "$JS/tsconfig.json" --strict --noEmit false --outDir "$T_DIR/ts" \
	>"$T_DIR/tsc.out" 2>&1 || fail "tsc: $(head -n 20 "$T_DIR/tsc.out")"
log "TypeScript: tests/js/ids.ts passes tsc $("$JS/node_modules/.bin/tsc" --version | awk '{ print $2 }') --noEmit --strict"

pair_up
HP=$((SVC_PORT + 1))
GP=$((SVC_PORT + 2))
idserver_start svc "$SVC_PORT" --http_port "$HP" --grpc_port "$GP" --lease_extend_ms 1000
IDS=$T_DIR/ids.txt
: >"$IDS"
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
wait_buffered "$SVC_PORT"

# js MODE: the clients against the service; their report to the log.
js() {
	(cd "$ROOT" && NODE_PATH=$JS/node_modules timeout 120 node tests/js/check.js "$1" 127.0.0.1 \
		"$SVC_PORT" "$HP" "$GP" "$ROUNDS" "$IDS" "$T_DIR/ts") >"$T_DIR/js-$1.out" 2>&1 ||
		fail "$1: $(tail -n 5 "$T_DIR/js-$1.out")"
	while read -r line; do log "$line"; done <"$T_DIR/js-$1.out"
}

# cli_json MODE: `idgen --json` follows the same rule (its IDs join the rest).
cli_json() {
	local id ids block
	id=$(IDGEN_SERVER=127.0.0.1:$SVC_PORT "$BUILD/idgen" --json id) || fail "idgen --json id"
	ids=$(IDGEN_SERVER=127.0.0.1:$SVC_PORT "$BUILD/idgen" --json ids 3) || fail "idgen --json ids"
	block=$(IDGEN_SERVER=127.0.0.1:$SVC_PORT "$BUILD/idgen" --json block 5) || fail "idgen --json block"
	python3 - "$1" "$id" "$ids" "$block" "$IDS" <<'PY' || fail "$1: idgen --json: $id $ids $block"
import json, sys
mode, out = sys.argv[1], open(sys.argv[5], "a")
small = mode == "ticket"
for text, num, strs, n in ((sys.argv[2], "id", "id_str", 1), (sys.argv[3], "ids", "ids_str", 3),
                           (sys.argv[4], "first", "first_str", 5)):
    d = json.loads(text)
    vals = [int(s) for s in (d[strs] if num == "ids" else [d[strs]])]
    assert all((v < 2**53) == small for v in vals) and (num in d) == small, text
    if small:
        assert d[num] == (vals if num == "ids" else vals[0]), text
    for v in vals if num != "first" else range(vals[0], vals[0] + n):
        out.write("%d 1\n" % v)
PY
	log "$1: idgen --json id, ids 3, block 5: numeric members $([ "$1" = ticket ] && echo present || echo absent)"
	# One vocabulary: idgen --json decode says what HTTP /v1/decode says, and
	# stats --json types each member as HTTP /stats does.
	local first b
	first=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id_str"])' "$id")
	b=$(stat "$SVC_PORT" block_size)
	[ "$("$BUILD/idgen" --json -b "$b" decode "$first")" = "$(curl -s "http://127.0.0.1:$HP/v1/decode/$first")" ] ||
		fail "$1: idgen --json decode $first differs from /v1/decode: $("$BUILD/idgen" --json -b "$b" decode "$first")"
	IDGEN_SERVER=127.0.0.1:$SVC_PORT "$BUILD/idgen" --json stats >"$T_DIR/cli-stats.json" || fail "idgen --json stats"
	curl -s "http://127.0.0.1:$HP/stats" >"$T_DIR/http-stats.json"
	python3 - "$T_DIR/cli-stats.json" "$T_DIR/http-stats.json" <<'PY' || fail "$1: idgen --json stats and /stats differ in names or types"
import json, sys
cli, http = (json.load(open(f)) for f in sys.argv[1:3])
assert cli.keys() == http.keys(), set(cli) ^ set(http)
bad = [k for k in cli if type(cli[k]) is not type(http[k])]
assert not bad, [(k, cli[k], http[k]) for k in bad]
assert all(v < 2**53 for v in cli.values() if isinstance(v, int))
PY
	log "$1: idgen --json decode = /v1/decode; idgen --json stats typed as /stats ($(wc -c <"$T_DIR/cli-stats.json") bytes)"
}

js ticket
cli_json ticket
# Reflection, without proto/: 6 IDs per protocol version join the rest.
(cd "$T_DIR" && timeout 60 node "$JS/reflect.js" 127.0.0.1 "$GP" "$IDS") >"$T_DIR/reflect.out" 2>&1 ||
	fail "reflection: $(tail -n 5 "$T_DIR/reflect.out")"
while read -r line; do log "reflection: $line"; done <"$T_DIR/reflect.out"
# ioredis's default transactions (multi()) and pipelines: 5 x 101 + 101 + 1 IDs.
(cd "$T_DIR" && timeout 60 node "$JS/redis_multi.js" 127.0.0.1 "$SVC_PORT" "$IDS") >"$T_DIR/multi.out" 2>&1 ||
	fail "ioredis multi(): $(tail -n 5 "$T_DIR/multi.out")"
log "$(cat "$T_DIR/multi.out")"
[ "$(stat "$SVC_PORT" mode)" = ticket ] || fail "not in ticket mode"

kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
js fallback
cli_json fallback
[ "$(stat "$SVC_PORT" mode)" = fallback ] || fail "not in fallback mode: $(stat "$SVC_PORT" mode)"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the JavaScript clients"
want=$((2 * (3 * ROUNDS * 1001 + ROUNDS * 3001 + 9) + 12 + 5 * 101 + 101 + 1))
[ "$n" -eq "$want" ] || fail "$n IDs collected, expected $want"
log "ok: $n IDs through ioredis, fetch, grpc-js (JavaScript and TypeScript; with and without reflection) and idgen --json in both modes, exact, no duplicate"
