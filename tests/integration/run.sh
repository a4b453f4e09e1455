#!/usr/bin/env bash
# run.sh [BUILD_DIR] [TEST...] [-- BUILD_DIR [TEST...]]... - runs the integration
# tests, each bounded by a timeout, and prints one PASS/FAIL line per test.
#
# Each group is a build directory and its tests (none named: every test_*.sh);
# groups are separated by `--`, so that one run can hold the sanitizer build's
# list and the normal build's. A test of a build other than build/ keeps its
# directories under build/test-var/<build name>/ (e.g. build/test-var/asan/) and
# shows as "name [asan]".
#
# INTEGRATION_JOBS (default 3) lanes run the tests at once, each on ports of its
# own (INTEGRATION_LANE_PORTS: ODD_PORT/SVC_PORT per lane, EVEN_PORT = ODD_PORT + 1;
# every test's ports are offsets of these, at most +200 and +100; 19307-19342 is
# bench/ticket_lat.sh's, 13000-14999 bench/run.sh's). A lane's test
# writes its output to build/test-var/[<build>/]NAME.out; a failing test's output
# is printed whole after its FAIL line. The tests of SERIAL below (timing- or
# load-sensitive) then run one at a time with nothing else running, on
# ODD_PORT/EVEN_PORT/SVC_PORT (23307/23308/24242), their output shown as it comes.
# INTEGRATION_SERIAL_LOCK: a file the serial phase locks exclusively first (flock),
# so that work holding it shared (run-all.sh's fuzzing) is over before it starts.
# INTEGRATION_JOBS=1: every test one at a time in the order given, output shown as
# it comes (no lanes).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
limit=${TEST_TIMEOUT:-300}
jobs=${INTEGRATION_JOBS:-3}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: INTEGRATION_JOBS must be a positive number" >&2; exit 2; }
read -r -a lane_ports <<<"${INTEGRATION_LANE_PORTS:-21307/22242 25307/26242 27307/28242 29307/30242 31007/31242}"
if [ "$jobs" -gt ${#lane_ports[@]} ]; then
	echo "run.sh: INTEGRATION_JOBS=$jobs, but INTEGRATION_LANE_PORTS has ${#lane_ports[@]} lanes: $jobs -> ${#lane_ports[@]}" >&2
	jobs=${#lane_ports[@]}
fi
# A test that measures latency or timing, floods, loads the machine on purpose, or
# needs the machine to itself: run alone, after the lanes.
SERIAL=(
	test_flood          # probe P99 limits under floods; 10,000 connections
	test_memory         # 15,000 connections; RSS after they close
	test_grpc_flood     # stalled streams must end within +2 s; RSS
	test_load           # millions of IDs from two processes at full speed
	test_libgen         # 11 minting threads for 12 s; a 3 s lease window outlived by SIGSTOP
	test_libfall        # 15 library threads for 12 s; the switch back must land inside them
	test_libmany        # 88 library threads for 18 s; 3 s lease windows outlived by SIGSTOPs
	test_idbench        # idbench at full speed
	test_faults         # 45 s of faults under open-loop load
	test_failover       # kills under a 12 s load: restarts must fit in it
	test_fallback       # the switch under load, 5 s bounds; P99.9 reported
	test_slow_disk      # no reservation waited for with a 50 ms fdatasync; P99.9 judged when quiet
	test_partition      # 800 ms timeouts under load (its own netns and nftables)
	test_distant        # delay proxy, 800 ms timeouts under load
	test_far            # delay proxy; refill_waits must not move under steady load
	test_far_regions    # delay proxies; clients across every fault
	test_dbtls          # a PING must not wait 150 ms behind a TLS query
	test_slow           # idle/partial/write timeouts checked to fractions of a second
	test_nasty          # 52 MB of pipelined replies read within write_timeout_ms (1 s)
	test_live           # no-flap bound over a ~6 s loop, 3 s waits on 300 ms re-checks
	test_resp           # redis-cli on a pty, each line once its prompt came (10 s a step)
	test_resp_tx        # redis-cli on a pty, each line once its prompt came (10 s a step)
	test_views          # a fallback ID within a 3 s lease window after kill and drain
	test_tls            # handshake floods dropped within 1 s timeouts
	test_auth           # a wrong token's reply held a measured 400 ms
	test_lockout        # clients served within 1 s while floods hold every slot
)
is_serial() { local s; for s in "${SERIAL[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

# Items: build, test, test-var directory, label; from the groups of arguments.
I_BUILD=() I_TEST=() I_VAR=() I_LABEL=() I_GROUP=()
groups=0
add_group() {
	local b v tag t
	b=$(cd "${1:-$ROOT/build}" && pwd) || exit 2
	shift || true
	v=${TEST_VAR:-$ROOT/build/test-var} tag=
	if [ "$b" != "$ROOT/build" ]; then v=$v/$(basename "$b") tag=" [$(basename "$b")]"; fi
	[ $# -gt 0 ] || set -- "$here"/test_*.sh
	for t in "$@"; do
		I_BUILD+=("$b") I_TEST+=("$t") I_VAR+=("$v") I_LABEL+=("$(basename "$t" .sh)$tag")
		I_GROUP+=("$groups")
	done
	groups=$((groups + 1))
}
group=()
for a in "$@"; do
	if [ "$a" = -- ]; then add_group "${group[@]}"; group=(); else group+=("$a"); fi
done
add_group "${group[@]}"
n=${#I_TEST[@]}
failed=0

result() {	# result INDEX RC SECONDS
	if [ "$2" -eq 0 ]; then
		printf 'PASS %-28s %4ss\n' "${I_LABEL[$1]}" "$3"
	else
		printf 'FAIL %-28s %4ss\n' "${I_LABEL[$1]}" "$3"
		failed=$((failed + 1))
	fi
}

# run_here INDEX: one test in the foreground, its output as it comes.
run_here() {
	local i=$1 start
	start=$(date +%s)
	mkdir -p "${I_VAR[$i]}"
	BUILD=${I_BUILD[$i]} TEST_VAR=${I_VAR[$i]} timeout -k 10 "$limit" bash "${I_TEST[$i]}"
	result "$i" $? $(($(date +%s) - start))
}

if [ "$jobs" -eq 1 ]; then
	for ((i = 0; i < n; i++)); do run_here "$i"; done
	exit $((failed > 0))
fi

# The lanes take the groups' tests in turn (a sanitizer build's test, which uses
# more CPU, then a normal one, ...); the serial ones in the order given.
par=() ser=() left=()
for ((g = 0; g < groups; g++)); do left[g]=""; done
for ((i = 0; i < n; i++)); do
	if is_serial "$(basename "${I_TEST[$i]}" .sh)"; then
		ser+=("$i")
	else
		left[I_GROUP[i]]+="$i "
	fi
done
while :; do
	more=0
	for ((g = 0; g < groups; g++)); do
		read -r -a q <<<"${left[g]}"
		[ ${#q[@]} -gt 0 ] || continue
		par+=("${q[0]}") more=1
		left[g]="${q[*]:1}"
	done
	[ $more -eq 1 ] || break
done

# The lanes. Each test runs in a subshell that writes "rc end-time" to its lane's
# done file; the loop below polls them. Until the MariaDB template that every pair
# copies exists, one test runs at a time (the first pair makes it).
template=$ROOT/build/test-var/template/.template/.done
ctl=$(mktemp -d "${TMPDIR:-/tmp}/idgen-run.XXXXXX")
lane_item=() lane_start=() busy_said=()
for ((l = 0; l < jobs; l++)); do lane_item[l]=-1; done
stop_lanes() {
	local l p
	for ((l = 0; l < jobs; l++)); do
		[ "${lane_item[l]}" -ge 0 ] && p=$(cat "$ctl/pid.$l" 2>/dev/null) && kill -TERM "$p" 2>/dev/null
	done
	wait
	rm -rf "$ctl"
}
trap 'stop_lanes; exit 130' INT
trap 'stop_lanes; exit 143' TERM
running=0 next=0
while [ $next -lt ${#par[@]} ] || [ $running -gt 0 ]; do
	for ((l = 0; l < jobs; l++)); do
		[ $next -lt ${#par[@]} ] || break
		[ "${lane_item[l]}" -lt 0 ] || continue
		[ $running -eq 0 ] || [ -f "$template" ] || break
		odd=${lane_ports[l]%/*} svc=${lane_ports[l]#*/}
		# A lane whose ports another program holds waits (unless nothing runs).
		if [ $running -gt 0 ] && [ -n "$(ss -Hltn "( sport = :$odd or sport = :$((odd + 1)) or sport = :$svc )" 2>/dev/null)" ]; then
			[ -n "${busy_said[l]:-}" ] || echo "(lane $l: port $odd, $((odd + 1)) or $svc in use by another program; its tests wait)"
			busy_said[l]=1
			continue
		fi
		i=${par[next]} next=$((next + 1))
		lane_item[l]=$i lane_start[l]=$(date +%s) running=$((running + 1))
		rm -f "$ctl/done.$l" "$ctl/pid.$l"
		mkdir -p "${I_VAR[$i]}"
		out=${I_VAR[$i]}/$(basename "${I_TEST[$i]}" .sh).out
		(
			export BUILD=${I_BUILD[$i]} TEST_VAR=${I_VAR[$i]}
			export ODD_PORT=$odd EVEN_PORT=$((odd + 1)) SVC_PORT=$svc
			timeout -k 10 "$limit" bash "${I_TEST[$i]}" >"$out" 2>&1 </dev/null &
			echo $! >"$ctl/pid.$l"
			wait $!
			echo "$? $(date +%s)" >"$ctl/done.$l.tmp" && mv "$ctl/done.$l.tmp" "$ctl/done.$l"
		) &
	done
	sleep 0.2
	for ((l = 0; l < jobs; l++)); do
		[ "${lane_item[l]}" -ge 0 ] && [ -f "$ctl/done.$l" ] || continue
		i=${lane_item[l]}
		read -r rc end <"$ctl/done.$l"
		result "$i" "$rc" $((end - lane_start[l]))
		out=${I_VAR[$i]}/$(basename "${I_TEST[$i]}" .sh).out
		if [ "$rc" -ne 0 ]; then
			echo "---- output of ${I_LABEL[$i]} (lane $l: ODD_PORT ${lane_ports[l]%/*}, SVC_PORT ${lane_ports[l]#*/}; $out)"
			[ "$rc" -ne 124 ] || echo "(timed out after ${limit} s)"
			cat "$out"
			echo "---- end of ${I_LABEL[$i]}"
		fi
		lane_item[l]=-1 running=$((running - 1))
	done
done
wait
trap - INT TERM
rm -rf "$ctl"
[ ${#par[@]} -eq 0 ] || echo "(each lane test's output: NAME.out in $(printf '%s\n' "${I_VAR[@]}" | sort -u | paste -sd' '))"

# The serial phase: alone.
if [ ${#ser[@]} -gt 0 ]; then
	if [ -n "${INTEGRATION_SERIAL_LOCK:-}" ]; then
		exec 8>>"$INTEGRATION_SERIAL_LOCK"
		flock -x 8
	fi
	for i in "${ser[@]}"; do run_here "$i"; done
fi
exit $((failed > 0))
