#!/usr/bin/env bash
# No Docker engine runs here, so docker-compose.yml is checked by reading: every
# file it mounts exists, the ticket servers get the very schema and settings the
# local pair (scripts/dbpair.sh) loads, in the same order, with the right parity,
# idserver is wired to both by IP, and TLS is on everywhere with certificates its
# tls service makes (run here, and checked with openssl).
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

# TLS on (issue 21): idserver's three ports and its connections to the ticket
# servers, with the certificates the tls service makes in the tls volume before
# anything starts. The script runs here as it runs there (into $T_DIR/tls, twice:
# the second run keeps the files); every file a service names in the volume exists,
# chains to the CA, and names the address it is reached by.
TLSOUT=$T_DIR/tls
sh "$ROOT/scripts/compose-tls.sh" "$TLSOUT" >"$T_DIR/compose-tls.log" 2>&1 || fail "compose-tls.sh: $(tail -n 3 "$T_DIR/compose-tls.log")"
sum=$(cat "$TLSOUT"/*.pem | md5sum)
sh "$ROOT/scripts/compose-tls.sh" "$TLSOUT" >>"$T_DIR/compose-tls.log" 2>&1 && [ "$(cat "$TLSOUT"/*.pem | md5sum)" = "$sum" ] ||
	fail "compose-tls.sh a second time changed the certificates"
grep -q '^COPY scripts/compose-tls.sh /usr/local/bin/compose-tls.sh$' "$ROOT/Dockerfile" ||
	fail "the Dockerfile does not carry scripts/compose-tls.sh"
for pkg in libevent-openssl-2.1-7 libssl3 openssl; do
	sed -n '/^FROM debian:12-slim/,$p' "$ROOT/Dockerfile" | has -E "[[:space:]]$pkg([[:space:]]|\$)" ||
		fail "the Dockerfile's runtime image lacks $pkg"
done
/usr/bin/python3 - "$ROOT" "$TLSOUT" <<'PY' || fail "compose files: TLS"
import os, subprocess, sys, yaml
root, outroot = sys.argv[1], sys.argv[2]
def check(fname):
    d = yaml.safe_load(open(os.path.join(root, fname)))
    svc, vols = d["services"], d["volumes"]
    def die(msg):
        sys.exit("%s: %s" % (fname, msg))
    t = svc.get("tls") or die("no tls service")
    ep = t.get("entrypoint") or []
    if ep[:2] != ["/usr/local/bin/compose-tls.sh", "/tls"] or "tls:/tls" not in t["volumes"]:
        die("the tls service does not run compose-tls.sh into the tls volume")
    if "tls" not in vols:
        die("no tls volume")
    # The script as the tls service runs it, with the service's arguments.
    out = os.path.join(outroot, fname)
    subprocess.run(["sh", os.path.join(root, "scripts/compose-tls.sh"), out] + ep[2:],
                   check=True, capture_output=True)
    def mount(name):
        m = [v.split(":") for v in svc[name]["volumes"] if v.split(":")[0] == "tls"]
        if len(m) != 1 or m[0][2:] != ["ro"]:
            die("%s does not mount the tls volume read-only" % name)
        return m[0][1]
    def local(name, path):
        at = mount(name)
        if not path.startswith(at + "/"):
            die("%s: %s is not in the tls volume (%s)" % (name, path, at))
        f = os.path.join(out, path[len(at) + 1:])
        if not os.path.isfile(f):
            die("%s: %s is not made by compose-tls.sh" % (name, path))
        return f
    def san(cert):
        return subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", cert],
                              capture_output=True, text=True, check=True).stdout
    def verify(cert, ip):
        r = subprocess.run(["openssl", "verify", "-CAfile", os.path.join(out, "ca-cert.pem"), cert],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("%s does not chain to ca-cert.pem: %s" % (cert, r.stdout + r.stderr))
        if "IP Address:%s" % ip not in san(cert):
            die("%s does not name %s: %s" % (cert, ip, san(cert)))
    dbs, ids = {}, []
    for name, sv in svc.items():
        if name == "tls":
            continue
        if (sv.get("depends_on") or {}).get("tls", {}).get("condition") != "service_completed_successfully":
            die("%s does not wait for the tls service" % name)
        ip = sv["networks"]["idgen"]["ipv4_address"]
        if str(sv.get("image", "")).startswith("mariadb:"):
            opts = dict(c.split("=", 1) for c in sv["command"] if c.startswith("--ssl-"))
            verify(local(name, opts["--ssl-cert"]), ip)
            local(name, opts["--ssl-key"])
            dbs[ip] = name
        else:
            ids.append((name, ip))
    if not ids or len(dbs) < 2:
        die("no idserver, or fewer than two ticket servers")
    for name, ip in ids:
        sv = svc[name]
        opts = dict(c[2:].split("=", 1) for c in sv["command"])
        for k in ("listen_tls", "http_tls", "grpc_tls"):
            if opts.get(k) != "on":
                die("%s: %s is not on" % (name, k))
        if opts.get("db_tls") != "required":
            die("%s: db_tls is not required" % name)
        # Every ticket server it reaches has a certificate for that address.
        hosts = [opts["odd_host"], opts["even_host"]] + [a.split(":")[0] for r in
            opts.get("other_regions", "").split() for a in r.split("=", 1)[1].split(",")]
        for h in hosts:
            if h not in dbs:
                die("%s reaches %s, which is no ticket server with a certificate" % (name, h))
        cert = local(name, opts["tls_cert_file"])
        local(name, opts["tls_key_file"])
        ca = local(name, opts["db_tls_ca_file"])
        verify(cert, "127.0.0.1")
        verify(cert, ip)
        env = sv["environment"]
        if str(env.get("IDGEN_TLS")) != "1" or local(name, env.get("IDGEN_TLS_CA", "")) != ca:
            die("%s: IDGEN_TLS=1 and IDGEN_TLS_CA (compose exec ... idgen id) not set" % name)
check("docker-compose.yml")
check("docker-compose.regions.yml")
PY

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
        if s["command"][:2] != ["--auto-increment-increment=4", "--auto-increment-offset=%d" % off]:
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
