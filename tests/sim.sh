#!/usr/bin/env bash
# The bounded simulation of `make test` (docs/design.md section 14): a fixed
# seed range with every rule on (no ID issued twice), in SIM_JOBS slices, the
# same seed run twice giving the same trace hash, seeds of the slices giving
# alone the hash they gave there, and each rule disabled
# finding its duplicate within a fixed budget of schedules. Runs run SIM_JOBS
# at a time (2: the machine's cores); each is one deterministic process, so
# the outcome does not depend on how they interleave. A duplicate with every
# rule on is shrunk (--shrink: the shortest trace and its replay are shown).
# Usage: tests/sim.sh [build dir]
set -uo pipefail
B=${1:-build}
SIM="$B/idsim"
SIM_SCHEDULES=${SIM_SCHEDULES:-20000}	# seeds 1..this (the whole file ~30,650 schedules, ~75 s of CPU)
# Open findings (docs/design.md section 14): seeds of the range that issue an ID
# twice with every rule on, not fixed yet. Each is run alone and reported, and
# left out of the range, so the range still finds any other.
SIM_KNOWN=${SIM_KNOWN-}
SIM_RULE_BUDGET=${SIM_RULE_BUDGET:-3000}	# schedules each disabled rule may take
SIM_JOBS=${SIM_JOBS:-2}
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idsim-sh.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Rules that overlap are shown with their partner off too: on one machine the
# stamp's inode check refuses every copy the owner rule refuses; copy first
# covers what the witness and a check's early read would (a copy lands before
# any block is handed out), so each of those is shown with copy first off,
# and the namespace witness with the namespaces' copy first off; the known mark
# as sent (ticket-known, ns-ticket-known) with the known mark at the answer off,
# which makes a ticket below either unused (docs/design.md section 14).
# Namespace rules are hunted in schedules that all serve namespaces.
# A tier (more servers, or the pair raised into one) is every third schedule, so
# every rule is hunted among tiers too, and 'seal' (a change of the increment)
# only there; the state file's marks and the fallback's write-ahead, which the
# pair found in 67 and 10 schedules, are hunted in pairs (--tiers none: the
# schedules they were before tiers), keeping the file's CPU where it was; with
# --tiers all each is found too (section 14). Since copies of a dead idserver's
# file came in, the state marks take 502 there (340 in the default mix).
# The claim's own rule (claim-now) with the simulated triggers on idgen_leases
# off (lease-guard): a claim of a row whose window is open starts its window
# before the old one ends, which the trigger refuses (alone it finds none in
# the budget). lease-guard itself is found through the fault lease-freed (an
# operator's hand edit of a held row), on in half the schedules by default and
# in all of its hunt (--lease-freed all, in the schedules before disks and
# timeouts: 122 schedules; in half, 959 since copies of a dead idserver's file
# came in, 42 before).
# The simulated triggers on the marks (mark-guard) are found through the fault
# mark-edits (an operator's hand edits of marks rows), off by default and on in
# every schedule of its hunt (8 schedules; none in 3,000 without hand edits).
# A witness refused by a read-only server (half the schedules draw read-only
# servers) is hunted among tiers, where a new connection's witness carries the
# marks copy first counts; the stamp and the known mark at the answer, whose
# first schedules (23; 21084) now draw read-only servers, are hunted in the
# schedules they were before those came in (--read-only none, section 14).
# Two to four regions (one of them possibly set up under another B, region 0
# under fewer region bits, or a region under another M) are every twelfth
# schedule, where region-layout is found (section 14). A region under another
# M is 12.3's residue, which no check sees: with every rule on, --regions m
# must find it (regions-m) and no duplicate; its servers alone under another M
# must be refused.
# The stamp refuses two of the outside run's paths (section 14.1), each hunted
# alone: older contents of a file put back (path 2: every fault kind but
# file-copy), and a copy of a dead idserver's file (path 1: every kind but
# file-back; half the copies are of a crashed idserver, which restarts on its
# own file or without one while another starts on the copy).
STAMP_PATH1=crash,down,drop,lost-reply,restore,lower,restart,fresh,both-down,clock,file-copy,cut
STAMP_PATH2=crash,down,drop,lost-reply,restore,lower,restart,fresh,both-down,clock,file-back,cut
# A failed fdatasync taken as durable (sync-checked) is hunted with simulated
# disks under every state file (--disk-faults all; half the schedules have
# them by default): a power loss then loses what was banked on it. The
# witness refused by a read-only server and the hand edits of lease rows
# (witness-landed, lease-guard), whose first schedules now draw disks and no
# longer find them in the budget, are hunted in the schedules they were
# before disks came in (--disk-faults none, section 14). Query timeouts (half
# the schedules) move them again: witness-landed, the stamp and the known mark
# at the answer are hunted with --timeouts none, and so is the namespaces'
# copy first (ns-copy-first), whose duplicates need no killed idgenctl ns run
# but came after the budget once the runs drew their kills.
# A rule whose duplicate no schedule from seed 1 finds in the budget starts at
# the seed that found it with every rule on, or at the first that finds it
# (known-at-answer: 16906 with --read-only none --timeouts none, since the
# namespace procedures run idgenctl's own code and seed 21084, where every rule
# on found it, no longer meets it; witness-landed: 11897 with --tiers all, since
# the raise and add-server run idgenctl's own code and seed 138's raise no
# longer meets it; copy-conn: 5978 among schedules whose faults are lost
# replies, restores and query timeouts alone, the first from seed 1 that finds
# it; ns-write-ahead: from seed 1 again (429) since idgenctl raises a
# namespace's marks one row a statement, 13.3 (5319 before); ns-remember:
# 4723, the first from seed 1 since then; retire-carry:
# 1856 with --tiers all --ctl-ops retire, the seed that found it; from seed 1
# it takes 978 schedules since ticket_retired merges a retired server's check, 12.5).
rule_seed() {
	case "$1" in
	known-at-answer) echo 16906 ;;
	ns-remember) echo 4723 ;;
	witness-landed) echo 11897 ;;
	copy-conn) echo 5978 ;;
	retire-carry) echo 1856 ;;
	*) echo 1 ;;
	esac
}
rule_args() {
	case "$1" in
	state-marks | write-ahead) echo "--tiers none --disable $1" ;;
	owner) echo "--disable owner --disable stamp" ;;
	claim-now) echo "--disable claim-now --disable lease-guard" ;;
	witness | check-read) echo "--disable $1 --disable copy-first" ;;
	ticket-known) echo "--disable ticket-known --disable known-at-answer" ;;
	ns-ticket-known) echo "--namespaces all --disable ns-ticket-known --disable known-at-answer" ;;
	ns-witness) echo "--namespaces all --disable ns-witness --disable ns-copy-first" ;;
	ns-copy-first) echo "--namespaces all --timeouts none --disable $1" ;;
	ns-*) echo "--namespaces all --disable $1" ;;
	witness-landed) echo "--tiers all --disk-faults none --timeouts none --disable $1" ;;
	lease-guard) echo "--lease-freed all --disk-faults none --timeouts none --disable $1" ;;
	mark-guard) echo "--mark-edits all --disable $1" ;;
	stamp) echo "--read-only none --timeouts none --disable stamp --faults $STAMP_PATH2" ;;
	known-at-answer) echo "--read-only none --timeouts none --disable $1" ;;
	sync-checked) echo "--disk-faults all --disable $1" ;;
	copy-conn) echo "--faults lost-reply,restore,timeout --disable $1" ;;
	retire-carry) echo "--tiers all --ctl-ops retire --disable $1" ;;
	*) echo "--disable $1" ;;
	esac
}

# Every namespace rule (ns-*) hunted above in pairs is hunted among tiers too
# (--tiers all with rule_args: 3-4 servers, a third of them the pair raised
# and grown with namespaces served, section 14). Those that take over 1,000
# schedules from seed 1 start at the seed that found it (ns-state-marks 11485,
# ns-copy-first 5198, ns-write-ahead 24989, ns-remember 1093, each the first
# from seed 1; measured after the fix of seeds 138 and 7002, whose refusals
# moved the earlier 1971, 1374, 13382 and 1858, and again when one copy push
# and one refill pass reordered the SQL, 13.7: 8108, 24989 and 43811 before,
# the last two none in 30,000 from seed 1 then; 11485, 28154 and 12941 with
# the default first in that pass, before the namespaces with a waiting
# request went back before it; ns-remember 1093 since idgenctl raises a
# namespace's marks one row a statement, 13.3, 10479 before). A tier's hunt
# counts only if
# its seed replayed with the rule on issues no ID twice (a duplicate with
# every rule on would satisfy it otherwise).
nstier_seed() {
	case "$1" in
	ns-state-marks) echo 11485 ;;
	ns-write-ahead) echo 24989 ;;
	ns-remember) echo 1093 ;;
	ns-copy-first) echo 5198 ;;
	*) echo 1 ;;
	esac
}

# Job n: its arguments in $tmp/n.args; its output in $tmp/n.all, its last line
# in $tmp/n.out, its status in $tmp/n.rc.
njobs=0
WRAP=()		# a command a job runs the simulation under
job() {
	echo "$*" >"$tmp/$njobs.args"
	# shellcheck disable=SC2068
	( "${WRAP[@]}" "$SIM" $@ >"$tmp/$njobs.all"; echo "$?" >"$tmp/$njobs.rc"
	  tail -n 1 "$tmp/$njobs.all" >"$tmp/$njobs.out" ) &
	njobs=$((njobs + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$SIM_JOBS" ]; do
		wait -n
	done
}
out() { cat "$tmp/$1.out" 2>/dev/null; }
rc() { cat "$tmp/$1.rc" 2>/dev/null || echo 3; }
# A failed run's output but its last four lines (the counts) and the schedules'
# own hashes, the shrunk trace with it.
why() { head -n -4 "$tmp/$1.all" 2>/dev/null | grep -v '^schedule [0-9]* trace ' | sed 's/^/    /'; }

# The fixed range in 4 x SIM_JOBS slices of consecutive seeds (each schedule is
# its seed's alone; slices that small keep both jobs busy to the end), cut
# around the open findings.
slice=$(( (SIM_SCHEDULES + 4 * SIM_JOBS - 1) / (4 * SIM_JOBS) ))
slices=()
for ((s = 1; s <= SIM_SCHEDULES; s += slice)); do
	e=$(( s + slice - 1 < SIM_SCHEDULES ? s + slice - 1 : SIM_SCHEDULES ))
	from=$s
	for k in $(tr -s ' ' '\n' <<<"$SIM_KNOWN" | sort -n) $((e + 1)); do
		if [ "$k" -lt "$from" ] || [ "$k" -gt $((e + 1)) ]; then
			continue
		fi
		if [ "$k" -gt "$from" ]; then
			slices+=("$njobs:$from:$((k - from))")
			job --seed "$from" --schedules "$((k - from))" --shrink --hashes
		fi
		from=$((k + 1))
	done
done
known=()
for k in $SIM_KNOWN; do
	[ "$k" -le "$SIM_SCHEDULES" ] || continue
	known+=("$njobs:$k")
	job --seed "$k" --schedules 1
done
# A schedule's trace is its seed's alone, whatever ran before it in the process
# (docs/design.md section 14): seeds from deep inside the slices (each slice's
# last, one drawn in each, and 16517 and 17879, which once differed: 17879 read
# the platter bytes of the schedule before it) run alone give the hash the
# slice gave them (--hashes: each schedule's own trace hash).
alone=()
for sl in "${slices[@]}"; do
	IFS=: read -r j s n <<<"$sl"
	for k in $((s + n - 1)) $((s + (RANDOM % n))); do
		alone+=("$j:$k:$njobs")
		job --seed "$k" --schedules 1 --hashes
	done
done
for k in 16517 17879; do
	[ "$SIM_SCHEDULES" -ge "$k" ] || continue
	for sl in "${slices[@]}"; do
		IFS=: read -r j s n <<<"$sl"
		if [ "$k" -ge "$s" ] && [ "$k" -lt $((s + n)) ]; then
			alone+=("$j:$k:$njobs")
			job --seed "$k" --schedules 1 --hashes
		fi
	done
done
# A logged random slice beside the fixed range: a failure names its seed to replay.
seed=$(( (RANDOM << 15 | RANDOM) + 100000 ))
rnd=$njobs
job --seed "$seed" --schedules "${SIM_RANDOM_SCHEDULES:-200}" --shrink
det=$njobs
# Each pair's second run in a pid namespace of its own where the machine allows
# it (root): a trace that hangs on the process then differs (the pid's digits
# in the lease holder moved the state file's sectors once: seed 19602, so
# seeds 19551..19650 are a pair too).
OTHER=()
det_how="in one pid namespace"
unshare -p -f true 2>/dev/null && OTHER=(unshare -p -f) && det_how="the second in a pid namespace of its own"
for from in 1 19551; do
	job --seed "$from" --schedules 100
	WRAP=("${OTHER[@]}")
	job --seed "$from" --schedules 100
	WRAP=()
done
# And not on the real clock (the state file's stamp and ctime are virtual,
# docs/design.md section 14): a run stopped for 250 ms every 50 ms, as a loaded
# machine stalls it, gives the trace it gives unstopped (main at 357b5b5 did not).
# shellcheck disable=SC2317	# run through WRAP
stalled() {
	"$@" &
	local p=$!
	# shellcheck disable=SC2064
	trap "kill -CONT $p 2>/dev/null" EXIT	# never left stopped
	while kill -0 "$p" 2>/dev/null; do
		sleep 0.05
		kill -STOP "$p" 2>/dev/null
		sleep 0.25
		kill -CONT "$p" 2>/dev/null
	done
	wait "$p"
}
stall_det=$njobs
job --seed 1 --schedules 300 --disk-faults all
WRAP=(stalled)
job --seed 1 --schedules 300 --disk-faults all
WRAP=()
rules=$("$SIM" --list-rules | awk '{print $1}')
for rule in $rules; do
	# shellcheck disable=SC2046
	job --seed "$(rule_seed "$rule")" --schedules "$SIM_RULE_BUDGET" $(rule_args "$rule")
done
NSTIER_RULES=$(grep '^ns-' <<<"$rules")
nstier_rules=$njobs
for rule in $NSTIER_RULES; do
	# shellcheck disable=SC2046
	job --seed "$(nstier_seed "$rule")" --schedules "$SIM_RULE_BUDGET" --tiers all $(rule_args "$rule")
done
regm=$njobs
job --seed 1 --schedules 100 --regions m
# Hand edits of marks rows (--mark-edits all) with every rule on: the
# simulated triggers refuse every lowering UPDATE and DELETE; a TRUNCATE of
# idgen_marks, which no trigger sees, is residue of its own class
# (marks-truncated, docs/design.md 14.1), never a duplicate.
SIM_MARK_SCHEDULES=${SIM_MARK_SCHEDULES:-1000}
marks=$njobs
job --seed 1 --schedules "$SIM_MARK_SCHEDULES" --mark-edits all
path1=$njobs
job --seed 1 --schedules "$SIM_RULE_BUDGET" --read-only none --timeouts none --disable stamp --faults "$STAMP_PATH1"
# idgenctl's tier retire-server and ns raise run for real (--ctl-ops, section
# 14), every rule on: no duplicate; retirements completed, idservers restarted
# without the server, and its offset refused to a new server (add-server); a
# namespace raised, and a raise below its marks refused; B halved in the pairs
# of B = 8192 among the namespace schedules (b-change).
SIM_CTLOPS=${SIM_CTLOPS:-800}
ctlops=$njobs
job --seed 1 --schedules "$SIM_CTLOPS" --tiers all --ctl-ops retire
job --seed 1 --schedules "$SIM_CTLOPS" --namespaces all --ctl-ops ns-raise,b-change
# Namespaces in tiers (--namespaces all --tiers all, section 14), every rule
# on, with tier retire-server: no duplicate, namespace blocks drawn on o3 and
# o4, retirements complete (a retired server's idgen_ns_marks rows carried,
# and read before its refusal: 12.5); a third of the tiers raised from the
# pair and grown with namespaces served (13.8). About 5 s of CPU.
SIM_NSTIER=${SIM_NSTIER:-2000}
nstier=$njobs
job --seed 1 --schedules "$SIM_NSTIER" --namespaces all --tiers all --ctl-ops retire
# Regression seeds of namespaces in raise schedules (docs/design.md 13.8),
# every rule on, each of which issued an ID twice before its fix: seed 138, a
# killed add-server's row of n0 left 'ready' on the new server after ns drop
# reached the pair alone (add-server now takes such a row off it); seed 7002,
# ns drop and create run on the pair alone once add-server had completed, the
# new server keeping n0 'ready' under its old B (ns now refuses while a
# server of the region is missing from the config); seed 13198 (--tiers all,
# the hunt of ns-write-ahead's find), the same refusal: ns drop n0 (B=64) on the
# pair alone, o3 not configured, ns create n0 B=1, ID 450 from both (13.3);
# seed 420572 (--read-only all), odd refused mid-way through a change of the
# increment held the only copy of restored even's mark, and a fresh idserver
# drew even's ticket 18 again: a refused check's marks now bind (6.4).
REGRESS_NS=(
	"--seed 138 --schedules 1 --namespaces all --tiers raise --faults lost-reply,lower,timeout --events 2,68,70,88,104,182,184,185,195,258,260,286,287"
	"--seed 7002 --schedules 1 --namespaces all --tiers raise --faults drop,lower,restart --events 37,39,41,42,43,119,244,333,334,340,342,343,345,347,369,375,385,473,556,568"
	"--seed 13198 --schedules 1 --namespaces all --tiers all --faults down,both-down,clock --events 38,39,72,119,125,131,149,150,161,174,179,224,244,246,247,301"
	"--seed 420572 --schedules 1 --namespaces all --tiers all --read-only all --disk-faults all --lease-freed all --faults restore,read-only --events 80,81,83,193,224,227,289,292,296,301,308,316,323,447"
)
regress=$njobs
for r in "${REGRESS_NS[@]}"; do
	# shellcheck disable=SC2086
	job $r
done
# Liveness (docs/design.md section 14): with each injected defect of --stall
# (retry: a lost server never probed again; extend: a lease's extensions never
# reach its generator) the checker must report a failure within the budget.
SIM_STALL_BUDGET=${SIM_STALL_BUDGET:-100}
stall=$njobs
# retry is hunted on quiet disks and without query timeouts: their failures
# each begin a healthy interval again (section 14), so they hide a stall.
job --seed 1 --schedules "$SIM_STALL_BUDGET" --stall retry --disk-faults none --timeouts none
job --seed 1 --schedules "$SIM_STALL_BUDGET" --stall extend
wait

for sl in "${slices[@]}"; do
	IFS=: read -r j s n <<<"$sl"
	echo "all rules on, seeds $s..$((s + n - 1)): $(out "$j")"
	[ "$(rc "$j")" -eq 0 ] || { echo "FAIL: the simulation issued an ID twice or broke liveness (replay: $SIM --seed $s --schedules $n):"; why "$j"; fail=1; }
done
# Liveness with every rule on: no failure in the range (each slice's rc says so too).
lv=$(for sl in "${slices[@]}"; do
	IFS=: read -r j s n <<<"$sl"
	grep '^liveness:' "$tmp/$j.all"
done | sed -E 's/^liveness: ([0-9]+) failures; \(T\) checked in ([0-9]+) of ([0-9]+) schedules, ([0-9]+) healthy intervals, ([0-9]+) tickets.*\(F\) ([0-9]+) takes.*/\1 \2 \4 \5 \6/' |
	awk '{ f += $1; t += $2; i += $3; b += $4; v += $5 }
	END { printf "%d failures; (T) in %d schedules, %d healthy intervals, %d tickets banked in them; (F) %d takes with a valid window", f, t, i, b, v }')
echo "liveness, seeds 1..$SIM_SCHEDULES: $lv"
case "$lv" in
"0 failures;"*) ;;
*) echo "FAIL: a liveness failure with every rule on"; fail=1 ;;
esac
# With every rule on, the simulated triggers refuse every hand edit of a held
# lease row (fault lease-freed) and none of the idservers' own statements.
lf=$(for sl in "${slices[@]}"; do
	IFS=: read -r j s n <<<"$sl"
	grep '^lease-freed:' "$tmp/$j.all"
done | sed -E 's/.* ([0-9]+) sent, ([0-9]+) applied .*\), ([0-9]+) refused .*; ([0-9]+) idserver .*/\1 \2 \3 \4/' |
	awk '{ s += $1; a += $2; r += $3; w += $4 }
	END { printf "%d sent, %d applied, %d refused, %d idserver statements refused", s, a, r, w }')
echo "lease rows freed by hand, seeds 1..$SIM_SCHEDULES: $lf"
case "$lf" in
*" 0 applied, "*"refused, 0 idserver"*) ;;
*) echo "FAIL: with every rule on, a hand edit of a held lease row was applied or an idserver statement refused"; fail=1 ;;
esac
# The marks' triggers refuse none of the idservers' or idgenctl's statements.
mg=$(for sl in "${slices[@]}"; do
	IFS=: read -r j s n <<<"$sl"
	sed -n 's/^marks: \([0-9]*\) .*/\1/p' "$tmp/$j.all"
done | awk '{ r += $1 } END { print r + 0 }')
echo "marks' triggers, seeds 1..$SIM_SCHEDULES: $mg idserver and idgenctl statements refused"
[ "$mg" -eq 0 ] || { echo "FAIL: the marks' triggers refused an idserver's or idgenctl's statement"; fail=1; }
for kn in "${known[@]}"; do
	IFS=: read -r j k <<<"$kn"
	if [ "$(rc "$j")" -eq 1 ]; then
		echo "open finding, left out of the range: seed $k still issues an ID twice (replay and shrink: $SIM --seed $k --schedules 1 --shrink)"
	else
		echo "seed $k of SIM_KNOWN no longer issues an ID twice ($(out "$j")): take it out of SIM_KNOWN"
	fi
done
nalone=0
for al in "${alone[@]}"; do
	IFS=: read -r j k a <<<"$al"
	hb=$(sed -n "s/^schedule $k trace //p" "$tmp/$j.all")
	ha=$(sed -n "s/^schedule $k trace //p" "$tmp/$a.all")
	if [ -z "$hb" ] && [ "$(rc "$j")" -ne 0 ]; then
		continue	# its slice stopped before it: reported above
	fi
	if [ -z "$ha" ] || [ "$ha" != "$hb" ]; then
		echo "FAIL: seed $k gave trace ${hb:-none} in its slice and ${ha:-none} alone (replay: $SIM --seed $k --schedules 1 --hashes --verbose)"
		fail=1
	fi
	nalone=$((nalone + 1))
done
echo "deterministic: $nalone seeds from inside the slices give alone the trace hash they gave there"
echo "random slice from seed $seed: $(out $rnd)"
[ "$(rc $rnd)" -eq 0 ] || { echo "FAIL: the random slice issued an ID twice (replay: $SIM --seed $seed --schedules ${SIM_RANDOM_SCHEDULES:-200}):"; why $rnd; fail=1; }
for k in 0 2; do
	a=$(out $((det + k)) | sed 's/.*trace //')
	b=$(out $((det + k + 1)) | sed 's/.*trace //')
	from=$(awk '{print $2}' "$tmp/$((det + k)).args")
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		echo "deterministic: seeds from $from twice ($det_how) give trace $a"
	else
		echo "FAIL: seeds from $from gave traces $a and $b"; fail=1
	fi
done
a=$(out $stall_det | sed 's/.*trace //')
b=$(out $((stall_det + 1)) | sed 's/.*trace //')
if [ -n "$a" ] && [ "$a" = "$b" ]; then
	echo "deterministic: seeds from 1 with disk faults, the second run stopped 250 ms every 50 ms, give trace $a"
else
	echo "FAIL: seeds from 1 with disk faults gave trace $a and, stopped for 250 ms every 50 ms, $b"; fail=1
fi
# The real inode numbers stay out of the model (the stamps carry the
# simulated ones, docs/design.md section 14): seed 3232 gave two traces, one
# run in four, as its stamp, torn across a dropped sector, kept its tail or not
# by the real inode's digits in its check. Ten runs, one trace.
det3232=$(for _ in 1 2 3 4 5 6 7 8 9 10; do
	"$SIM" --seed 3232 --schedules 1 --tiers all --namespaces all --disable ns-state-marks | tail -n 1 | sed 's/.*trace //'
done | sort -u)
if [ -n "$det3232" ] && [ "$(wc -l <<<"$det3232")" -eq 1 ]; then
	echo "deterministic: seed 3232 (disk faults, a stamp torn at a sector) ten times gives trace $det3232"
else
	echo "FAIL: seed 3232 ten times gave traces $(tr '\n' ' ' <<<"$det3232")(replay: $SIM --seed 3232 --schedules 1 --tiers all --namespaces all --disable ns-state-marks --verbose)"; fail=1
fi
n=$((det + 6))
for rule in $rules; do
	line=$(out $n)
	case "$line" in
	*" 0 duplicates"* | "") echo "FAIL: $(rule_args "$rule") found no duplicate in $SIM_RULE_BUDGET schedules: $line"
		fail=1 ;;
	*) echo "$(rule_args "$rule"): $line" ;;
	esac
	n=$((n + 1))
done
n=$nstier_rules
for rule in $NSTIER_RULES; do
	args="--tiers all $(rule_args "$rule")"
	line=$(out $n)
	k=$(sed -n 's/^idsim: seed \([0-9]*\) issued an ID twice.*/\1/p' "$tmp/$n.all" | head -n 1)
	case "$line" in
	*" 0 duplicates"* | "") echo "FAIL: $args found no duplicate in $SIM_RULE_BUDGET schedules from seed $(nstier_seed "$rule"): $line"
		fail=1 ;;
	*)
		if [ -z "$k" ]; then
			echo "FAIL: $args: a duplicate, but no 'issued an ID twice' line names its seed: $line"
			fail=1
			n=$((n + 1))
			continue
		fi
		# shellcheck disable=SC2046
		on=$("$SIM" --seed "$k" --schedules 1 $(sed -E 's/--disable [a-z-]+//g' <<<"$args") | tail -n 1)
		case "$on" in
		*" 0 duplicates"*) echo "$args (from seed $(nstier_seed "$rule")): $line; seed $k with the rule on: 0 duplicates" ;;
		*) echo "FAIL: $args: seed $k issues an ID twice with the rule on too, so its duplicate is not the rule's: $on"
			fail=1 ;;
		esac ;;
	esac
	n=$((n + 1))
done
# The stamp's path 1 (a copy of a dead idserver's file), file-back masked.
case "$(out $path1)" in
*" 0 duplicates"* | "") echo "FAIL: --disable stamp found no copy of a dead idserver's file resumed twice (path 1, --faults $STAMP_PATH1) in $SIM_RULE_BUDGET schedules: $(out $path1)"
	fail=1 ;;
*) echo "--read-only none --timeouts none --disable stamp --faults $STAMP_PATH1 (path 1): $(out $path1)" ;;
esac
ret=$(sed -n 's/^retire: \([0-9]*\) tiers .*, \([0-9]*\) complete; .* refused \([0-9]*\)$/\1 \2 \3/p' "$tmp/$ctlops.all")
read -r ret_n ret_done ret_refused <<<"${ret:-0 0 0}"
if [ "$(rc $ctlops)" -eq 0 ] && [ "$ret_done" -gt 0 ] && [ "$ret_refused" -gt 0 ]; then
	echo "--tiers all --ctl-ops retire (every rule on): $(out $ctlops); $ret_done of $ret_n retirements complete, the retired offset refused to add-server $ret_refused times"
else
	echo "FAIL: --tiers all --ctl-ops retire: a duplicate, a failed schedule, or no retirement complete or refused ($ret_done, $ret_refused): $(out $ctlops)"; why $ctlops; fail=1
fi
nsr=$(sed -n 's/^ns raise: .* run \([0-9]*\) times, .*, \([0-9]*\) complete; refused: \([0-9]*\) below .*/\1 \2 \3/p' "$tmp/$((ctlops + 1)).all")
read -r nsr_n nsr_done nsr_back <<<"${nsr:-0 0 0}"
bch=$(sed -n 's/^b change: .* ran; \([0-9]*\) halved, .*/\1/p' "$tmp/$((ctlops + 1)).all")
if [ "$(rc $((ctlops + 1)))" -eq 0 ] && [ "$nsr_done" -gt 0 ] && [ "$nsr_back" -gt 0 ] &&
	[ "${bch:-0}" -gt 0 ]; then
	echo "--namespaces all --ctl-ops ns-raise,b-change (every rule on): $(out $((ctlops + 1))); ns raise run $nsr_n times, $nsr_done complete, $nsr_back below the marks refused; B halved in $bch"
else
	echo "FAIL: --namespaces all --ctl-ops ns-raise,b-change: a duplicate, a failed schedule, or no raise complete or refused, or no B halved ($nsr_done, $nsr_back, ${bch:-0}): $(out $((ctlops + 1)))"; why $((ctlops + 1)); fail=1
fi
nst=$(sed -n "s/^namespaces: .*; \([0-9]*\) blocks drawn on a tier's o3 and o4, \([0-9]*\) of them again$/\1 \2/p" "$tmp/$nstier.all")
read -r nst_n nst_again <<<"${nst:-0 0}"
nst_ret=$(sed -n 's/^retire: \([0-9]*\) tiers .*, \([0-9]*\) complete; .*/\2/p' "$tmp/$nstier.all")
if [ "$(rc $nstier)" -eq 0 ] && [ "$nst_n" -gt 0 ] && [ "${nst_ret:-0}" -gt 0 ]; then
	echo "--namespaces all --tiers all --ctl-ops retire (every rule on): $(out $nstier); $nst_n namespace blocks drawn on o3 and o4 ($nst_again of them again), $nst_ret retirements complete"
else
	echo "FAIL: --namespaces all --tiers all --ctl-ops retire: a duplicate, a failed schedule, no namespace block drawn on o3 or o4 ($nst_n), or no retirement complete (${nst_ret:-0}): $(out $nstier)"; why $nstier; fail=1
fi
for r in "${REGRESS_NS[@]}"; do
	case "$(rc $regress):$(out $regress)" in
	"0:"*" 0 duplicates"*) echo "regression ($r): $(out $regress)" ;;
	*) echo "FAIL: regression seed issued an ID twice (replay: $SIM $r): $(out $regress)"; why $regress; fail=1 ;;
	esac
	regress=$((regress + 1))
done
# A region's servers alone under another M are refused by its idservers' check
# of their own servers: every such schedule sees the refusal, none serves a ticket.
rm_res=$(sed -n 's/^residue by class:.* regions-m \([0-9]*\).*/\1/p' "$tmp/$regm.all")
rm_split=$(sed -n 's/^regions: .*: \([0-9]*\) of them only its servers, refused in \([0-9]*\), \([0-9]*\) ticket IDs.*/\1 \2 \3/p' "$tmp/$regm.all")
read -r rm_n rm_refused rm_ids <<<"${rm_split:-0 -1 -1}"
if [ "$(rc $regm)" -eq 0 ] && [ "${rm_res:-0}" -gt 0 ] && [ "$rm_n" -gt 0 ] &&
	[ "$rm_refused" -eq "$rm_n" ] && [ "$rm_ids" -eq 0 ]; then
	echo "--regions m (every rule on): $(out $regm), $rm_res of 12.3's residue regions-m; $rm_n with only a region's servers under another M, all refused"
else
	echo "FAIL: --regions m: no regions-m residue, a duplicate, or a region's servers alone under another M not refused ($rm_refused of $rm_n refused, $rm_ids ticket IDs served): $(out $regm)"; why $regm; fail=1
fi
# Hand edits of marks with every rule on: none of the lowering ones applied, no duplicate.
me_line=$(grep '^mark-edits:' "$tmp/$marks.all")
me_applied=$(sed -n 's/.*), [0-9]* applied (own \([0-9]*\), copy \([0-9]*\), delete \([0-9]*\), reset \([0-9]*\), truncate [0-9]*, ns \([0-9]*\)).*/\1 \2 \3 \4 \5/p' <<<"$me_line")
me_trunc=$(sed -n 's/^residue by class:.* marks-truncated \([0-9]*\).*/\1/p' "$tmp/$marks.all")
if [ "$(rc $marks)" -eq 0 ] && [ "$me_applied" = "0 0 0 0 0" ]; then
	echo "--mark-edits all (every rule on): $(out $marks); ${me_line#mark-edits: }; ${me_trunc:-0} of residue marks-truncated"
else
	echo "FAIL: --mark-edits all: a duplicate, or a lowering hand edit of a mark applied (${me_applied:-?}): $(out $marks)"; why $marks; fail=1
fi
# Each injected stall must be reported as a liveness failure, and nothing else.
for m in retry extend; do
	st_line=$(grep '^liveness:' "$tmp/$stall.all")
	st_first=$(grep -m1 'liveness failure' "$tmp/$stall.all" | sed 's/;.*//' | cut -c1-160)
	case "$st_line" in
	"liveness: 0 failures"* | "") echo "FAIL: --stall $m: no liveness failure in $SIM_STALL_BUDGET schedules: $(out $stall)"; fail=1 ;;
	*) case "$(out $stall)" in
		*" 0 duplicates"*) echo "--stall $m: ${st_line%%;*} in $SIM_STALL_BUDGET schedules (first: $st_first)" ;;
		*) echo "FAIL: --stall $m: $(out $stall)"; fail=1 ;;
		esac ;;
	esac
	stall=$((stall + 1))
done
exit $fail
