#!/usr/bin/env bash
# Lock-outs by connections that take slots and never complete a request that
# returns IDs (issue 31, items 1 and 2), at a reduced scale: max_clients and
# grpc_max_connections 50. Text/RESP: 50 connections from two addresses, each
# sent one PING and repeats it every 2 s. gRPC: 50 connections from ten
# addresses, each with a stream that never ends and the HEADERS of a new one
# every 2 s (lockout.py). While they hold every slot, a new well-behaved client
# (redis-cli; grpcio) must be served within 1 s, three times on each port: it
# takes the slot of the connection least recently served, which is closed with
# an error naming the setting. The same with auth_tokens_file set, the
# attackers tokenless, the clients with a valid token; a client with a token
# served before the attack keeps its idle connection. Each port logs one line
# for the episode and counts every eviction. IDs never repeat.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
grpc_stubs
ATTACK=$(dirname "$0")/lockout.py
IDS=$T_DIR/ids.txt
: >"$IDS"
MAX=50
TOK=client-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf 'client:%s\n' "$TOK" >"$T_DIR/tokens"

# start NAME PORT [flags]: an idserver whose probe authenticates when TOKEN is set.
start() {
	local name=$1 port=$2 pid
	shift 2
	IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$port" --state_file "$T_DIR/$name.state" \
		--max_clients "$MAX" --grpc_max_connections "$MAX" "$@" >"$T_DIR/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "${name}_PID=$pid"
	for _ in $(seq 1 100); do
		[ "$(qt "$port" 'PING\n' 2>/dev/null)" = PONG ] && return 0
		alive "$pid" || fail "$name exited at start: $(tail -n 3 "$T_DIR/$name.log")"
		sleep 0.1
	done
	fail "$name did not answer PING on port $port within 10 s"
}
# qt PORT LINES: the text protocol, after AUTH when TOKEN is set (its OK dropped).
qt() {
	local p=$1
	shift
	if [ -n "$TOKEN" ]; then q "$p" "AUTH $TOKEN\\n$*" | sed 1d; else q "$p" "$@"; fi
}
st() { qt "$1" 'STATS\n' | awk -v n="$2" '$1 == "STAT" && $2 == n { print $3 }'; }
# attack NAME KIND PORT COUNT SRC...: COUNT attackers renewing every 2 s (each
# one evicted connects again at once); waits for READY.
attack() {
	local name=$1 kind=$2 port=$3 n=$4
	shift 4
	"$PY" "$ATTACK" "$kind" "$port" "$n" 2 40 "$@" >"$T_DIR/$name.out" 2>&1 &
	ATTACK_PID=$!
	PIDS+=("$ATTACK_PID")
	wait_for "$name: $n connections" 20 grep -q READY "$T_DIR/$name.out"
	grep -q "READY open=$n refused=0" "$T_DIR/$name.out" ||
		fail "$name: $(head -n 1 "$T_DIR/$name.out")"
	sleep 2.5	# one renewal (PING, new HEADERS) before the clients come
}
# stop_attack NAME: ends it and prints how many of its connections were evicted.
stop_attack() {
	kill -TERM "$ATTACK_PID" 2>/dev/null
	wait_for "$1's report" 10 grep -q DONE "$T_DIR/$1.out"
	awk '$1 == "CLOSED" { split($3, e, "="); print e[2] }' "$T_DIR/$1.out"
}
ms() { echo $(($(date +%s%N) / 1000000)); }

# phase LABEL PORT GRPC_PORT: both attacks and both clients on one idserver.
phase() {
	local label=$1 port=$2 gp=$3 i n t0 out dt ev hold=
	# With tokens: a client served once, then idle, keeps its slot through the
	# tokenless attack (connections never served go first).
	if [ -n "$TOKEN" ]; then
		"$PY" - "$port" "$TOKEN" "$T_DIR/$label-hold" >"$T_DIR/$label-hold.out" 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
f = s.makefile("rb")
s.sendall(b"AUTH %s\nID\n" % sys.argv[2].encode())
print(f.readline().strip().decode(), f.readline().strip().decode(), flush=True)
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)
s.sendall(b"ID\n")
print("AFTER", f.readline().strip().decode(), flush=True)
PY
		hold=$!
		PIDS+=("$hold")
		wait_for "$label: the held client served" 10 grep -q '^OK [0-9]' "$T_DIR/$label-hold.out"
	fi
	# Text/RESP: 25 connections from each of two addresses (with the held
	# client, one less: the slots are full, and no attacker's reconnection
	# finds all of them full forever, which would evict in a loop).
	n=$MAX
	[ -z "$hold" ] || n=$((MAX - 1))
	attack "$label-text" text "$port" "$n" 127.0.0.2 127.0.0.3
	for i in 1 2 3; do
		t0=$(ms)
		if [ -n "$TOKEN" ]; then
			out=$(timeout 5 redis-cli -p "$port" -a "$TOKEN" --no-auth-warning ID 2>&1)
		else
			out=$(timeout 5 redis-cli -p "$port" ID 2>&1)
		fi
		dt=$(($(ms) - t0))
		[[ $out =~ ^[0-9]+$ ]] || fail "$label: redis-cli $i while $MAX idle connections hold max_clients: '$out' after $dt ms"
		[ "$dt" -lt 1000 ] || fail "$label: redis-cli $i served after $dt ms"
		echo "$out 1" >>"$IDS"
		log "$label: redis-cli $i got ID $out in $dt ms (max_clients $MAX held by idle connections)"
		sleep 0.5
	done
	ev=$(stop_attack "$label-text")
	[ "$ev" -ge 3 ] || fail "$label: $ev text/RESP attackers were told they were evicted"
	# gRPC: five connections from each of ten addresses.
	# shellcheck disable=SC2046
	attack "$label-grpc" "$GRPC_KIND" "$gp" "$MAX" $(seq -f '127.0.0.%g' 10 19)
	for i in 1 2 3; do
		out=$(grpc_client "$gp" first "$IDS" $TOKEN 2>&1) ||
			fail "$label: grpcio call $i while $MAX stalled connections hold grpc_max_connections: $out"
		dt=${out##* }
		[ "$dt" -lt 1000 ] || fail "$label: grpcio call $i served after $dt ms"
		log "$label: grpcio call $i got an ID in $dt ms (grpc_max_connections $MAX held by stalled streams)"
		sleep 0.5
	done
	ev=$(stop_attack "$label-grpc")
	[ "$ev" -ge 3 ] || fail "$label: $ev gRPC attackers were told they were evicted"
	if [ -n "$hold" ]; then
		touch "$T_DIR/$label-hold"
		wait "$hold"
		grep -qE '^AFTER [0-9]+$' "$T_DIR/$label-hold.out" ||
			fail "$label: the client served before the attack lost its slot: $(tail -n 1 "$T_DIR/$label-hold.out")"
		awk '$1 == "OK" { print $2, 1 } $1 == "AFTER" { print $2, 1 }' "$T_DIR/$label-hold.out" >>"$IDS"
		log "$label: the client with a token served before the attack kept its connection"
	fi
	# Counted, and logged once per port for the episode.
	[ "$(st "$port" evicted_connections)" -ge 3 ] || fail "$label: evicted_connections $(st "$port" evicted_connections)"
	[ "$(st "$port" grpc_evicted)" -ge 3 ] || fail "$label: grpc_evicted $(st "$port" grpc_evicted)"
	[ "$(grep -c 'text/RESP port at max_clients' "$T_DIR/$label.log")" = 1 ] ||
		fail "$label: $(grep -c 'text/RESP port at max_clients' "$T_DIR/$label.log") log lines for one text/RESP episode"
	[ "$(grep -c 'gRPC at grpc_max_connections' "$T_DIR/$label.log")" = 1 ] ||
		fail "$label: $(grep -c 'gRPC at grpc_max_connections' "$T_DIR/$label.log") log lines for one gRPC episode"
	log "$label: evicted_connections $(st "$port" evicted_connections), grpc_evicted $(st "$port" grpc_evicted)"
}

pair_up
TOKEN='' GRPC_KIND=grpc
start open "$SVC_PORT" --grpc_port $((SVC_PORT + 1))
wait_buffered "$SVC_PORT" st
phase open "$SVC_PORT" $((SVC_PORT + 1))
TOKEN=$TOK GRPC_KIND=grpc-token
start tokens $((SVC_PORT + 2)) --grpc_port $((SVC_PORT + 3)) --auth_tokens_file "$T_DIR/tokens"
wait_buffered $((SVC_PORT + 2)) st
phase tokens $((SVC_PORT + 2)) $((SVC_PORT + 3))

n=$(check_unique "$IDS") || fail "DUPLICATE IDs"
log "ok: $n IDs, no duplicate"
