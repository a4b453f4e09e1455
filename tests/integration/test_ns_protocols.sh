#!/usr/bin/env bash
# Namespaces as every protocol names one (docs/protocols.md, Namespaces): the
# text protocol (netcat), RESP (redis-cli, redis-py), HTTP (curl), gRPC
# (grpcio, metadata idgen-namespace) and libidgen (idgen --ns). On each:
# (a) naming default takes IDs of the default sequence, (b) an unknown name is
# that protocol's unknown-namespace error, (c) a bad name (a-b, 49 bytes) is a
# bad request, (d) the form without a namespace is unchanged; and (served_checks,
# at the end) a namespace created while idserver runs serves IDs of its own
# sequence on every protocol, and its buffered IDs show in STATS, INFO, /stats
# and /metrics alike.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
IDGEN=$BUILD/idgen
grpc_stubs
pair_up
GP=$((SVC_PORT + 1))
HP=$((SVC_PORT + 2))
# recheck_ms short: served_checks' namespace is found soon after its creation.
idserver_start svc "$SVC_PORT" --grpc_port "$GP" --http_port "$HP" --recheck_ms 300
wait_buffered "$SVC_PORT"
URL=http://127.0.0.1:$HP
LONG=$(printf 'n%.0s' $(seq 1 49))
NONS='unknown namespace (idgenctl ns list)'
BADNS='a namespace name is 1..48 letters, digits or _'
IDS=$T_DIR/ids.txt	# every ID taken, "first count", for check_unique
: >"$IDS"

# ticket_ids WHAT ID...: each a ticket ID (the default sequence's region), kept.
ticket_ids() {
	local what=$1 i
	shift
	[ $# -gt 0 ] || fail "$what: no ID"
	for i in "$@"; do
		[[ $i =~ ^[1-9][0-9]*$ ]] && [ "$i" -lt 9007199254740992 ] ||
			fail "$what: '$i' is not a ticket ID"
		echo "$i 1" >>"$IDS"
	done
}

# counted WHAT NAME BEFORE N: STAT NAME rose by exactly N since BEFORE.
counted() {
	local now
	now=$(stat "$SVC_PORT" "$2")
	[ "$now" = $(($3 + $4)) ] || fail "$1: $2 went $3 -> $now, want +$4"
}

# served_checks: a namespace idserver serves, on every protocol: orders (B_N 10)
# created while idserver runs; IDs of it through each protocol's form, unique
# within it (every protocol draws from its one sequence), a BLOCK above B_N
# refused as RANGE (libidgen: not IDGEN_ENONS). test_ns_serve checks serving
# itself (many namespaces, restarts, policies) over text and RESP.
served_checks() {
	local ord=$T_DIR/orders.txt out rc first n
	: >"$ord"
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD= \
		"$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
		ns create orders --block-size 10 >"$T_DIR/ctl.out" 2>&1 ||
		fail "idgenctl ns create orders: $(tail -n 3 "$T_DIR/ctl.out")"
	wait_for "orders served" 10 bash -c "[[ \$(printf 'ID orders\n' | nc -N 127.0.0.1 $SVC_PORT) =~ ^[0-9]+\$ ]]"
	# ns_ids WHAT ID...: IDs of orders, kept apart from the default sequence's.
	ns_ids() {
		local what=$1 i
		shift
		[ $# -gt 0 ] || fail "orders, $what: no ID"
		for i in "$@"; do
			[[ $i =~ ^[1-9][0-9]*$ ]] || fail "orders, $what: '$i' is not an ID"
			echo "$i 1" >>"$ord"
		done
	}
	out=$(q "$SVC_PORT" 'ID orders
IDS 3 orders
BLOCK 5 orders
BLOCK 11 orders
')
	read -r first n <<<"$(printf '%s\n' "$out" | sed -n 3p)"
	[ "$n" = 5 ] || fail "orders, text BLOCK 5: $out"
	[ "$(printf '%s\n' "$out" | sed -n 4p)" = "ERR RANGE BLOCK n is at most the namespace's block size B = 10" ] ||
		fail "orders, text BLOCK 11: $out"
	echo "$first 5" >>"$ord"
	ns_ids text $(printf '%s\n' "$out" | sed -n 1,2p)
	ns_ids redis-cli $(rcli ID orders) $(rcli IDS 3 orders)
	read -r first n <<<"$(rcli BLOCK 5 orders | tr '\n' ' ')"
	[ "$n" = 5 ] || fail "orders, redis-cli BLOCK 5: $first $n"
	echo "$first 5" >>"$ord"
	ns_ids redis-py $($PY -c 'import sys, redis
r = redis.Redis(port=int(sys.argv[1]), socket_timeout=5)
print(r.execute_command("ID", "orders"), *r.execute_command("IDS", 3, "orders"))' "$SVC_PORT")
	ns_ids HTTP $(curl -s "$URL/v1/id?ns=orders" "$URL/v1/ids?count=3&ns=orders" | $PY -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(" ".join(d.get("ids_str") or [d["id_str"]]))')
	out=$(curl -s "$URL/v1/block?count=5&ns=orders")
	first=$($PY -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["count"] == 5, d; print(d["first_str"])' "$out") ||
		fail "orders, HTTP block: $out"
	echo "$first 5" >>"$ord"
	grpc_client "$GP" ns orders >"$T_DIR/grpc-orders.txt" || fail "grpc orders: $(cat "$T_DIR/grpc-orders.txt")"
	grep -q '^ID OK [0-9]' "$T_DIR/grpc-orders.txt" && grep -q '^BATCH OK [0-9]*,[0-9]*,[0-9]*$' "$T_DIR/grpc-orders.txt" ||
		fail "grpc orders: $(cat "$T_DIR/grpc-orders.txt")"
	ns_ids gRPC $(awk '{ print $3 }' "$T_DIR/grpc-orders.txt" | tr ',' ' ')
	ns_ids idgen "$("$IDGEN" -s "$S" --ns orders id)" $("$IDGEN" -s "$S" --ns orders ids 3)
	read -r first n < <("$IDGEN" -s "$S" --ns orders block 5)
	[ "$n" = 5 ] || fail "orders, idgen block 5: $first $n"
	echo "$first 5" >>"$ord"
	rc=0
	"$IDGEN" -s "$S" --ns orders block 11 2>"$T_DIR/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "no IDs held and no idserver could give any: ERR RANGE BLOCK n is at most" "$T_DIR/err" ||
		fail "orders, idgen block 11: exit $rc, $(cat "$T_DIR/err")"
	n=$(check_unique "$ord") || fail "orders: an ID repeated"
	log "served namespace orders: $n IDs on every protocol, no duplicate; BLOCK 11 refused (B_N 10)"
}

log "text protocol (netcat)"
t0=$(stat "$SVC_PORT" ids_ticket)
e0=$(stat "$SVC_PORT" err_unknown_ns)
out=$(q "$SVC_PORT" 'ID\nID default\nIDS 3 default\nBLOCK 5 default\nIDS 2\n')
[ "$(printf '%s\n' "$out" | wc -l)" = 5 ] || fail "text: 5 requests gave: $out"
read -r -a l4 <<<"$(printf '%s\n' "$out" | sed -n 4p)"
[ "${l4[1]}" = 5 ] || fail "text: BLOCK 5 default replied '${l4[*]}'"
ticket_ids text $(printf '%s\n' "$out" | sed -n '1,3p;5p') "${l4[0]}"
counted text ids_ticket "$t0" 12
out=$(q "$SVC_PORT" "ID nosuch\nIDS 3 nosuch\nBLOCK 5 Default\nID a-b\nIDS 3 $LONG\nIDS 0 nosuch\nPING\n")
want=$(printf '%s\n' "ERR RANGE $NONS" "ERR RANGE $NONS" "ERR RANGE $NONS" \
	"ERR BADREQ $BADNS" "ERR BADREQ $BADNS" "ERR RANGE n must be 1..1000" PONG)
[ "$out" = "$want" ] || fail "text errors: $out"
counted text err_unknown_ns "$e0" 3
[ "$(q "$SVC_PORT" 'ID a b\n')" = "ERR BADREQ unexpected argument" ] || fail "text: ID a b"

log "RESP (redis-cli)"
rcli() { timeout 10 redis-cli -p "$SVC_PORT" "$@"; }
t0=$(stat "$SVC_PORT" ids_ticket)
e0=$(stat "$SVC_PORT" err_unknown_ns)
ticket_ids redis-cli $(rcli ID) $(rcli ID default) $(rcli IDS 3 default) $(rcli IDS 2)
read -r first n <<<"$(rcli BLOCK 4 default | tr '\n' ' ')"
[ "$n" = 4 ] || fail "redis-cli BLOCK 4 default: $first $n"
ticket_ids redis-cli "$first"
counted redis-cli ids_ticket "$t0" 11
for args in "ID nosuch" "IDS 3 nosuch" "BLOCK 5 nosuch"; do
	out=$(rcli $args 2>&1)
	[[ $out == *"RANGE $NONS"* ]] || fail "redis-cli $args: $out"
done
counted redis-cli err_unknown_ns "$e0" 3
for args in "ID a-b" "IDS 3 $LONG"; do
	out=$(rcli $args 2>&1)
	[[ $out == *"BADREQ $BADNS"* ]] || fail "redis-cli $args: $out"
done
out=$(rcli ID a b 2>&1)
[[ $out == *"wrong number of arguments for 'id' command"* ]] || fail "redis-cli ID a b: $out"
# The command table says so: ID's arity -1, IDS's second argument optional.
rcli COMMAND INFO id | sed -n 2p | has -x -- -1 || fail "COMMAND INFO id: $(rcli COMMAND INFO id)"
rcli COMMAND DOCS ids | tr '\n' ' ' | has 'name ns type string flags optional' ||
	fail "COMMAND DOCS ids: $(rcli COMMAND DOCS ids | tr '\n' ' ')"

log "RESP (redis-py)"
e0=$(stat "$SVC_PORT" err_unknown_ns)
$PY - "$SVC_PORT" "$LONG" >"$T_DIR/redis-py.txt" <<'PY' || fail "redis-py: $(tail -n 3 "$T_DIR/redis-py.txt")"
import sys
import redis
r = redis.Redis(port=int(sys.argv[1]), socket_timeout=5)
ids = [r.execute_command("ID"), r.execute_command("ID", "default")]
ids += r.execute_command("IDS", 3, "default") + r.execute_command("IDS", 2)
first, n = r.execute_command("BLOCK", 4, "default")
assert n == 4, n
ids.append(first)
def err(*cmd):
    try:
        r.execute_command(*cmd)
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("no error: %r" % (cmd,))
for cmd in (("ID", "nosuch"), ("IDS", 3, "nosuch")):
    e = err(*cmd)
    assert e == "RANGE unknown namespace (idgenctl ns list)", (cmd, e)
for cmd in (("ID", "a-b"), ("BLOCK", 5, sys.argv[2])):
    e = err(*cmd)
    assert e.startswith("BADREQ a namespace name"), (cmd, e)
# A pipeline is MULTI/EXEC: the unknown namespace is that command's error alone.
p = r.pipeline()
p.execute_command("ID", "default").execute_command("ID", "nosuch").execute_command("ID")
got = p.execute(raise_on_error=False)
assert isinstance(got[1], redis.ResponseError) and "RANGE" in str(got[1]), got
ids += [got[0], got[2]]
for i in ids:
    assert isinstance(i, int) and 0 < i < 2**53, ids
    print(i)
PY
ticket_ids redis-py $(cat "$T_DIR/redis-py.txt")
counted redis-py err_unknown_ns "$e0" 3

log "HTTP (curl)"
# get PATH: "STATUS BODY" of a GET.
get() { curl -s -o "$T_DIR/body" -w '%{http_code}' "$URL$1" && echo " $(cat "$T_DIR/body")"; }
t0=$(stat "$SVC_PORT" ids_ticket)
e0=$(stat "$SVC_PORT" err_unknown_ns)
for p in /v1/id '/v1/id?ns=default' '/v1/ids?count=3&ns=default' '/v1/ids?ns=default&count=2' \
    '/v1/block?count=4&ns=default' '/v1/ids?count=2'; do
	read -r code body <<<"$(get "$p")"
	[ "$code" = 200 ] || fail "GET $p: $code $body"
	ticket_ids "GET $p" $($PY -c 'import json, sys
d = json.loads(sys.argv[1])
print(" ".join(d.get("ids_str") or [d.get("id_str") or d["first_str"]]))' "$body")
done
read -r code body <<<"$(curl -s -o "$T_DIR/body" -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"count":2}' "$URL/v1/ids?ns=default")"
[ "$code" = 200 ] || fail "POST /v1/ids?ns=default: $code $(cat "$T_DIR/body")"
ticket_ids "POST ?ns=default" $($PY -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["ids_str"]))' "$T_DIR/body")
counted HTTP ids_ticket "$t0" 15
for p in '/v1/id?ns=nosuch' '/v1/ids?count=3&ns=nosuch' '/v1/block?ns=nosuch&count=5'; do
	out=$(get "$p")
	[ "$out" = "400 {\"error\": {\"code\": \"RANGE\", \"message\": \"$NONS\"}}" ] ||
		[ "$out" = "400 {\"error\":{\"code\":\"RANGE\",\"message\":\"$NONS\"}}" ] || fail "GET $p: $out"
done
counted HTTP err_unknown_ns "$e0" 3
for p in '/v1/id?ns=a-b' "/v1/ids?count=3&ns=$LONG" '/v1/block?count=5&ns=' '/v1/id?ns=a%2Db'; do
	out=$(get "$p")
	[[ $out == "400 "*'"BADREQ"'*"$BADNS"* ]] || fail "GET $p: $out"
done
out=$(curl -s -H 'Accept: text/plain' "$URL/v1/id?ns=nosuch")
[ "$out" = "ERR RANGE $NONS" ] || fail "GET text/plain ?ns=nosuch: $out"
# The document served says so.
curl -s "$URL/v1/openapi.json" | $PY -c 'import json, sys
d = json.load(sys.stdin)
for p in ("/v1/id", "/v1/ids", "/v1/block"):
    for m in ("get", "head", "post"):
        assert any(x["name"] == "ns" and x["in"] == "query" for x in d["paths"][p][m]["parameters"]), (p, m)' ||
	fail "/v1/openapi.json lacks the ns parameter"

log "gRPC (grpcio)"
t0=$(stat "$SVC_PORT" ids_ticket)
e0=$(stat "$SVC_PORT" err_unknown_ns)
for ns in - default; do
	grpc_client "$GP" ns "$ns" >"$T_DIR/grpc-$ns.txt" || fail "grpc ns $ns: $(cat "$T_DIR/grpc-$ns.txt")"
	grep -q '^ID OK [0-9]' "$T_DIR/grpc-$ns.txt" && grep -q '^BATCH OK [0-9]*,[0-9]*,[0-9]*$' "$T_DIR/grpc-$ns.txt" ||
		fail "grpc ns $ns: $(cat "$T_DIR/grpc-$ns.txt")"
	ticket_ids "gRPC $ns" $(awk '{ print $3 }' "$T_DIR/grpc-$ns.txt" | tr ',' ' ')
done
counted gRPC ids_ticket "$t0" 8
out=$(grpc_client "$GP" ns nosuch)
[ "$out" = "$(printf 'ID NOT_FOUND %s\nBATCH NOT_FOUND %s' "$NONS" "$NONS")" ] || fail "grpc nosuch: $out"
counted gRPC err_unknown_ns "$e0" 2
for ns in a-b "$LONG"; do
	out=$(grpc_client "$GP" ns "$ns")
	[ "$out" = "$(printf 'ID INVALID_ARGUMENT %s\nBATCH INVALID_ARGUMENT %s' "$BADNS" "$BADNS")" ] ||
		fail "grpc $ns: $out"
done

log "libidgen (idgen)"
S=127.0.0.1:$SVC_PORT
t0=$(stat "$SVC_PORT" ids_ticket)
e0=$(stat "$SVC_PORT" err_unknown_ns)
ticket_ids "idgen id" "$("$IDGEN" -s "$S" id)" "$("$IDGEN" -s "$S" --ns default id)" \
	"$(IDGEN_NS=default "$IDGEN" -s "$S" id)"
ticket_ids "idgen ids" $("$IDGEN" -s "$S" -n default ids 3)
read -r first n < <("$IDGEN" -s "$S" --ns default block 4)
[ "$n" = 4 ] || fail "idgen block 4: $first $n"
ticket_ids "idgen block" "$first"
counted idgen ids_ticket "$t0" 10
rc=0
"$IDGEN" -s "$S" --ns nosuch id >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
[ "$rc" = 1 ] && [ ! -s "$T_DIR/out" ] || fail "idgen --ns nosuch: exit $rc, $(cat "$T_DIR/out")"
[ "$(cat "$T_DIR/err")" = "idgen: id: namespace nosuch is unknown to the idservers: ERR RANGE $NONS from $S" ] ||
	fail "idgen --ns nosuch said: $(cat "$T_DIR/err")"
rc=0
IDGEN_NS=nosuch "$IDGEN" -s "$S" --json ids 3 2>"$T_DIR/err" || rc=$?
[ "$rc" = 1 ] && grep -q '^{"error":{"code":"service","message":"ids: namespace nosuch is unknown' "$T_DIR/err" ||
	fail "IDGEN_NS=nosuch idgen --json ids 3: exit $rc, $(cat "$T_DIR/err")"
counted idgen err_unknown_ns "$e0" 2
for ns in a-b "$LONG" ""; do
	rc=0
	"$IDGEN" -s "$S" --ns "$ns" id 2>"$T_DIR/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "bad namespace name" "$T_DIR/err" || fail "idgen --ns '$ns': exit $rc, $(cat "$T_DIR/err")"
done

served_checks

# ns_stats_checks: each namespace's buffered IDs in every view of the metrics
# table: STATS (STAT ns_orders_ids_buffered), RESP INFO (its Namespaces
# section), /stats and /metrics (label ns); the same number in all four once
# no refill is in flight (read until two rounds agree, bounded).
ns_stats_checks() {
	local i st info js pm ok=
	for i in $(seq 1 50); do
		st=$(stat "$SVC_PORT" ns_orders_ids_buffered)
		info=$(rcli INFO namespaces | tr -d '\r' | sed -n 's/^ns_orders_ids_buffered://p')
		js=$(curl -s "$URL/stats" | $PY -c 'import json, sys; print(json.load(sys.stdin).get("ns_orders_ids_buffered", ""))')
		pm=$(curl -s "$URL/metrics" | sed -n 's/^idgen_namespace_ids_buffered{ns="orders"} //p')
		[[ $st =~ ^[0-9]+$ ]] || fail "STATS has no ns_orders_ids_buffered: '$st'"
		if [ "$st" = "$info" ] && [ "$st" = "$js" ] && [ "$st" = "$pm" ] &&
			[ "$st" = "$(stat "$SVC_PORT" ns_orders_ids_buffered)" ]; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || fail "ns_orders_ids_buffered: STATS $st, INFO '$info', /stats '$js', /metrics '$pm'"
	rcli INFO namespaces | tr -d '\r' | has -x '# Namespaces' || fail "INFO namespaces: no section header"
	log "namespace orders: $st IDs buffered, alike in STATS, INFO, /stats and /metrics"
}
ns_stats_checks

n=$(check_unique "$IDS")
log "ok: $n IDs of the default sequence, named and not, on every protocol; no duplicate"
