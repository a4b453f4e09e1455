#!/usr/bin/env bash
# No Docker engine runs here, so docker-compose.yml is checked by reading: every
# file it mounts exists, the ticket servers get the very schema and settings the
# local pair (scripts/dbpair.sh) loads, in the same order, with the right parity,
# and idserver is wired to both by IP.
. "$(dirname "$0")/lib.sh"

compose=$ROOT/docker-compose.yml
# mounts SERVICE: the host paths mounted by one service, in order.
mounts() {
	awk -v svc="  $1:" '
		$0 == svc { on = 1; next }
		on && /^  [a-z]/ { on = 0 }
		on && $1 == "-" && $2 ~ /^\.\// { split($2, a, ":"); print a[1] ":" a[2] }' "$compose"
}

for role in odd even; do
	m=$(mounts "ticket-$role")
	[ -n "$m" ] || fail "no mounts for ticket-$role"
	while IFS=: read -r host target; do
		[ -e "$ROOT/$host" ] || fail "ticket-$role mounts missing $host"
	done <<<"$m"
	grep -q "^./schema/$role.cnf:/etc/mysql/conf.d/" <<<"$m" || fail "ticket-$role lacks schema/$role.cnf"
	# The initdb SQL files, in the order the entrypoint runs them (by target name).
	got=$(grep 'docker-entrypoint-initdb.d/.*\.sql$' <<<"$m" | sort -t: -k2 | cut -d: -f1 | sed 's|^\./||' | tr '\n' ' ')
	want="schema/10-tables.sql schema/20-$role.sql schema/40-leases.sql schema/50-$role-workers.sql "
	[ "$got" = "$want" ] || fail "ticket-$role initdb: '$got', local pair loads '$want'"
	# ... and dbpair.sh loads exactly those, so both deployments share one schema.
	for f in 10-tables.sql '20-$role.sql' 40-leases.sql '50-$role-workers.sql' 60-grant.sql.in '$role.cnf'; do
		grep -qF "\$schema/$f" "$ROOT/scripts/dbpair.sh" || fail "dbpair.sh does not load $f"
	done
	grep -q "docker-grant.sh:/docker-entrypoint-initdb.d/" <<<"$m" || fail "ticket-$role: no grant hook"
	# The other role's files must not be mounted.
	other=$([ $role = odd ] && echo even || echo odd)
	! grep -q "$other" <<<"$m" || fail "ticket-$role mounts $other files"
done
grep -q '60-grant.sql.in' "$ROOT/schema/docker-grant.sh" || fail "docker-grant.sh does not load 60-grant.sql.in"

# idserver: built by the Dockerfile, pointed at both servers by IP.
ip_odd=$(awk '/ticket-odd:/ { on = 1 } on && /ipv4_address/ { print $2; exit }' "$compose")
ip_even=$(awk '/ticket-even:/ { on = 1 } on && /ipv4_address/ { print $2; exit }' "$compose")
grep -q -- "--odd_host=$ip_odd" "$compose" || fail "idserver not wired to the odd server ($ip_odd)"
grep -q -- "--even_host=$ip_even" "$compose" || fail "idserver not wired to the even server ($ip_even)"
[ "$ip_odd" != "$ip_even" ] || fail "both servers on one address"
# Every flag idserver gets in compose is a real option.
help=$("$IDSERVER" --help)	# once: grep -q on a pipe would cut the output short (SIGPIPE)
for flag in $(grep -oE -- '--[a-z_]+=' "$compose" | tr -d '=' | sort -u); do
	grep -q -- "^  $flag " <<<"$help" || fail "compose passes unknown flag $flag"
done
grep -q 'make build/idserver' "$ROOT/Dockerfile" || fail "Dockerfile does not build with the Makefile"
grep -q '^COPY proto ' "$ROOT/Dockerfile" || fail "Dockerfile does not copy proto/ (the build compiles it)"
# The state file outlives the container, on a host name that stays the same.
state=$(grep -oE -- '--state_file=[^ ]+' "$compose" | cut -d= -f2)
[ -n "$state" ] || fail "compose sets no state_file"
grep -qE "^      - idserver-state:$(dirname "$state")\$" "$compose" || fail "state_file $state is not on a volume"
grep -q "^VOLUME $(dirname "$state")\$" "$ROOT/Dockerfile" || fail "Dockerfile has no VOLUME for $(dirname "$state")"
grep -q '^    hostname: ' "$compose" || fail "idserver has no fixed hostname (the lease resumes on the same host only)"
# Every port idserver listens on in compose is published and exposed.
for port in $(awk '/^[a-z_]*port *=/ && $1 ~ /^(listen|http|grpc)_port/ { print $3 }' "$ROOT/idserver.conf"); do
	grep -q "127.0.0.1:$port:$port" "$compose" || fail "port $port not published in compose"
	grep -q "^EXPOSE .*\b$port\b" "$ROOT/Dockerfile" || fail "port $port not in the Dockerfile's EXPOSE"
done

# docker-compose.regions.yml: two regions, each its pair and idserver, in one tier
# (M = 4, 5 region bits). Read with a YAML parser: each server's offset is the one
# its region and role need, in its settings and in its shape hook; the initdb
# files are the local pair's plus the shape hook; each idserver is wired to its
# own region's pair, publishes its ports and keeps its state on a volume.
/usr/bin/python3 - "$ROOT" "$help" <<'PY' || fail "docker-compose.regions.yml"
import os, sys, yaml
root, help_text = sys.argv[1], sys.argv[2]
d = yaml.safe_load(open(os.path.join(root, "docker-compose.regions.yml")))
svc, vols = d["services"], d["volumes"]
def die(msg):
    sys.exit("docker-compose.regions.yml: " + msg)
ips = {}
for r in (0, 1):
    for role, off in (("odd", 2 * r + 1), ("even", 2 * r + 2)):
        s = svc["r%d-%s" % (r, role)]
        env = s["environment"]
        want_env = {"IDGEN_TIER_INCREMENT": "4", "IDGEN_SERVER_OFFSET": str(off),
                    "IDGEN_REGION": str(r), "IDGEN_REGION_BITS": "5"}
        for k, v in want_env.items():
            if str(env.get(k)) != v:
                die("r%d-%s: %s is %s, want %s" % (r, role, k, env.get(k), v))
        if s["command"] != ["--auto-increment-increment=4", "--auto-increment-offset=%d" % off]:
            die("r%d-%s: command %s" % (r, role, s["command"]))
        mounts = [m.split(":") for m in s["volumes"]]
        for m in mounts:
            if m[0].startswith("./") and not os.path.exists(os.path.join(root, m[0])):
                die("r%d-%s mounts missing %s" % (r, role, m[0]))
        init = sorted((m[1], m[0]) for m in mounts if m[1].startswith("/docker-entrypoint-initdb.d/"))
        got = [src for _, src in init]
        want = ["./schema/10-tables.sql", "./schema/20-%s.sql" % role, "./schema/docker-shape.sh",
                "./schema/40-leases.sql", "./schema/50-%s-workers.sql" % role, "./schema/docker-grant.sh"]
        if got != want:
            die("r%d-%s initdb order %s, want %s" % (r, role, got, want))
        if ["./schema/%s.cnf" % role, "/etc/mysql/conf.d/idgen.cnf", "ro"] not in mounts:
            die("r%d-%s lacks schema/%s.cnf" % (r, role, role))
        data = [m[0] for m in mounts if m[1] == "/var/lib/mysql"]
        if len(data) != 1 or data[0] not in vols:
            die("r%d-%s: data not on a named volume" % (r, role))
        ips[(r, role)] = s["networks"]["idgen"]["ipv4_address"]
if len(set(ips.values())) != 4:
    die("servers share an address")
flags_seen = set()
for r in (0, 1):
    s = svc["idserver-r%d" % r]
    cmd = s["command"]
    want = ["--tier_increment=4", "--region_bits=5", "--region=%d" % r,
            "--odd_host=" + ips[(r, "odd")], "--even_host=" + ips[(r, "even")]]
    for w in want:
        if w not in cmd:
            die("idserver-r%d lacks %s" % (r, w))
    flags_seen.update(c.split("=")[0] for c in cmd)
    state = [c.split("=", 1)[1] for c in cmd if c.startswith("--state_file=")]
    if not state or not any(v.split(":")[1] == os.path.dirname(state[0]) and v.split(":")[0] in vols
                            for v in s["volumes"]):
        die("idserver-r%d: state file not on a volume" % r)
    if not s.get("hostname"):
        die("idserver-r%d has no fixed hostname" % r)
    for k, port in enumerate((4242, 4243, 4244)):
        if "127.0.0.1:%d:%d" % (port + 10 * r, port) not in s["ports"]:
            die("idserver-r%d does not publish %d as %d" % (r, port, port + 10 * r))
for f in sorted(flags_seen):
    if ("\n  %s " % f) not in "\n" + help_text:
        die("unknown idserver flag %s" % f)
PY
grep -q 'IDGEN_SERVER_OFFSET' "$ROOT/schema/docker-shape.sh" && grep -q '30-shape.sql.in' "$ROOT/schema/docker-shape.sh" ||
	fail "docker-shape.sh does not apply 30-shape.sql.in"
log "ok"
