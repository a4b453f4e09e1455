#!/usr/bin/env bash
# The Go client, as docs/clients.md shows it (tests/go/idclient/grpc_ids.go, quoted
# there verbatim): grpc-go with stubs generated from proto/idgen.proto, built
# offline from Debian's packages (`make go`: GOPATH mode over /usr/share/gocode,
# no module proxy). In ticket mode, then in fallback (both MariaDB servers killed
# after the lease is held, the buffered ticket IDs drained): every ID positive
# and in the mode's region, id_str/ids_str equal to the int64 fields, no
# duplicate across both modes; then the bench's grpc-go counter peer
# (tests/go/idpeer) checked with the same client. 21 s to 40 s with a cold
# build cache (a clean tree; quiet or busy machine), 5 s to 7 s warm; `make test-go`
# runs it alone.
. "$(dirname "$0")/lib.sh"

GO=$ROOT/tests/go/idclient
CLIENT=$ROOT/build/go/bin/go-idclient
ROUNDS=10
python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
	"$GO/grpc_ids.go" "$ROOT/docs/clients.md" || fail "docs/clients.md does not quote tests/go/idclient/grpc_ids.go verbatim"
command -v go >/dev/null || fail "go not found (make deps)"
cache=warm
[ -d "$ROOT/build/go-cache" ] || cache=cold
start=$(date +%s%N)
make -s -C "$ROOT" go >"$T_DIR/make-go.log" 2>&1 || fail "make go: $(tail -n 5 "$T_DIR/make-go.log")"
log "make go: $((($(date +%s%N) - start) / 1000000)) ms, build cache $cache"
pair_up
GP=$((SVC_PORT + 2))
idserver_start svc "$SVC_PORT" --grpc_port "$GP" --lease_extend_ms 1000
IDS=$T_DIR/ids.txt
: >"$IDS"
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
wait_buffered "$SVC_PORT"
client() {
	timeout 120 "$CLIENT" "$1" "127.0.0.1:$GP" "$ROUNDS" "$IDS" >"$T_DIR/go-$1.out" 2>&1 ||
		fail "$1: $(tail -n 5 "$T_DIR/go-$1.out")"
	while read -r line; do log "$line"; done <"$T_DIR/go-$1.out"
}
client ticket
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
client fallback
[ "$(stat "$SVC_PORT" mode)" = fallback ] || fail "not in fallback mode: $(stat "$SVC_PORT" mode)"
n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the Go client's calls"
want=$((2 * ROUNDS * (1001 + 101)))
[ "$n" -eq "$want" ] || fail "$n IDs collected, expected $want"
log "ok: $n IDs through grpc-go in both modes, exact, no duplicate"

# The bench's grpc-go counter peer (tests/go/idpeer) answers the same client right.
PP=$((SVC_PORT + 3))
"$ROOT/build/go/bin/go-idpeer" "$PP" >"$T_DIR/go-idpeer.log" 2>&1 &
PIDS+=("$!")
wait_for "go-idpeer listening" 10 nc -z 127.0.0.1 "$PP"
timeout 60 "$CLIENT" ticket "127.0.0.1:$PP" 2 "$T_DIR/peer-ids.txt" >"$T_DIR/go-peer.out" 2>&1 ||
	fail "go-idpeer: $(tail -n 5 "$T_DIR/go-peer.out")"
n=$(check_unique "$T_DIR/peer-ids.txt") || fail "DUPLICATE IDs from go-idpeer"
[ "$n" -eq $((2 * (1001 + 101))) ] || fail "go-idpeer: $n IDs, expected $((2 * (1001 + 101)))"
log "ok: go-idpeer serves the same contract ($n IDs, no duplicate)"
