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
log "ok"
