#!/bin/sh
# compose-tls.sh [DIR [NAME=SUBJECT_ALT_NAMES...]] - the certificates a compose
# file runs on, made with openssl into DIR (default /tls, the compose file's `tls`
# volume) by its `tls` init service before anything starts; files already there
# are kept, so a restart changes nothing and an operator's own certificates (same
# names) win. Without NAME=... arguments, docker-compose.yml's:
#
#   ca-cert.pem, ca-key.pem          a CA of this deployment (its key root-only)
#   idserver-cert.pem, -key.pem      idserver's listeners: 127.0.0.1, localhost,
#                                    the name idserver, 172.28.0.20
#   ticket-odd-cert.pem, -key.pem    the ticket servers, by the IP idserver uses
#   ticket-even-cert.pem, -key.pem   (db_tls_verify_host checks it)
#
# (docker-compose.regions.yml names its own: idserver-r0=IP:...,DNS:... r0-odd=IP:...)
#
# Clients verify against ca-cert.pem:
#   docker compose exec idserver cat /etc/idgen/tls/ca-cert.pem >ca-cert.pem
# Run as root, the keys are given to their users: idserver's (a NAME starting
# with idserver) to the image's idgen user, the others (ticket servers) to
# MARIADB_UID (999 in the mariadb image).
# IDGEN_TLS_DAYS (default 825) is how long each certificate lasts.
set -eu
dir=${1:-/tls}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- idserver=IP:127.0.0.1,IP:172.28.0.20,DNS:localhost,DNS:idserver \
	ticket-odd=IP:172.28.0.11 ticket-even=IP:172.28.0.12
days=${IDGEN_TLS_DAYS:-825}
mkdir -p "$dir"
umask 077

# leaf NAME SUBJECT_ALT_NAMES: a P-256 key and a certificate of the CA for them.
leaf() {
	[ -s "$dir/$1-cert.pem" ] && [ -s "$dir/$1-key.pem" ] && return 0
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$1-key.pem"
	openssl req -new -key "$dir/$1-key.pem" -subj "/CN=$1" -out "$dir/$1.csr"
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$2" >"$dir/$1.ext"
	openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca-cert.pem" -CAkey "$dir/ca-key.pem" \
		-CAcreateserial -days "$days" -extfile "$dir/$1.ext" -out "$dir/$1-cert.pem" 2>/dev/null
	rm -f "$dir/$1.csr" "$dir/$1.ext"
	echo "compose-tls: made $1-cert.pem ($2)"
}

if ! [ -s "$dir/ca-cert.pem" ] || ! [ -s "$dir/ca-key.pem" ]; then
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca-key.pem"
	openssl req -x509 -new -key "$dir/ca-key.pem" -days "$days" -subj "/CN=idgen compose CA" \
		-out "$dir/ca-cert.pem"
	echo "compose-tls: made ca-cert.pem"
fi
for arg; do
	leaf "${arg%%=*}" "${arg#*=}"
done
chmod 644 "$dir"/*-cert.pem
chmod 600 "$dir"/*-key.pem
chmod 755 "$dir"
if [ "$(id -u)" = 0 ]; then
	for arg; do
		case ${arg%%=*} in
		idserver*) if id idgen >/dev/null 2>&1; then chown idgen "$dir/${arg%%=*}-key.pem"; fi ;;
		*) chown "${MARIADB_UID:-999}" "$dir/${arg%%=*}-key.pem" ;;
		esac
	done
fi
