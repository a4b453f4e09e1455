#!/usr/bin/env bash
# A mixed fault run: one pair, two idserver processes under load for FAULT_SECONDS
# (default 150), a fault every 5-8 s picked by a seeded random plan (FAULT_SEED,
# default 1: the same seed replays the same plan), each fault healed before the next:
#
#   kill_db   one MariaDB server killed (SIGKILL), restarted (db_start)
#   kill_dbs  both killed, restarted: the services must switch to the fallback
#   hang_db   one server hung (SIGSTOP), resumed (SIGCONT)
#   hang_dbs  both hung, resumed: the services must switch to the fallback
#   kill_svc  one idserver killed (SIGKILL), restarted: the new process claims a new
#             worker number (the old window stays reserved, lease_window_ms 300 s)
#   term_svc  one idserver stopped cleanly (SIGTERM), restarted: the lease is released
#
# FAULT_KINDS (default: "default", the six above) selects the kinds of the plan, as
# a comma- or space-separated list of kinds, "default" or "all" (make soak: all).
# Four more kinds go through the network between the idservers and the pair:
#
#   partition_db   one server silently partitioned (delayproxy.py drops the bytes both
#                  ways, connections left open: SIGUSR1), healed (SIGUSR2)
#   partition_dbs  both partitioned, healed: the services must switch to the fallback
#   slow_db        one or both servers 50 ms (+-10) or 200 ms (+-50) away each way for
#                  a few seconds (the proxy's control file and SIGHUP), then 0 again:
#                  both stay up, the prefetch absorbs it
#   flood          hostile clients against one idserver for a few seconds: 1,000 idle
#                  connections, 500 slowloris, 20 pipelining non-readers (flood.py)
#
# When a partition or slow_db kind is selected, each idserver reaches each server
# through a delayproxy.py of its own role (ports ODD_PORT+100, EVEN_PORT+100, or
# FAULT_PROXY_ODD_PORT / FAULT_PROXY_EVEN_PORT), 0 ms while no fault is on, with
# longer database timeouts (a handshake 200 ms away takes several round trips).
#
# Every ID received by any client, over all idbench runs against both services and
# all their restarts, lands in a dump file; at the end all of them are checked
# together: no duplicate, and every Snowflake ID carries a worker number claimed by
# the process that served it, at a timestamp inside that holder's window (checked
# against snapshots of idgen_leases taken after every claim). Ends with one line:
#
#   FAULT RUN VERDICT: seconds= faults= kinds: kill_db= ... ids= duplicates= errors: CONN= TIMEOUT= ...
#
# Connection errors are expected (a killed or stopped idserver drops its clients);
# any other error, a duplicate, a violation, or fewer than FAULT_MIN_IDS IDs fails.
. "$(dirname "$0")/lib.sh"

FAULT_SECONDS=${FAULT_SECONDS:-150}
FAULT_SEED=${FAULT_SEED:-1}
FAULT_MIN_IDS=${FAULT_MIN_IDS:-5000000}
CHUNK=${FAULT_CHUNK_SECONDS:-30}	# one idbench run per service lasts at most this
CONNS=${FAULT_CONNECTIONS:-8}		# per service
PIPE=${FAULT_PIPELINE:-2}
RATE=${FAULT_RATE:-3000}		# requests/s per service (open loop); 0: closed loop
for v in FAULT_SECONDS FAULT_SEED FAULT_MIN_IDS CHUNK CONNS PIPE RATE; do
	[[ ${!v} =~ ^[0-9]+$ ]] || fail "$v must be a number (got '${!v}')"
done
[ "$FAULT_SECONDS" -ge 20 ] || fail "FAULT_SECONDS must be at least 20"

# The kinds of the plan, in this order (the plan draws from this list: the default
# list and weights replay the plans of earlier runs seed for seed).
ALL_KINDS=(kill_db kill_dbs hang_db hang_dbs kill_svc term_svc partition_db partition_dbs slow_db flood)
DEFAULT_KINDS=(kill_db kill_dbs hang_db hang_dbs kill_svc term_svc)
FAULT_KINDS=${FAULT_KINDS:-default}
want=" "
for k in ${FAULT_KINDS//,/ }; do
	case $k in
	default) want+="${DEFAULT_KINDS[*]} " ;;
	all) want+="${ALL_KINDS[*]} " ;;
	*) [[ " ${ALL_KINDS[*]} " == *" $k "* ]] || fail "FAULT_KINDS: unknown kind '$k' (kinds: ${ALL_KINDS[*]}, default, all)"
	   want+="$k " ;;
	esac
done
KINDS=()
for k in "${ALL_KINDS[@]}"; do [[ $want == *" $k "* ]] && KINDS+=("$k"); done
[ ${#KINDS[@]} -gt 0 ] || fail "FAULT_KINDS selects no kind"
USE_PROXY=0
for k in "${KINDS[@]}"; do
	case $k in partition_db | partition_dbs | slow_db) USE_PROXY=1 ;; esac
done
has_kind() { [[ " ${KINDS[*]} " == *" $1 "* ]]; }

PORTS=("$SVC_PORT" "$((SVC_PORT + 1))")
SVC_FLAGS=(--lease_extend_ms 1000)
# Through the proxies: a round trip is up to 500 ms during slow_db, a handshake and
# the connect-time check several of them (test_far.sh: 200 ms away needs seconds).
[ $USE_PROXY = 0 ] || SVC_FLAGS+=(--connect_timeout_ms 3000 --query_timeout_ms 2000)
PROXY_PORT_odd=${FAULT_PROXY_ODD_PORT:-$((ODD_PORT + 100))}
PROXY_PORT_even=${FAULT_PROXY_EVEN_PORT:-$((EVEN_PORT + 100))}
PROXY_PID_odd=0
PROXY_PID_even=0
SVC_PID=(0 0)
INC=(0 0)		# incarnations per service
LOADERS=()
SNAP=0
LAYOUT_EPOCH_MS=1767225600000

# Resume hung servers before lib.sh's cleanup stops them (a stopped mariadbd ignores
# SIGTERM until its 30 s KILL). Only our own pair's PIDs.
resume_dbs() {
	local r p
	for r in odd even; do
		p=$(db_pid "$r" 2>/dev/null) || continue
		[ -n "$p" ] && kill -CONT "$p" 2>/dev/null || true
	done
}
on_cleanup() { resume_dbs; }

# ---------------------------------------------------------------- helpers
st() { stat "${PORTS[$1]}" "$2" 2>/dev/null || true; }
dead() { ! alive "$1"; }
lease_held() { [ "$(st "$1" lease_state)" = held ]; }
mode_is() { [ "$(st "$1" mode)" = "$2" ]; }
both_mode() { mode_is 0 "$1" && mode_is 1 "$1"; }
# Both services see both ticket servers up and serve tickets.
all_up() {
	local i s
	for i in 0 1; do
		s=$(q "${PORTS[$i]}" 'STATS\n' 2>/dev/null) || return 1
		grep -q '^STAT mode ticket' <<<"$s" || return 1
		grep -q '^STAT odd_state up' <<<"$s" || return 1
		grep -q '^STAT even_state up' <<<"$s" || return 1
	done
}
# Neither service counts ROLE as up any more.
not_up() {
	local i
	for i in 0 1; do [ "$(st "$i" "$1_state")" != up ] || return 1; done
}
now_layout_ms() { echo $(($(date +%s%3N) - LAYOUT_EPOCH_MS)); }

# Appends the claimed lease rows of both servers: "snap role worker holder start end claims".
snapshot() {
	local r out
	SNAP=$((SNAP + 1))
	for r in odd even; do
		out=$(db_sql "$r" "SELECT worker, holder, window_start, window_end, claims FROM \
idgen.idgen_leases WHERE claims > 0 ORDER BY worker") || { log "snapshot $SNAP: $r not answering"; continue; }
		[ -z "$out" ] || awk -v s="$SNAP" -v r="$r" '{ print s, r, $0 }' <<<"$out" >>"$T_DIR/leases.txt"
	done
}

# svc_start I: a new incarnation of service I; waits for its lease, records its worker.
svc_start() {
	local i=$1 name pidvar w
	INC[i]=$((INC[i] + 1))
	name=svc${i}_r${INC[i]}
	if [ $USE_PROXY = 1 ]; then
		ODD_PORT=$PROXY_PORT_odd EVEN_PORT=$PROXY_PORT_even \
			idserver_start "$name" "${PORTS[$i]}" "${SVC_FLAGS[@]}"
	else
		idserver_start "$name" "${PORTS[$i]}" "${SVC_FLAGS[@]}"
	fi
	pidvar=${name}_PID
	SVC_PID[i]=${!pidvar}
	wait_for "$name holds a lease" 15 lease_held "$i"
	w=$(st "$i" lease_worker)
	echo "$i ${SVC_PID[$i]} $w $name" >>"$T_DIR/incarnations.txt"
	log "$name: pid ${SVC_PID[$i]}, port ${PORTS[$i]}, worker $w"
	snapshot
}

# loader I DEADLINE: idbench runs of at most CHUNK s against service I until DEADLINE,
# one after another, each with its own dump file. SIGTERM stops the running one.
loader() {
	local i=$1 deadline=$2 k=0 b= left d rc
	local rate=()
	[ "$RATE" -eq 0 ] || rate=(--rate "$RATE")
	trap '[ -z "$b" ] || kill -INT "$b" 2>/dev/null; exit 143' TERM
	while [ $k -lt 1000 ]; do
		left=$((deadline - $(date +%s)))
		[ $left -ge 1 ] || break
		d=$((left < CHUNK ? left : CHUNK))
		k=$((k + 1))
		"$IDBENCH" --port "${PORTS[$i]}" --connections "$CONNS" --pipeline "$PIPE" \
			"${rate[@]}" --command MIX --seed $((FAULT_SEED * 10000 + i * 1000 + k)) \
			--duration "$d" --allow-errors --reply-timeout 10 --max-time $((d + 60)) \
			--dump "$T_DIR/ids-svc$i-$k.txt" --label "svc$i-$k" \
			>"$T_DIR/bench-svc$i-$k.out" 2>&1 &
		b=$!
		rc=0
		wait "$b" || rc=$?
		b=
		echo "$rc" >"$T_DIR/bench-svc$i-$k.rc"
	done
}

# ---------------------------------------------------------------- faults
FAULTS=0
SVC_FAULTS=0

f_kill_db() {	# ROLE...: SIGKILL, down for a while, db_start, both services use it again
	local down=$1 r
	shift
	for r in "$@"; do kill -KILL "$(db_pid "$r")"; done
	log "fault $FAULTS: SIGKILL MariaDB $* (down ${down}s)"
	if [ $# -eq 2 ]; then
		wait_for "both services in fallback after killing both servers" 10 both_mode fallback
	else
		wait_for "$1 marked down by both services" 10 not_up "$1"
	fi
	sleep "$down"
	for r in "$@"; do db_start "$r"; done
	wait_for "both services on tickets from both servers after restarting $*" 30 all_up
}

f_hang_db() {	# ROLE...: SIGSTOP, SIGCONT
	local down=$1 r
	shift
	for r in "$@"; do kill -STOP "$(db_pid "$r")"; done
	log "fault $FAULTS: SIGSTOP MariaDB $* (hung ${down}s)"
	if [ $# -eq 2 ]; then
		wait_for "both services in fallback with both servers hung" 10 both_mode fallback
	else
		wait_for "hung $1 marked down by both services" 10 not_up "$1"
	fi
	sleep "$down"
	for r in "$@"; do kill -CONT "$(db_pid "$r")"; done
	wait_for "both services on tickets from both servers after SIGCONT $*" 30 all_up
}

# The lease row of WORKER on its server: "holder window_end".
lease_row() {
	local role=odd
	[ $(($1 % 2)) -eq 0 ] && role=even
	db_sql "$role" "SELECT holder, window_end FROM idgen.idgen_leases WHERE worker = $1"
}

f_kill_svc() {	# I: SIGKILL, restart; a new worker number, the old one still reserved
	local down=$1 i=$2 old=${SVC_PID[$2]} oldw neww other row
	oldw=$(st "$i" lease_worker)
	kill -KILL "$old"
	wait "$old" 2>/dev/null || true		# reaps it quietly (no "Killed" job notice)
	log "fault $FAULTS: SIGKILL idserver svc$i (pid $old, worker $oldw), restart after ${down}s"
	wait_for "svc$i (pid $old) gone" 5 dead "$old"
	sleep "$down"
	svc_start "$i"
	neww=$(st "$i" lease_worker)
	other=$(st $((1 - i)) lease_worker)
	[ "$neww" != "$oldw" ] || fail "svc$i restarted after SIGKILL reuses worker $oldw (old window not over)"
	[ "$neww" != "$other" ] || fail "svc$i and svc$((1 - i)) both hold worker $neww"
	row=$(lease_row "$oldw")
	read -r holder end <<<"$row"
	[[ $holder == *:"$old":* ]] || fail "worker $oldw of killed pid $old: holder now '$holder'"
	[ "$end" -gt "$(now_layout_ms)" ] || fail "worker $oldw of killed pid $old: window_end $end already over"
}

f_term_svc() {	# I: SIGTERM (drain, release), restart
	local down=$1 i=$2 old=${SVC_PID[$2]} oldw name=svc${2}_r${INC[$2]} row
	oldw=$(st "$i" lease_worker)
	kill -TERM "$old"
	log "fault $FAULTS: SIGTERM idserver svc$i (pid $old, worker $oldw), restart after ${down}s"
	wait_for "svc$i (pid $old) exits after SIGTERM" 15 dead "$old"
	wait "$old" 2>/dev/null || fail "svc$i (pid $old) exited with status $? after SIGTERM"
	grep -q "lease released: worker $oldw" "$T_DIR/$name.log" ||
		fail "svc$i (pid $old) did not log the release of worker $oldw: $(tail -n 3 "$T_DIR/$name.log")"
	row=$(lease_row "$oldw")
	read -r holder end <<<"$row"
	[[ $holder == *:"$old":* ]] || fail "worker $oldw released by pid $old: holder now '$holder'"
	[ "$end" -le "$(now_layout_ms)" ] || fail "worker $oldw released by pid $old: window_end $end still ahead"
	sleep "$down"
	svc_start "$i"
	[ "$(st "$i" lease_worker)" != "$(st $((1 - i)) lease_worker)" ] ||
		fail "svc$i and svc$((1 - i)) hold the same worker"
}

# proxy_start ROLE: a delayproxy.py in front of ROLE's server, 0 ms, with a control
# file; waits until it listens.
proxy_start() {
	local r=$1 lp up pid seed
	lp=PROXY_PORT_$r
	lp=${!lp}
	if [ "$r" = odd ]; then up=$ODD_PORT seed=$((FAULT_SEED * 2)); else up=$EVEN_PORT seed=$((FAULT_SEED * 2 + 1)); fi
	! ss -Hltn "( sport = :$lp )" | has . || fail "proxy port $lp ($r) is in use"
	: >"$T_DIR/proxy-$r.ctl"
	python3 "$ROOT/tests/integration/delayproxy.py" "$lp" "$up" 0 --control "$T_DIR/proxy-$r.ctl" \
		--seed "$seed" >"$T_DIR/proxy-$r.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	eval "PROXY_PID_$r=$pid"
	wait_for "the $r proxy on port $lp" 10 bash -c "ss -Hltn '( sport = :$lp )' | grep -q ."
	alive "$pid" || fail "the $r proxy exited: $(tail -n 3 "$T_DIR/proxy-$r.log")"
	log "proxy $r: 127.0.0.1:$lp -> $up (pid $pid)"
}
proxy_pid() { local v=PROXY_PID_$1; echo "${!v}"; }

# proxy_set ROLE WORDS...: writes the control file, SIGHUP, waits for the proxy's
# acknowledgement of exactly this change.
PROXY_CTL_odd=0
PROXY_CTL_even=0
proxy_set() {
	local r=$1 v n pid
	shift
	v=PROXY_CTL_$r
	n=$((${!v} + 1))
	eval "PROXY_CTL_$r=$n"
	pid=$(proxy_pid "$r")
	echo "$*" >"$T_DIR/proxy-$r.ctl"
	kill -HUP "$pid"
	wait_for "the $r proxy applies '$*'" 10 grep -q "^control $n: " "$T_DIR/proxy-$r.log"
	! grep -q "^control $n: error" "$T_DIR/proxy-$r.log" ||
		fail "the $r proxy refused '$*': $(grep "^control $n: " "$T_DIR/proxy-$r.log")"
}

# greeting_ms ROLE: how long the server's greeting takes through ROLE's proxy (one
# way, the proxy's delay), in ms.
greeting_ms() {
	local lp=PROXY_PORT_$1
	python3 - "${!lp}" <<'PY'
import socket, sys, time
t = time.monotonic()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.settimeout(5)
s.recv(1)
print(int((time.monotonic() - t) * 1000))
s.close()
PY
}

f_partition_db() {	# ROLE...: the proxy drops every byte both ways (SIGUSR1), heals (SIGUSR2)
	local down=$1 r
	shift
	for r in "$@"; do kill -USR1 "$(proxy_pid "$r")"; done
	log "fault $FAULTS: partition MariaDB $* (silent, ${down}s after judged down)"
	if [ $# -eq 2 ]; then
		wait_for "both services in fallback with both servers partitioned" 20 both_mode fallback
	else
		wait_for "partitioned $1 marked down by both services" 20 not_up "$1"
	fi
	sleep "$down"
	for r in "$@"; do kill -USR2 "$(proxy_pid "$r")"; done
	wait_for "both services on tickets from both servers after healing $*" 30 all_up
}

f_slow_db() {	# HOLD DELAY JITTER ROLE...: DELAY +- JITTER ms each way for HOLD s, then 0
	local hold=$1 delay=$2 jitter=$3 r g w0 f0
	shift 3
	for r in "$@"; do proxy_set "$r" "delay=$delay" "jitter=$jitter"; done
	for r in "$@"; do
		g=$(greeting_ms "$r") || fail "no greeting from $r through its proxy (${delay} ms)"
		[ "$g" -ge $((delay - jitter - 2)) ] || fail "$r greeting in $g ms through a ${delay} ms proxy: the delay did not apply"
	done
	log "fault $FAULTS: MariaDB $* ${delay} +- ${jitter} ms away each way for ${hold}s (greeting ${g} ms)"
	w0=("$(st 0 refill_waits)" "$(st 1 refill_waits)") f0=("$(st 0 ids_fallback)" "$(st 1 ids_fallback)")
	sleep "$hold"
	log "fault $FAULTS: while ${delay} ms away: refill_waits +$(($(st 0 refill_waits) - ${w0[0]:-0}))" \
		"/ +$(($(st 1 refill_waits) - ${w0[1]:-0})), ids_fallback +$(($(st 0 ids_fallback) - ${f0[0]:-0}))" \
		"/ +$(($(st 1 ids_fallback) - ${f0[1]:-0})) (svc0 / svc1)"
	# A distant server is slow, not down: within its timeouts both stay up.
	wait_for "both services on tickets from both servers with $* ${delay} ms away" 10 all_up
	for r in "$@"; do proxy_set "$r" delay=0 jitter=0; done
	wait_for "both services on tickets from both servers after $* came back near" 30 all_up
}

conns_at_least() { local c; c=$(st "$1" curr_connections); [ "${c:-0}" -ge "$2" ]; }
conns_below() { local c; c=$(st "$1" curr_connections); [ -n "$c" ] && [ "$c" -lt "$2" ]; }

f_flood() {	# SECONDS I: idle, slowloris and non-reading clients against service I
	local secs=$1 i=$2 port=${PORTS[$2]} m c n pids=() out conns
	for m in idle:1000 slowloris:500 nonreader:20; do
		c=${m#*:} m=${m%:*}
		out=$T_DIR/flood-$FAULTS-$m.out
		python3 "$ROOT/tests/integration/flood.py" "$m" "$c" "$port" "$secs" >"$out" 2>&1 &
		pids+=($!)
		PIDS+=($!)
	done
	for m in idle slowloris nonreader; do
		wait_for "$m flood clients against svc$i" 30 grep -q '^READY' "$T_DIR/flood-$FAULTS-$m.out"
	done
	wait_for "svc$i holds the flood's 1,520 connections" 10 conns_at_least "$i" 1520
	log "fault $FAULTS: flood svc$i for ${secs}s: 1000 idle, 500 slowloris, 20 non-readers" \
		"(curr_connections $(st "$i" curr_connections))"
	for n in "${pids[@]}"; do
		wait_for "flood client $n exits" $((${secs%.*} + 40)) dead "$n"
		wait "$n" 2>/dev/null || fail "flood client $n failed: $(tail -n 2 "$T_DIR"/flood-$FAULTS-*.out)"
	done
	wait_for "svc$i closes the flood's connections" 30 conns_below "$i" 100
	wait_for "both services on tickets from both servers after the flood" 30 all_up
}

# ---------------------------------------------------------------- the run
start_s=$(date +%s)
log "seed $FAULT_SEED (replay: FAULT_SEED=$FAULT_SEED FAULT_SECONDS=$FAULT_SECONDS FAULT_KINDS=${FAULT_KINDS// /,}), $FAULT_SECONDS s," \
	"$CONNS connections x pipeline $PIPE per service, rate ${RATE}/s per service, kinds: ${KINDS[*]}"
# flood: 1,520 more descriptors in flood.py and in the idserver.
if has_kind flood; then
	ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
	[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 4096 ] ||
		fail "the descriptor limit is $(ulimit -n) (hard $(ulimit -Hn)); the flood needs 4,096"
fi
pair_up
if [ $USE_PROXY = 1 ]; then
	proxy_start odd
	proxy_start even
fi
svc_start 0
svc_start 1

# The plan: "kind target down_seconds cycle_seconds", one per line, from the seed alone.
# slow_db adds "delay jitter" (ms); its down_seconds and flood's are stretched below.
mapfile -t PLAN < <(python3 - "$FAULT_SEED" $((FAULT_SECONDS / 5 + 1)) "${KINDS[@]}" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
weight = {"kill_db": 2, "kill_dbs": 2, "hang_db": 1, "hang_dbs": 2, "kill_svc": 2,
          "term_svc": 2, "partition_db": 2, "partition_dbs": 2, "slow_db": 2, "flood": 2}
kinds = sys.argv[3:]
weights = [weight[k] for k in kinds]
for _ in range(int(sys.argv[2])):
    k = r.choices(kinds, weights)[0]
    if k in ("kill_db", "hang_db", "partition_db"):
        target = r.choice(["odd", "even"])
    elif k.endswith("_svc") or k == "flood":
        target = r.choice(["0", "1"])
    elif k == "slow_db":
        target = r.choice(["odd", "even", "both"])
    else:
        target = "both"
    down = r.choice(["0.5", "1", "1.5", "2", "3"])
    line = [k, target, down, str(r.randint(5, 8))]
    if k == "slow_db":
        delay = r.choice([50, 200])
        line += [str(delay), "10" if delay == 50 else "50"]
    print(" ".join(line))
PY
)

DEADLINE=$(($(date +%s) + FAULT_SECONDS))
for i in 0 1; do
	loader "$i" "$DEADLINE" &
	LOADERS+=($!)
	PIDS+=($!)
done
sleep 2

for line in "${PLAN[@]}"; do
	read -r kind target down cycle delay jitter <<<"$line"
	c0=$(date +%s)
	# Leave room for the fault, its healing and some clean load before the end.
	[ $((c0 + cycle + 6)) -le "$DEADLINE" ] || break
	FAULTS=$((FAULTS + 1))
	case $kind in
	kill_db) f_kill_db "$down" "$target" ;;
	kill_dbs) f_kill_db "$down" odd even ;;
	hang_db) f_hang_db "$down" "$target" ;;
	hang_dbs) f_hang_db "$down" odd even ;;
	kill_svc) f_kill_svc "$down" "$target"; SVC_FAULTS=$((SVC_FAULTS + 1)) ;;
	term_svc) f_term_svc "$down" "$target"; SVC_FAULTS=$((SVC_FAULTS + 1)) ;;
	partition_db) f_partition_db "$down" "$target" ;;
	partition_dbs) f_partition_db "$down" odd even ;;
	slow_db)	# held 2..8 s: long enough for many fetches at that distance
		if [ "$target" = both ]; then set -- odd even; else set -- "$target"; fi
		f_slow_db "$(awk -v d="$down" 'BEGIN { print d * 2 + 2 }')" "$delay" "$jitter" "$@" ;;
	flood) f_flood "$(awk -v d="$down" 'BEGIN { print d + 3 }')" "$target" ;;
	esac
	echo "$FAULTS $kind $target $down" >>"$T_DIR/faults.txt"
	log "fault $FAULTS ($kind $target) healed after $(($(date +%s) - c0))s"
	snapshot
	left=$((c0 + cycle - $(date +%s)))
	[ $left -le 0 ] || sleep "$left"
done
log "$FAULTS faults done; load until the end of the run"

for p in "${LOADERS[@]}"; do
	wait "$p" || fail "idbench loader $p failed"
done
snapshot
for i in 0 1; do
	q "${PORTS[$i]}" 'STATS\n' >"$T_DIR/stats-svc$i-final.txt" || true
done

# ---------------------------------------------------------------- the verdict
log "checking every ID of the run ($(cat "$T_DIR"/ids-*.txt | wc -l) ranges in $(ls "$T_DIR"/ids-*.txt | wc -l) dump files)"
uniq_total=$(check_unique "$T_DIR"/ids-*.txt) && uniq_ok=1 || uniq_ok=0
log "check_unique: ${uniq_total:-?} IDs, $([ $uniq_ok = 1 ] && echo 'no overlap' || echo 'OVERLAPS')"
python3 - "$T_DIR" "$FAULT_SECONDS" "$FAULTS" "$SVC_FAULTS" "$FAULT_MIN_IDS" "$uniq_ok" \
	"$FAULT_SEED" "${KINDS[@]}" <<'PY' || fail "verdict: FAIL (see the lines above; logs in $T_DIR)"
import bisect, glob, os, re, sys

tdir, seconds, faults, svc_faults, min_ids, uniq_ok, seed = sys.argv[1:8]
kinds = sys.argv[8:]
faults, svc_faults, min_ids = int(faults), int(svc_faults), int(min_ids)
TWO53 = 1 << 53
problems = []

def say(msg):
    print("[test_faults] " + msg, file=sys.stderr)

# Which process (pid) served which port: incarnations.txt "svc pid worker name".
svc_of_pid = {}
for line in open(os.path.join(tdir, "incarnations.txt")):
    svc, pid, worker, name = line.split()
    svc_of_pid[int(pid)] = int(svc)

# Lease snapshots: "snap role worker holder start end claims". Per worker, every
# holder seen with its window_start; the last snapshot gives the final window_end.
holders = {}   # worker -> {holder: start}
final = {}     # worker -> (holder, start, end, claims) of the last snapshot
last_snap = 0
rows = [l.split() for l in open(os.path.join(tdir, "leases.txt"))]
for snap, role, w, holder, start, end, claims in rows:
    last_snap = max(last_snap, int(snap))
for snap, role, w, holder, start, end, claims in rows:
    w = int(w)
    if (w % 2 == 1) != (role == "odd"):
        problems.append("worker %d held on the %s server" % (w, role))
    holders.setdefault(w, {})
    if holder in holders[w] and holders[w][holder] != int(start):
        problems.append("worker %d holder %s: window_start changed %d -> %s"
                        % (w, holder, holders[w][holder], start))
    holders[w].setdefault(holder, int(start))
    if int(snap) == last_snap:
        final[w] = (holder, int(start), int(end), int(claims))
# worker -> sorted [(start, holder)]: holder i owns [start_i, start_{i+1}).
windows = {w: sorted((s, h) for h, s in hs.items()) for w, hs in holders.items()}

def pid_of(holder):
    # HOST:PID:NONCE[:KIND] (docs/design.md 3.7): the kind came later.
    f = holder.split(":")
    if f[-1] in ("idserver", "libidgen"):
        f = f[:-1]
    return int(f[-2])

# Every ID range of every dump file; the Snowflake ones checked against the leases.
ranges = []
snow = ticket = 0
lease_bad = 0
workers_used = {}
for path in sorted(glob.glob(os.path.join(tdir, "ids-svc*-*.txt"))):
    svc = int(re.search(r"ids-svc(\d)-", path).group(1))
    with open(path) as f:
        for line in f:
            a, n = line.split()
            a, n = int(a), int(n)
            ranges.append((a, n))
            if a + n - 1 < TWO53:
                ticket += n
                continue
            snow += n
            for x in sorted({a, a + n - 1}):
                if x < TWO53:
                    why = "range crosses 2^53"
                else:
                    ts, w = x >> 22, (x >> 12) & 1023
                    why = None
                    workers_used[(svc, w)] = workers_used.get((svc, w), 0) + (n if x == a else 0)
                    if w not in final or final[w][3] == 0:
                        why = "worker %d was never claimed" % w
                    elif ts > final[w][2]:
                        why = "ts %d after worker %d's window_end %d" % (ts, w, final[w][2])
                    else:
                        win = windows[w]
                        k = bisect.bisect_right(win, (ts, "\x7f")) - 1
                        if k < 0:
                            why = "ts %d before any window of worker %d (first %d)" % (ts, w, win[0][0])
                        elif svc_of_pid.get(pid_of(win[k][1])) != svc:
                            why = "ts %d of worker %d lies in the window of %s, not a svc%d process" \
                                  % (ts, w, win[k][1], svc)
                if why:
                    lease_bad += 1
                    if lease_bad <= 5:
                        say("lease violation: id %d in %s: %s" % (x, os.path.basename(path), why))

# Exact duplicate count: IDs covered more than once.
ranges.sort()
total = dups = 0
last = -1
for a, n in ranges:
    e = a + n - 1
    if a <= last:
        dups += min(last, e) - a + 1
    last = max(last, e)
    total += n

# idbench results: every run must have ended with a RESULT line and status 0.
codes = ["CONN", "TIMEOUT", "UNAVAILABLE", "CLOCK", "BADREQ", "RANGE", "OTHER"]
err = dict.fromkeys(codes, 0)
viol = bench_dups = runs = 0
for out in sorted(glob.glob(os.path.join(tdir, "bench-svc*-*.out"))):
    runs += 1
    rc = open(out[:-4] + ".rc").read().strip() if os.path.exists(out[:-4] + ".rc") else "?"
    res = [l for l in open(out) if l.startswith("RESULT ")]
    if rc != "0" or not res:
        problems.append("%s: exit %s, %s" % (os.path.basename(out), rc,
                        res[0].strip()[:200] if res else "no RESULT line"))
        continue
    kv = dict(f.split("=", 1) for f in res[0].split()[1:] if "=" in f)
    for c in codes:
        err[c] += int(kv.get("err_" + c, 0))
    viol += int(kv["violations"])
    bench_dups += int(kv["duplicates"])

violations = viol + lease_bad
# Faults injected by kind: faults.txt "n kind target down", one line per healed fault.
by_kind = dict.fromkeys(kinds, 0)
if os.path.exists(os.path.join(tdir, "faults.txt")):
    for line in open(os.path.join(tdir, "faults.txt")):
        k = line.split()[1]
        by_kind[k] = by_kind.get(k, 0) + 1
say("%d idbench runs; %d ticket IDs, %d Snowflake IDs; workers used (svc, worker): %s"
    % (runs, ticket, snow, ", ".join("svc%d:%d" % k for k in sorted(workers_used))))
verdict = ("FAULT RUN VERDICT: seconds=%s faults=%d kinds: %s ids=%d duplicates=%d errors: %s "
           "violations=%d seed=%s" % (seconds, faults,
           " ".join("%s=%d" % (k, by_kind[k]) for k in by_kind), total, dups + bench_dups,
           " ".join("%s=%d" % (c, err[c]) for c in codes), violations, seed))
if dups or bench_dups or uniq_ok != "1":
    problems.append("duplicate IDs")
if violations:
    problems.append("%d violations (%d protocol/range from idbench, %d lease)" % (violations, viol, lease_bad))
other = {c: v for c, v in err.items() if c != "CONN" and v}
if other:
    problems.append("errors other than connection errors: %s" % other)
if err["CONN"] and not svc_faults:
    problems.append("connection errors without any idserver fault")
if total < min_ids:
    problems.append("only %d IDs collected (need >= %d)" % (total, min_ids))
if faults < 3:
    problems.append("only %d faults injected" % faults)
for p in problems:
    say("FAIL: " + p)
print(verdict + (" FAIL" if problems else " PASS"))
sys.exit(1 if problems else 0)
PY
log "ok: $(($(date +%s) - start_s)) s in all"
