/*
 * config.c - the settings table, INI file loading and flag parsing.
 */
#include "config.h"

#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "db.h"
#include "idgen.h"	/* IDGEN_VERSION, the one definition of the version */
#include "server.h"
#include "ns.h"		/* NS_MARKS_MAX */

#define S(f)	CONFIG_STR, offsetof(struct config, f)
#define U(f)	CONFIG_UINT, offsetof(struct config, f)

static const struct config_key config_keys[] = {
	{ "listen_host", S(listen_host), "127.0.0.1", 0, 0,
	    "IP address to serve the text protocol and RESP on (v4 or v6)" },
	{ "listen_port", U(listen_port), "4242", 1, 65535,
	    "TCP port of the text protocol and RESP" },
	{ "http_host", S(http_host), "127.0.0.1", 0, 0,
	    "IP address of the HTTP API (`/v1/*`, `/health`, `/stats`, `/metrics`)" },
	{ "http_port", U(http_port), "0", 0, 65535,
	    "port of the HTTP API; 0 turns HTTP off" },
	{ "http_timeout_ms", U(http_timeout_ms), "10000", 100, 600000,
	    "HTTP: a connection idle or slow this long (reading or writing) is closed" },
	{ "http_max_header_bytes", U(http_max_header_bytes), "8192", 1024, 1048576,
	    "HTTP: largest request line and headers; more is refused" },
	{ "http_max_body_bytes", U(http_max_body_bytes), "4096", 0, 1048576,
	    "HTTP: largest request body (a POST's JSON body, e.g. `{\"count\": 5}`); more is "
	    "refused (413)" },
	{ "http_cors_origins", S(http_cors_origins), "", 0, 0,
	    "HTTP: origins a browser page may call the API from (CORS), separated by commas "
	    "(e.g. `https://app.example`); `*` allows any; empty: no CORS headers" },
	{ "http_cors_max_age_s", U(http_cors_max_age_s), "600", 0, 86400,
	    "HTTP: how long a browser may cache a CORS preflight (`Access-Control-Max-Age`)" },
	{ "grpc_host", S(grpc_host), "127.0.0.1", 0, 0,
	    "IP address of the gRPC service (HTTP/2; over TLS with `grpc_tls`)" },
	{ "grpc_port", U(grpc_port), "0", 0, 65535, "port of the gRPC service; 0 turns it off" },
	{ "grpc_max_streams", U(grpc_max_streams), "100", 1, 100000,
	    "gRPC: concurrent streams per connection (`SETTINGS_MAX_CONCURRENT_STREAMS`)" },
	{ "grpc_max_message_bytes", U(grpc_max_message_bytes), "4096", 16, 1048576,
	    "gRPC: largest request message; more is `RESOURCE_EXHAUSTED`" },
	{ "grpc_max_connections", U(grpc_max_connections), "1000", 1, 1000000,
	    "gRPC: connections served at once; at it, a new connection takes the slot of the "
	    "one least recently served (its calls get `UNAVAILABLE`, then GOAWAY, naming the "
	    "setting; `grpc_evicted`)" },
	{ "grpc_max_connections_per_ip", U(grpc_max_connections_per_ip), "100", 1, 1000000,
	    "gRPC: connections from one address (an IPv6 /64 counts as one) at once (each "
	    "carries `grpc_max_streams` calls); more are closed at accept, so that one peer "
	    "cannot take every slot" },
	{ "grpc_request_timeout_ms", U(grpc_request_timeout_ms), "10000", 100, 3600000,
	    "gRPC: a request whose `END_STREAM` has not come this long after its headers "
	    "(headers without the message, or a partial message) is answered "
	    "`DEADLINE_EXCEEDED` and reset" },
	{ "grpc_idle_timeout_ms", U(grpc_idle_timeout_ms), "60000", 100, 3600000,
	    "gRPC: a connection whose requests make no progress this long (no request bytes "
	    "in, no reply out) is closed with a GOAWAY; PINGs and stalled streams do not "
	    "count, a call waiting for IDs does" },
	{ "max_callers", U(max_callers), "32", 0, 256,
	    "distinct `caller_service` names counted in `/metrics` (the rest count as "
	    "`_other`)" },
	{ "listen_tls", S(listen_tls), "off", 0, 0,
	    "TLS on the text/RESP port: `off`, or `on` (that port then speaks TLS only; "
	    "`tls_cert_file` and `tls_key_file`)" },
	{ "http_tls", S(http_tls), "off", 0, 0,
	    "TLS on the HTTP port (HTTPS only): `off` or `on`" },
	{ "grpc_tls", S(grpc_tls), "off", 0, 0,
	    "TLS on the gRPC port (ALPN `h2` only): `off` or `on`" },
	{ "tls_cert_file", S(tls_cert_file), "", 0, 0,
	    "certificate chain (PEM) of every TLS port, unless a port has its own; with "
	    "`tls_key_file` (both or neither); loaded again on SIGHUP" },
	{ "tls_key_file", S(tls_key_file), "", 0, 0, "private key (PEM) of `tls_cert_file`" },
	{ "listen_tls_cert_file", S(listen_tls_cert_file), "", 0, 0,
	    "the text/RESP port's own certificate chain (PEM), instead of `tls_cert_file`" },
	{ "listen_tls_key_file", S(listen_tls_key_file), "", 0, 0,
	    "private key (PEM) of `listen_tls_cert_file`" },
	{ "http_tls_cert_file", S(http_tls_cert_file), "", 0, 0,
	    "the HTTP port's own certificate chain (PEM), instead of `tls_cert_file`" },
	{ "http_tls_key_file", S(http_tls_key_file), "", 0, 0,
	    "private key (PEM) of `http_tls_cert_file`" },
	{ "grpc_tls_cert_file", S(grpc_tls_cert_file), "", 0, 0,
	    "the gRPC port's own certificate chain (PEM), instead of `tls_cert_file`" },
	{ "grpc_tls_key_file", S(grpc_tls_key_file), "", 0, 0,
	    "private key (PEM) of `grpc_tls_cert_file`" },
	{ "tls_ca_file", S(tls_ca_file), "", 0, 0,
	    "CA certificates (PEM) client certificates must chain to; only with "
	    "`tls_verify_client`" },
	{ "tls_verify_client", S(tls_verify_client), "off", 0, 0,
	    "client certificates (mTLS) on every TLS port: `off`, `optional` (asked for, "
	    "verified when sent) or `required` (a client without one is refused in the "
	    "handshake)" },
	{ "tls_min_version", S(tls_min_version), "TLSv1.2", 0, 0,
	    "oldest TLS version a client may use on the listeners: `TLSv1.2` or `TLSv1.3`; "
	    "older ones are refused in the handshake" },
	{ "tls_ciphers", S(tls_ciphers), "ECDHE+AESGCM:ECDHE+CHACHA20", 0, 0,
	    "TLS 1.2 cipher list of the listeners (OpenSSL's syntax); the default: forward "
	    "secret AEAD suites only, no CBC" },
	{ "tls_ciphersuites", S(tls_ciphersuites),
	    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256", 0, 0,
	    "TLS 1.3 cipher suites of the listeners, separated by colons" },
	{ "tls_handshake_timeout_ms", U(tls_handshake_timeout_ms), "10000", 100, 600000,
	    "a TLS client whose handshake is not done this long after accept is closed "
	    "(text/RESP and gRPC; HTTP's handshake counts in `http_timeout_ms`)" },
	{ "auth_tokens_file", S(auth_tokens_file), "", 0, 0,
	    "tokens clients must present, one a line (the format above), e.g. "
	    "`/etc/idgen/tokens` (mode 0600) or, under the systemd unit, "
	    "`auth_tokens_file = %d/auth_tokens` (its credential); "
	    "reread on SIGHUP (a removed token stops working on its connections' next "
	    "request; a malformed line is left out, the others applied); empty: no "
	    "authentication" },
	{ "auth_fail_delay_ms", U(auth_fail_delay_ms), "1000", 0, 10000,
	    "auth: a wrong token's reply is held this long once its address (an IPv4 "
	    "address, an IPv6 /64) has failed 3 times within 60 s" },
	{ "auth_open_metrics", U(auth_open_metrics), "1", 0, 1,
	    "auth: 1: `/metrics`, `/health` and gRPC health answer without a token; 0: they "
	    "need one (read-only suffices)" },
	{ "auth_mode", S(auth_mode), "required", 0, 0,
	    "auth: `required`: every request needs a token; `optional`: a token given is "
	    "checked (a wrong one refused), a request without one is served and counted in "
	    "`auth_anonymous`: the rollout of tokens (docs/operations.md, \"Rolling out "
	    "tokens\"); needs `auth_tokens_file`; read at start" },
	{ "odd_host", S(odd_host), "127.0.0.1", 0, 0,
	    "IP address of the odd ticket server" },
	{ "odd_port", U(odd_port), "3307", 1, 65535, "port of the odd ticket server" },
	{ "even_host", S(even_host), "127.0.0.1", 0, 0, "IP address of the even ticket server" },
	{ "even_port", U(even_port), "3308", 1, 65535, "port of the even ticket server" },
	{ "tier_increment", U(tier_increment), "2", 2, 64,
	    "`auto_increment_increment` of every ticket server (the tier's `M`): region `r`'s "
	    "pair has offsets `2r+1` and `2r+2`; the same in every region; checked against "
	    "every meta row" },
	{ "region", U(region), "0", 0, 31,
	    "this idserver's region: the odd/even pair it takes tickets from, and the worker "
	    "numbers it leases" },
	{ "region_bits", U(region_bits), "0", 0, 5,
	    "top worker bits that name the region: 0 (one region of 1024 workers) or 5 (32 "
	    "regions of 32, every region with `B` = 1048576, the only values accepted with "
	    "regions); checked against every meta row" },
	{ "more_servers", S(more_servers), "", 0, 0,
	    "this region's ticket servers beyond the pair: `OFFSET=IP:PORT` separated by "
	    "spaces (IPv6 in brackets; e.g. `3=10.0.0.13:3306`), at most 6, each offset above "
	    "the pair (3) and at most `tier_increment`, in a tier of one region (`region_bits` "
	    "0); `idgenctl tier add-server` prepares one; empty: the pair only" },
	{ "other_regions", S(other_regions), "", 0, 0,
	    "other regions' pairs to take tickets from while this region's pair is down "
	    "(their tickets are unique by offset), tried in order: "
	    "`REGION=ODD_IP:PORT,EVEN_IP:PORT` separated by spaces (IPv6 in brackets; e.g. "
	    "`1=10.1.0.11:3306,10.1.0.12:3306`), at most 6; empty: none" },
	{ "db_user", S(db_user), "idgen", 0, 0,
	    "database user on every ticket server; not empty (the client would connect as "
	    "the OS user)" },
	{ "db_name", S(db_name), "idgen", 0, 0, "database holding the ticket, meta and lease tables" },
	{ "db_password_file", S(db_password_file), "", 0, 0,
	    "file (a regular one) whose first line is the password; when set it wins, even "
	    "if empty; else env `IDGEN_DB_PASSWORD`" },
	{ "db_tls", S(db_tls), "off", 0, 0,
	    "TLS to the ticket servers (and for the lease): `off`, or `required`: every "
	    "connection encrypted and the server's certificate verified; a server that offers "
	    "no TLS, whose certificate does not verify, or that only speaks an older TLS "
	    "version is refused (at start: no start; while running: retried every "
	    "`refused_retry_ms`), never used in cleartext" },
	{ "db_tls_ca_file", S(db_tls_ca_file), "", 0, 0,
	    "CA certificates (PEM) the ticket servers' certificates must chain to (empty: the "
	    "system's trust store); read at each connection, so a new file applies without a "
	    "restart" },
	{ "db_tls_verify_host", U(db_tls_verify_host), "1", 0, 1,
	    "1: a server's certificate must name the IP address connected to (a "
	    "`subjectAltName` `IP:` entry); 0: only its chain is verified (needs "
	    "`db_tls_ca_file`; logins limited to `mysql_native_password` and "
	    "`client_ed25519`, which never send the password itself)" },
	{ "db_tls_cert_file", S(db_tls_cert_file), "", 0, 0,
	    "client certificate (PEM) for servers whose user is `REQUIRE X509`; with "
	    "`db_tls_key_file` (both or neither)" },
	{ "db_tls_key_file", S(db_tls_key_file), "", 0, 0,
	    "private key (PEM) of `db_tls_cert_file`" },
	{ "db_tls_min_version", S(db_tls_min_version), "TLSv1.2", 0, 0,
	    "oldest TLS version accepted from a ticket server: `TLSv1.2` or `TLSv1.3`" },
	{ "state_file", S(state_file), "/var/lib/idgen/idserver.state", 0, 0,
	    "local state file: ticket high-water marks and the Snowflake lease, fsync'd and "
	    "locked; empty turns it off; an existing directory or other non-regular file is "
	    "refused" },
	{ "connect_timeout_ms", U(connect_timeout_ms), "500", 10, 60000,
	    "bound on a connect + handshake to a ticket server" },
	{ "query_timeout_ms", U(query_timeout_ms), "1000", 10, 60000,
	    "bound on one query; a slower server is marked down" },
	{ "reprobe_min_ms", U(reprobe_min_ms), "100", 1, 600000,
	    "first retry delay for a down server, doubling per failure" },
	{ "reprobe_max_ms", U(reprobe_max_ms), "2000", 1, 600000,
	    "largest retry delay; at least `reprobe_min_ms`" },
	{ "recheck_ms", U(recheck_ms), "5000", 100, 3600000,
	    "how often a live ticket server's settings and high-water marks are checked again" },
	{ "refused_retry_ms", U(refused_retry_ms), "30000", 100, 3600000,
	    "retry delay for a refused ticket server (misconfigured, missing rights, "
	    "regressed counter)" },
	{ "partner_wait_ms", U(partner_wait_ms), "2000", 100, 60000,
	    "a new connection to a ticket server waits this long for its partner's check "
	    "before serving without it (the partner answered nothing since; design.md 6.4)" },
	{ "prefetch_blocks", U(prefetch_blocks), "2", 1, 16,
	    "keep at least this many blocks of `B` IDs buffered or in flight" },
	{ "prefetch_lead_ms", U(prefetch_lead_ms), "250", 0, 60000,
	    "... and enough for this long plus two ticket fetch times at the recent request "
	    "rate (a decaying peak, sampled every 100 ms)" },
	{ "prefetch_max_blocks", U(prefetch_max_blocks), "16", 1, 48,
	    "ceiling of that rate-driven target, at least `prefetch_blocks`: what a crash "
	    "can waste at most (a gap, never a duplicate)" },
	{ "refill_wait_ms", U(refill_wait_ms), "50", 0, 10000,
	    "longest a request finding no ticket IDs waits for a refill before the fallback "
	    "serves it" },
	{ "max_namespaces", U(max_namespaces), "100", 0, 512,
	    "namespaces (`idgenctl ns create`) served at once, and times the region's "
	    "servers at most 1024 (the state file's namespace marks); more in the catalogue "
	    "are not served (logged); 0: none" },
	{ "ns_idle_ms", U(ns_idle_ms), "300000", 1000, 86400000,
	    "a namespace with no request this long lets its buffered IDs go (a gap, never a "
	    "repeat)" },
	{ "block_size", U(block_size), "0", 0, UINT32_MAX,
	    "block size `B` (IDs per ticket) the servers' meta rows must hold; set it in every "
	    "deployment: a server whose `B` differs is refused; 0 accepts the pair's own "
	    "(which must still agree; with `region_bits` 5 it must be 1048576)" },
	{ "max_clients", U(max_clients), "10000", 1, 1000000,
	    "client connections served at once; at it, a new connection takes the slot of "
	    "the one least recently served (never served first with tokens on), which gets "
	    "`ERR UNAVAILABLE evicted: the server is at max_clients ...` and is closed "
	    "(`evicted_connections`; clients reconnect)" },
	{ "max_output_bytes", U(max_output_bytes), "1048576", 65536, 1073741824,
	    "replies buffered per client before its reading pauses" },
	{ "write_timeout_ms", U(write_timeout_ms), "30000", 100, 3600000,
	    "a client whose replies are not all taken for this long is dropped (counted from "
	    "the last time its output was fully drained: reading a trickle does not reset "
	    "it)" },
	{ "idle_timeout_ms", U(idle_timeout_ms), "600000", 0, 86400000,
	    "a client that sends no request for this long is closed (0: never)" },
	{ "partial_timeout_ms", U(partial_timeout_ms), "10000", 0, 3600000,
	    "a client that leaves a request unfinished this long, from its first byte, is "
	    "closed (0: never): slowloris" },
	{ "refusal_wait_ms", U(refusal_wait_ms), "100", 0, 10000,
	    "a refused client's first bytes are awaited this long, so a Redis client gets "
	    "the refusal as a RESP error (`-UNAVAILABLE too many connections ...`) and a text "
	    "client the `ERR` line" },
	{ "max_pending_refusals", U(max_pending_refusals), "256", 0, 100000,
	    "refused clients waited on at once; beyond, they get the text line at once" },
	{ "max_clients_per_ip", U(max_clients_per_ip), "5000", 1, 1000000,
	    "connections from one address (an IPv6 /64 counts as one) at once, so one peer "
	    "cannot take every slot; more get `ERR UNAVAILABLE too many connections from "
	    "your address (max_clients_per_ip)`" },
	{ "max_requests_per_event", U(max_requests_per_event), "256", 1, 1000000,
	    "requests handled per client before other clients get a turn" },
	{ "max_output_per_turn", U(max_output_per_turn), "262144", 4096, 1073741824,
	    "reply bytes formatted in one loop turn by all clients together; past it, a "
	    "client handles one request and yields" },
	{ "client_sndbuf_bytes", U(client_sndbuf_bytes), "131072", 0, 67108864,
	    "kernel send buffer of each text/RESP client (`SO_SNDBUF`; 0: the kernel's "
	    "autotuning, several MB on loopback): bounds what a client that never reads "
	    "makes idserver format; 0 for clients far away that pipeline large replies" },
	{ "resp_max_args", U(resp_max_args), "32", 1, 64,
	    "Redis protocol: most arguments in one request (more is a protocol error and a "
	    "close)" },
	{ "resp_max_bulk_bytes", U(resp_max_bulk_bytes), "1024", 1, 2048,
	    "Redis protocol: longest argument in bytes (longer is a protocol error and a "
	    "close)" },
	{ "resp_multi_max_commands", U(resp_multi_max_commands), "10000", 1, 1000000,
	    "Redis protocol: commands queued in one `MULTI`; one more is refused (`-ERR too "
	    "many commands in this MULTI (resp_multi_max_commands)`) and the `EXEC` answers "
	    "`-EXECABORT`" },
	{ "resp_multi_max_bytes", U(resp_multi_max_bytes), "1048576", 4096, 1073741824,
	    "Redis protocol: bytes of the requests queued in one `MULTI` (kept as they came "
	    "until `EXEC`); past it, the same as above with `(resp_multi_max_bytes)`" },
	{ "trim_interval_ms", U(trim_interval_ms), "1000", 0, 3600000,
	    "how often idserver looks at the memory it freed, to give it back to the system "
	    "after a flood of connections (0: never)" },
	{ "trim_free_bytes", U(trim_free_bytes), "4194304", 65536, 1073741824,
	    "freed heap bytes, grown since the last time, that make it give them back "
	    "(`STAT memory_trims`); also the most `free()` keeps at the heap's top between "
	    "trims" },
	{ "drain_timeout_ms", U(drain_timeout_ms), "5000", 0, 600000,
	    "on SIGTERM, how long clients get to collect their replies" },
	{ "log_level", S(log_level), "info", 0, 0,
	    "lowest level of the log lines written to stderr: `debug`, `info`, `warn` or "
	    "`error`" },
	{ "log_format", S(log_format), "text", 0, 0,
	    "`text` (`2026-12-01T05:00:00.123Z info message`) or `json`: one object a line, "
	    "`{\"time\":\"2026-12-01T05:00:00.123Z\",\"level\":\"info\",\"message\":\"...\"}`, "
	    "for log shippers" },
	{ "lease_window_ms", U(lease_window_ms), "300000", 1000, 86400000,
	    "Snowflake lease window: an outage this long is served without a database" },
	{ "lease_extend_ms", U(lease_extend_ms), "5000", 100, 3600000,
	    "how often the lease window is pushed forward while the tier is up; at most half "
	    "of `lease_window_ms`" },
	{ "max_clock_skew_ms", U(max_clock_skew_ms), "1000", 0, 3600000,
	    "refuse a lease claim, extend or re-adoption when the local clock is this far "
	    "from the database's; a refused extend leaves `window_end` where it is "
	    "(`lease_extend_skew_refusals`) and the window runs on to its end" },
	{ "backstep_tolerance_ms", U(backstep_tolerance_ms), "50", 0, 60000,
	    "a backward clock step up to this is absorbed; larger needs a new lease" },
	{ "clock_wait_ms", U(clock_wait_ms), "1000", 100, 3600000,
	    "longest a request waits for the clock: a lease window resumed after a restart "
	    "may start ahead of a clock set back (within this it is served, beyond it `ERR "
	    "CLOCK` at once, and `STATS mode_reason` and `/health` say why); a clock that "
	    "stops ends the waits on it after this long" },
	{ "fallback_reserve_ms", U(fallback_reserve_ms), "100", 1, 60000,
	    "Snowflake ID time reserved in the state file per write (one fsync per "
	    "stretch), written off the event loop while minting is within twice this of "
	    "the reservation (or of the lead measured: `fallback_reserve_lead_max_ms`); below "
	    "`lease_window_ms`" },
	{ "fallback_reserve_lead_max_ms", U(fallback_reserve_lead_max_ms), "400", 0, 60000,
	    "longest lead a reservation is written ahead with: twice the longest of the last "
	    "256 reservation writes (post to return, `STAT lease_reserve_lead_ms`), when "
	    "that is above twice `fallback_reserve_ms`; 0 keeps the fixed lead. A restart "
	    "after a crash may resume up to this plus `fallback_reserve_ms` ahead of the "
	    "clock: keep the sum well below `clock_wait_ms`, which also absorbs a clock set "
	    "back across the restart (docs/design.md 6.7)" },
};

/* The headings the settings are grouped under in the man page, docs and sample. */
static const struct config_group config_groups[] = {
	{ "listen_host", "Text and Redis protocol", NULL },
	{ "http_host", "HTTP API", NULL },
	{ "grpc_host", "gRPC", NULL },
	{ "listen_tls", "TLS on the listeners",
	    "A port with TLS on speaks TLS only; every setting below is off or empty by "
	    "default. Connections over TLS count against the same limits as cleartext ones "
	    "(`max_clients`, `max_clients_per_ip`, `grpc_max_connections`, "
	    "`grpc_max_connections_per_ip`), at accept, before their handshake. SIGHUP loads "
	    "the certificate and key files again. Any `*_file` setting but `state_file` may "
	    "begin with `%d/`: a file of `$CREDENTIALS_DIRECTORY`, where systemd's "
	    "`LoadCredential=` puts the unit's secrets (the shipped unit loads `tls_key` and "
	    "`auth_tokens`): `tls_key_file = %d/tls_key`." },
	{ "auth_tokens_file", "Authentication",
	    "Tokens are off while `auth_tokens_file` is empty. Each line of that file is "
	    "`token`, `name:token` or `name:token:flags`; `#` starts a comment. A token is "
	    "16..256 printable characters without spaces or `:`; a name is letters, digits, "
	    "`.`, `_`, `-`. The flag `ro` allows STATS, INFO, DECODE, B58, PING, `/stats`, "
	    "`/metrics` and `/health` but no IDs; `ns=NAME` (once per namespace, at most 16; "
	    "`ns=default` is the default sequence) limits a token's IDs to those namespaces "
	    "(e.g. `name:token:rw,ns=orders,ns=users`). Only SHA-256 hashes of the tokens are "
	    "kept, in memory left out of core dumps. A file that does not parse refuses the "
	    "start (exit 2). Clients send `AUTH token` (text protocol and RESP, where `AUTH "
	    "name token` and `HELLO 3 AUTH name token` work too), `Authorization: Bearer "
	    "token` or HTTP Basic credentials with the token as the password (`curl -u "
	    "default:token`), or the same gRPC metadata (docs/protocols.md, "
	    "\"Authentication\")." },
	{ "odd_host", "Ticket servers",
	    "Ticket servers are IP addresses: host names would block the event loop, and "
	    "`localhost` would make the MariaDB client use its unix socket. The tier's shape "
	    "(`tier_increment`, `region`, `region_bits`) must match every server's "
	    "`idgen_meta`; the classic pair is 2, 0, 0." },
	{ "db_tls", "TLS to the ticket servers",
	    "Hosts are IP addresses, so a verified certificate carries `subjectAltName` "
	    "`IP:...` (docs/operations.md, \"TLS to the ticket servers\")." },
	{ "state_file", "State file", NULL },
	{ "connect_timeout_ms", "Waiting for ticket servers", NULL },
	{ "prefetch_blocks", "Prefetch", NULL },
	{ "max_clients", "Client limits", NULL },
	{ "trim_interval_ms", "Memory", NULL },
	{ "drain_timeout_ms", "Shutdown", NULL },
	{ "log_level", "Logs", NULL },
	{ "lease_window_ms", "Snowflake fallback lease", NULL },
};

#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))
#define CONFIG_NGROUPS (sizeof(config_groups) / sizeof(config_groups[0]))

/* What config_doc.c prints. */
static const struct config_table config_table = {
	config_keys, CONFIG_NKEYS, config_groups, CONFIG_NGROUPS,
};

struct config_ctx {
	struct config	*cfg;
	char		*err;
	size_t		 errlen;
};

static const struct config_key *config_find(const char *name);
static bool	config_set(struct config *cfg, const char *name, const char *value,
		    char *err, size_t errlen);
static int	config_ini_cb(void *user, const char *section, const char *name,
		    const char *value);
static bool	config_check_host(const char *key, const char *value, const char *why,
		    char *err, size_t errlen);
static bool	config_check(const struct config *cfg, char *err, size_t errlen);
static bool	config_parse_others(struct config *cfg, char *err, size_t errlen);
static bool	config_parse_extras(struct config *cfg, char *err, size_t errlen);
static bool	config_check_file(const char *key, const char *path, char *err,
		    size_t errlen);
static bool	config_check_tls(const struct config *cfg, char *err, size_t errlen);
static bool	config_check_listen_tls(const struct config *cfg, char *err, size_t errlen);
static bool	config_check_word(const char *key, const char *value, const char *words,
		    char *err, size_t errlen);
static bool	config_read_password(struct config *cfg, char *err, size_t errlen);
static bool	config_credentials(struct config *cfg, char *err, size_t errlen);
static void	config_usage(const char *prog);
static bool	config_first_pass(struct config *cfg, int argc, char **argv, const char **file,
		    bool *exit_now, char *err, size_t errlen);
static bool	config_flags(struct config *cfg, int argc, char **argv, char *err, size_t errlen);
static const char *config_str(const char *s);

/* Finds a key by name; dashes count as underscores so flags read naturally. */
static const struct config_key *
config_find(const char *name)
{
	char norm[64];
	size_t i;

	for (i = 0; name[i] != '\0' && i < sizeof(norm) - 1; i++)
		norm[i] = name[i] == '-' ? '_' : name[i];
	norm[i] = '\0';
	for (i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].name, norm) == 0)
			return &config_keys[i];
	return NULL;
}

/* Parses and stores one value, checking its type and bounds. */
static bool
config_set(struct config *cfg, const char *name, const char *value, char *err,
    size_t errlen)
{
	const struct config_key *k = config_find(name);
	char *end, **sp;
	unsigned long v;

	if (k == NULL)
		return check_fail(err, errlen, "unknown setting '%s' (see --help)", name);
	if (k->type == CONFIG_STR) {
		sp = (char **)(void *)((char *)cfg + k->offset);
		free(*sp);
		*sp = strdup(value);
		return *sp != NULL;
	}
	errno = 0;
	v = strtoul(value, &end, 10);
	if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno != 0 ||
	    v < k->min || v > k->max)
		return check_fail(err, errlen, "%s: '%s' is not a whole number in %u..%u",
		    k->name, value, k->min, k->max);
	*(unsigned *)(void *)((char *)cfg + k->offset) = (unsigned)v;
	return true;
}

/* inih handler: every key of every section is a setting. */
static int
config_ini_cb(void *user, const char *section, const char *name, const char *value)
{
	struct config_ctx *ctx = user;

	(void)section;
	return config_set(ctx->cfg, name, value, ctx->err, ctx->errlen) ? 1 : 0;
}

/* Refuses a host setting that is not a numeric IPv4 or IPv6 address. */
static bool
config_check_host(const char *key, const char *value, const char *why, char *err,
    size_t errlen)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, value, &a4) == 1 || inet_pton(AF_INET6, value, &a6) == 1)
		return true;
	return check_fail(err, errlen, "%s: '%s' is not an IP address (%s)", key, value, why);
}

/* A file setting, when set, names a regular file this process can read. */
static bool
config_check_file(const char *key, const char *path, char *err, size_t errlen)
{
	struct stat st;
	FILE *f;

	if (path[0] == '\0')
		return true;
	/* The type first: opening a FIFO would wait for a writer. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return check_fail(err, errlen, "%s: '%s' is not a regular file", key, path);
	if ((f = fopen(path, "r")) == NULL)
		return check_fail(err, errlen, "%s: cannot read '%s': %s", key, path,
		    strerror(errno));
	fclose(f);
	return true;
}

/*
 * The db_tls_* settings: known words, files that can be read, a key with its
 * certificate, and no TLS file given while TLS is off (which would look like
 * protection and be cleartext).
 */
static bool
config_check_tls(const struct config *cfg, char *err, size_t errlen)
{
	bool on = strcmp(cfg->db_tls, "required") == 0;

	if (!on && strcmp(cfg->db_tls, "off") != 0)
		return check_fail(err, errlen, "db_tls: '%s' is not off or required",
		    cfg->db_tls);
	if (strcmp(cfg->db_tls_min_version, "TLSv1.2") != 0 &&
	    strcmp(cfg->db_tls_min_version, "TLSv1.3") != 0)
		return check_fail(err, errlen, "db_tls_min_version: '%s' "
		    "is not TLSv1.2 or TLSv1.3", cfg->db_tls_min_version);
	if (!on && (cfg->db_tls_ca_file[0] || cfg->db_tls_cert_file[0] ||
	    cfg->db_tls_key_file[0]))
		return check_fail(err, errlen, "db_tls is off but a db_tls_*_file is set: the "
		    "ticket servers would be reached in cleartext (set db_tls = required)");
	if ((cfg->db_tls_cert_file[0] == '\0') != (cfg->db_tls_key_file[0] == '\0'))
		return check_fail(err, errlen, "db_tls_cert_file and db_tls_key_file go "
		    "together: set both or neither");
	if (on && !cfg->db_tls_verify_host && cfg->db_tls_ca_file[0] == '\0')
		return check_fail(err, errlen, "db_tls_verify_host = 0 needs "
		    "db_tls_ca_file: a chain to your own CA is then all that is checked, "
		    "not to any public one");
	return config_check_file("db_tls_ca_file", cfg->db_tls_ca_file, err, errlen) &&
	    config_check_file("db_tls_cert_file", cfg->db_tls_cert_file, err, errlen) &&
	    config_check_file("db_tls_key_file", cfg->db_tls_key_file, err, errlen);
}

/* One of words (separated by '|') or a one-line error naming the key. */
static bool
config_check_word(const char *key, const char *value, const char *words, char *err,
    size_t errlen)
{
	size_t n = strlen(value);

	for (const char *w = words; *w != '\0'; w += strcspn(w, "|"), w += *w == '|') {
		if (n > 0 && strncmp(w, value, n) == 0 && (w[n] == '|' || w[n] == '\0'))
			return true;
	}
	return check_fail(err, errlen, "%s: '%s' is not one of %s", key, value, words);
}

/*
 * The listeners' TLS (docs/design.md section 7.1): known words, a certificate
 * and key for every listener with TLS on, pairs set together, readable files,
 * and no TLS file while every listener is cleartext (which would look like
 * protection and be cleartext).
 */
static bool
config_check_listen_tls(const struct config *cfg, char *err, size_t errlen)
{
	const char *names[] = { "listen", "http", "grpc" };
	const char *on[] = { cfg->listen_tls, cfg->http_tls, cfg->grpc_tls };
	const char *cert[] = { cfg->listen_tls_cert_file, cfg->http_tls_cert_file,
	    cfg->grpc_tls_cert_file };
	const char *key[] = { cfg->listen_tls_key_file, cfg->http_tls_key_file,
	    cfg->grpc_tls_key_file };
	bool any = false, verify = strcmp(cfg->tls_verify_client, "off") != 0;

	if (!config_check_word("tls_verify_client", cfg->tls_verify_client,
	    "off|optional|required", err, errlen) ||
	    !config_check_word("tls_min_version", cfg->tls_min_version, "TLSv1.2|TLSv1.3", err,
	    errlen) ||
	    !config_check_file("tls_cert_file", cfg->tls_cert_file, err, errlen) ||
	    !config_check_file("tls_key_file", cfg->tls_key_file, err, errlen) ||
	    !config_check_file("tls_ca_file", cfg->tls_ca_file, err, errlen))
		return false;
	if ((cfg->tls_cert_file[0] == '\0') != (cfg->tls_key_file[0] == '\0'))
		return check_fail(err, errlen, "tls_cert_file and tls_key_file go together: "
		    "set both or neither");
	for (int i = 0; i < 3; i++) {
		char k[40];

		snprintf(k, sizeof(k), "%s_tls", names[i]);
		if (!config_check_word(k, on[i], "off|on", err, errlen))
			return false;
		snprintf(k, sizeof(k), "%s_tls_cert_file", names[i]);
		if (!config_check_file(k, cert[i], err, errlen))
			return false;
		snprintf(k, sizeof(k), "%s_tls_key_file", names[i]);
		if (!config_check_file(k, key[i], err, errlen))
			return false;
		if ((cert[i][0] == '\0') != (key[i][0] == '\0'))
			return check_fail(err, errlen, "%s_tls_cert_file and %s_tls_key_file "
			    "go together: set both or neither", names[i], names[i]);
		if (strcmp(on[i], "on") != 0) {
			if (cert[i][0] != '\0')
				return check_fail(err, errlen, "%s_tls is off but "
				    "%s_tls_cert_file is set: that port would be cleartext "
				    "(set %s_tls = on)", names[i], names[i], names[i]);
			continue;
		}
		any = true;
		if (cert[i][0] == '\0' && cfg->tls_cert_file[0] == '\0')
			return check_fail(err, errlen, "%s_tls = on needs a certificate and "
			    "key: tls_cert_file and tls_key_file (or %s_tls_cert_file and "
			    "%s_tls_key_file)", names[i], names[i], names[i]);
	}
	if (!any && (cfg->tls_cert_file[0] != '\0' || cfg->tls_ca_file[0] != '\0' || verify))
		return check_fail(err, errlen, "TLS settings are given but every listener is "
		    "cleartext (set listen_tls, http_tls or grpc_tls = on)");
	if (verify != (cfg->tls_ca_file[0] != '\0'))
		return check_fail(err, errlen, verify ? "tls_verify_client = %s needs "
		    "tls_ca_file (the CA client certificates chain to)" : "tls_ca_file is set "
		    "but tls_verify_client is %s: client certificates would not be asked for",
		    cfg->tls_verify_client);
	return true;
}

/* Checks what a single key's bounds cannot: addresses, files, relations. */
static bool
config_check(const struct config *cfg, char *err, size_t errlen)
{
	static const char ticket_why[] = "host names block the event loop and "
	    "'localhost' makes the MariaDB client use a unix socket, ignoring the port";
	struct stat st;

	if (!config_check_host("listen_host", cfg->listen_host,
	    "the text protocol binds one numeric address, v4 or v6", err, errlen) ||
	    !config_check_host("grpc_host", cfg->grpc_host,
	    "the gRPC service binds one numeric address, v4 or v6", err, errlen) ||
	    !config_check_host("http_host", cfg->http_host,
	    "the HTTP endpoints bind one numeric address, v4 or v6", err, errlen) ||
	    !config_check_host("odd_host", cfg->odd_host, ticket_why, err, errlen) ||
	    !config_check_host("even_host", cfg->even_host, ticket_why, err, errlen))
		return false;
	if (cfg->region >= (1u << cfg->region_bits))
		return check_fail(err, errlen, "region %u does not fit in region_bits %u (at "
		    "most %u)", cfg->region, cfg->region_bits, (1u << cfg->region_bits) - 1);
	/* docs/design.md section 12.3: one layout for every region of a tier. */
	if (!check_region_layout(cfg->region_bits, cfg->block_size, false, err, errlen))
		return false;
	if (2 * cfg->region + 2 > cfg->tier_increment)
		return check_fail(err, errlen, "region %u's pair has offsets %u and %u: "
		    "tier_increment (%u) must be at least %u", cfg->region, 2 * cfg->region + 1,
		    2 * cfg->region + 2, cfg->tier_increment, 2 * cfg->region + 2);
	if (cfg->db_user[0] == '\0')
		return check_fail(err, errlen, "db_user is empty (the MariaDB client would "
		    "connect as the OS user)");
	if (!config_check_tls(cfg, err, errlen) || !config_check_listen_tls(cfg, err, errlen) ||
	    !config_check_word("log_level", cfg->log_level, "debug|info|warn|error", err,
	    errlen) ||
	    !config_check_word("log_format", cfg->log_format, "text|json", err, errlen) ||
	    !config_check_word("auth_mode", cfg->auth_mode, "required|optional", err, errlen))
		return false;
	if (strcmp(cfg->auth_mode, "optional") == 0 && cfg->auth_tokens_file[0] == '\0')
		return check_fail(err, errlen, "auth_mode = optional needs auth_tokens_file "
		    "(without tokens nothing is checked)");
	if (cfg->reprobe_max_ms < cfg->reprobe_min_ms)
		return check_fail(err, errlen, "reprobe_max_ms (%u) is below "
		    "reprobe_min_ms (%u)", cfg->reprobe_max_ms, cfg->reprobe_min_ms);
	if (cfg->prefetch_max_blocks < cfg->prefetch_blocks)
		return check_fail(err, errlen, "prefetch_max_blocks (%u) is below "
		    "prefetch_blocks (%u)", cfg->prefetch_max_blocks, cfg->prefetch_blocks);
	if (cfg->lease_extend_ms * 2 > cfg->lease_window_ms)
		return check_fail(err, errlen, "lease_extend_ms (%u) must be at most half of "
		    "lease_window_ms (%u)", cfg->lease_extend_ms, cfg->lease_window_ms);
	if (cfg->fallback_reserve_ms >= cfg->lease_window_ms)
		return check_fail(err, errlen, "fallback_reserve_ms (%u) must be below "
		    "lease_window_ms (%u)", cfg->fallback_reserve_ms, cfg->lease_window_ms);
	/* A missing file (or directory) is fine: the service creates the file. */
	if (cfg->state_file[0] != '\0' && stat(cfg->state_file, &st) == 0 &&
	    !S_ISREG(st.st_mode))
		return check_fail(err, errlen, "state_file: '%s' is not a regular file",
		    cfg->state_file);
	return true;
}

bool
config_parse_addr(const char **p, char *host, size_t hostlen, unsigned *port)
{
	const char *s = *p, *h = s, *he, *colon;
	char *end;
	unsigned long v;

	if (*s == '[') {
		h = s + 1;
		he = strchr(h, ']');
		if (he == NULL || he[1] != ':')
			return false;
		colon = he + 1;
	} else {
		colon = s + strcspn(s, ":, \t;");
		if (*colon != ':')
			return false;
		he = colon;
	}
	if (he == h || (size_t)(he - h) >= hostlen)
		return false;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || errno != 0 || v < 1 || v > 65535)
		return false;
	*port = (unsigned)v;
	*p = end;
	return true;
}

/*
 * Parses more_servers: "OFFSET=IP:PORT" entries separated by spaces, tabs or
 * semicolons; stored in offset order (server.h's indexes).
 */
static bool
config_parse_extras(struct config *cfg, char *err, size_t errlen)
{
	struct config_server got[SERVER_EXTRA_MAX];
	unsigned offsets[SERVER_EXTRA_MAX], n = 0;
	const char *p = cfg->more_servers;
	char *end;

	for (;;) {
		unsigned long o;

		p += strspn(p, " \t;");
		if (*p == '\0')
			break;
		if (n == SERVER_EXTRA_MAX)
			return check_fail(err, errlen, "more_servers: more than %d servers",
			    SERVER_EXTRA_MAX);
		errno = 0;
		o = strtoul(p, &end, 10);
		if (end == p || *end != '=' || errno != 0 || o > SERVER_INCREMENT_MAX)
			return check_fail(err, errlen, "more_servers: cannot read '%.40s' "
			    "(OFFSET=IP:PORT entries separated by spaces)", p);
		p = end + 1;
		got[n].offset = offsets[n] = (unsigned)o;
		if (!config_parse_addr(&p, got[n].host, sizeof(got[n].host), &got[n].port) ||
		    (*p != '\0' && strchr(" \t;", *p) == NULL))
			return check_fail(err, errlen, "more_servers: cannot read the address "
			    "of offset %lu (OFFSET=IP:PORT, IPv6 in brackets)", o);
		if (!config_check_host("more_servers", got[n].host, "ticket servers are reached "
		    "by numeric address only", err, errlen))
			return false;
		n++;
	}
	if (n > 0 && cfg->region_bits > 0)
		return check_fail(err, errlen, "more_servers: servers beyond the pair need a "
		    "tier of one region (region_bits 0): with regions, a ticket's region is "
		    "read from its offset");
	if (!server_extras_set(offsets, n))
		return check_fail(err, errlen, "more_servers: every offset must be listed "
		    "once, above the pair (at least %u) and at most tier_increment %u",
		    server_extra_min(), cfg->tier_increment);
	/* In server.h's order: by offset. */
	for (unsigned k = 0; k < n; k++)
		for (unsigned j = 0; j < n; j++)
			if (got[j].offset == server_offset(SERVER_PAIR + k))
				cfg->extra[k] = got[j];
	cfg->extras = n;
	return true;
}

/*
 * Parses other_regions: "REGION=ODD_IP:PORT,EVEN_IP:PORT" entries separated
 * by spaces, tabs or semicolons, each checked like odd_host/even_host and by
 * the tier's shape (server_others_set).
 */
static bool
config_parse_others(struct config *cfg, char *err, size_t errlen)
{
	static const char form[] = "REGION=ODD_IP:PORT,EVEN_IP:PORT entries separated by "
	    "spaces";
	unsigned regions[SERVER_OTHER_MAX];
	const char *p = cfg->other_regions, *entry = p;
	char *end;

	for (cfg->others = 0;;) {
		struct config_region *o = &cfg->other[cfg->others];
		unsigned long r;

		p += strspn(p, " \t;");
		if (*p == '\0')
			break;
		/* Named on error: p itself may have stepped past the string's end. */
		entry = p;
		if (cfg->others == SERVER_OTHER_MAX)
			return check_fail(err, errlen, "other_regions: more than %d regions",
			    SERVER_OTHER_MAX);
		errno = 0;
		r = strtoul(p, &end, 10);
		if (end == p || *end != '=' || errno != 0 || r > 31)
			goto bad;
		p = end + 1;
		o->region = (unsigned)r;
		if (!config_parse_addr(&p, o->host[0], sizeof(o->host[0]), &o->port[0]) ||
		    *p++ != ',' ||
		    !config_parse_addr(&p, o->host[1], sizeof(o->host[1]), &o->port[1]) ||
		    (*p != '\0' && strchr(" \t;", *p) == NULL))
			goto bad;
		for (unsigned k = 0; k < SERVER_PAIR; k++)
			if (!config_check_host("other_regions", o->host[k], "ticket servers are "
			    "reached by numeric address only", err, errlen))
				return false;
		regions[cfg->others++] = o->region;
	}
	if (!server_others_set(regions, cfg->others))
		return check_fail(err, errlen, "other_regions: every region must be another "
		    "than region %u, listed once, below 2^region_bits (%u regions) and with "
		    "its pair inside tier_increment %u (offsets 2R+1, 2R+2)", cfg->region,
		    1u << cfg->region_bits, cfg->tier_increment);
	return true;
bad:
	return check_fail(err, errlen, "other_regions: cannot read '%.40s' (%s)", entry, form);
}

/*
 * Loads the password from IDGEN_DB_PASSWORD or db_password_file (which wins,
 * even when empty), a regular file: a directory or FIFO is refused, not read
 * (config_check_file).
 */
static bool
config_read_password(struct config *cfg, char *err, size_t errlen)
{
	const char *env = getenv("IDGEN_DB_PASSWORD");
	char line[512] = "";	/* an empty file: fgets leaves it so */
	FILE *f;

	free(cfg->db_password);
	cfg->db_password = NULL;
	if (cfg->db_password_file[0] == '\0') {
		cfg->db_password = strdup(env != NULL ? env : "");
		return cfg->db_password != NULL;
	}
	if (!config_check_file("db_password_file", cfg->db_password_file, err, errlen))
		return false;
	f = fopen(cfg->db_password_file, "r");
	if (f == NULL || (fgets(line, sizeof(line), f) == NULL && ferror(f))) {
		int e = errno;

		if (f != NULL)
			fclose(f);
		return check_fail(err, errlen, "db_password_file: cannot read '%s': %s",
		    cfg->db_password_file, strerror(e));
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	cfg->db_password = strdup(line);
	return cfg->db_password != NULL;
}

/* Prints usage and every setting with its default. */
static void
config_usage(const char *prog)
{
	struct config cfg;

	printf("usage: %s [--config FILE] [--SETTING VALUE | --SETTING=VALUE ...]\n\n"
	    "idserver hands out unique 64-bit IDs: dense blocks from an odd/even pair of\n"
	    "MariaDB ticket servers, and a leased Snowflake generator when both are down.\n"
	    "Settings come from the INI file (key = value), then from flags, which win.\n"
	    "The database password comes from env IDGEN_DB_PASSWORD or db_password_file,\n"
	    "never from a flag. A *_file value beginning with %%d/ is a file of\n"
	    "$CREDENTIALS_DIRECTORY (systemd's LoadCredential=).\n"
	    "SIGTERM/SIGINT drain and exit, releasing the lease;\n"
	    "SIGHUP reloads the TLS certificates of the listeners and auth_tokens_file.\n\n"
	    "  --config FILE                     INI file of the settings below\n"
	    "  --check-config                    load the settings and every file a start or\n"
	    "                                    a reload reads, print ok (exit 0) or the\n"
	    "                                    first problem (exit 1); start nothing\n"
	    "  --dump-settings FORMAT            print the settings as given (file, flags)\n"
	    "                                    as FORMAT: conf (an INI file), man, md or\n"
	    "                                    help; start nothing\n"
	    "  --help                            this text\n"
	    "  --version                         print the name and version, exit 0\n", prog);
	memset(&cfg, 0, sizeof(cfg));
	(void)config_doc_print(&cfg, &config_table, "help", stdout);
}

/*
 * The flags read before the file: --help and --version (*exit_now, printed
 * here), --config FILE and --check-config.
 */
static bool
config_first_pass(struct config *cfg, int argc, char **argv, const char **file,
    bool *exit_now, char *err, size_t errlen)
{
	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--check-config") == 0) {
			cfg->check_only = true;
			continue;
		}
		if (strcmp(argv[a], "--dump-settings") == 0) {
			if (a + 1 >= argc)
				return check_fail(err, errlen, "--dump-settings needs a "
				    "format (man, md, conf or help)");
			cfg->dump_format = argv[++a];
			continue;
		}
		if (strncmp(argv[a], "--dump-settings=", 16) == 0) {
			cfg->dump_format = argv[a] + 16;
			continue;
		}
		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
			*exit_now = true;
			config_usage(argv[0]);
			return true;
		}
		if (strcmp(argv[a], "--version") == 0 || strcmp(argv[a], "-V") == 0) {
			*exit_now = true;
			printf("idserver %s\n", IDGEN_VERSION);
			return true;
		}
		if (strcmp(argv[a], "--config") == 0 || strcmp(argv[a], "-c") == 0) {
			if (a + 1 >= argc)
				return check_fail(err, errlen, "%s needs a file name", argv[a]);
			*file = argv[++a];
		} else if (strncmp(argv[a], "--config=", 9) == 0)
			*file = argv[a] + 9;
	}
	return true;
}

/* The settings given as flags (--NAME VALUE, --NAME=VALUE), over the file's. */
static bool
config_flags(struct config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	for (int a = 1; a < argc; a++) {
		char name[64];
		const char *arg = argv[a], *eq, *value;

		if (strcmp(arg, "--config") == 0 || strcmp(arg, "-c") == 0 ||
		    strcmp(arg, "--dump-settings") == 0) {
			a++;
			continue;
		}
		if (strncmp(arg, "--config=", 9) == 0 || strcmp(arg, "--check-config") == 0 ||
		    strncmp(arg, "--dump-settings=", 16) == 0)
			continue;
		if (strncmp(arg, "--", 2) != 0)
			return check_fail(err, errlen, "unexpected argument '%s' (see --help)",
			    arg);
		arg += 2;
		eq = strchr(arg, '=');
		if (eq != NULL) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
			value = eq + 1;
		} else {
			snprintf(name, sizeof(name), "%s", arg);
			if (config_find(name) == NULL)
				return check_fail(err, errlen, "unknown option '--%s' "
				    "(see --help)", name);
			if (a + 1 >= argc)
				return check_fail(err, errlen, "option '--%s' needs a value",
				    name);
			value = argv[++a];
		}
		if (!config_set(cfg, name, value, err, errlen))
			return false;
	}
	return true;
}

/*
 * A file setting (a key ending in _file, but not state_file) whose value
 * begins with "%d/" names a systemd credential: the rest of the path is taken
 * in $CREDENTIALS_DIRECTORY, as %d means in a unit's ExecStart=, so the
 * config file can name what LoadCredential= hands over.
 */
static bool
config_credentials(struct config *cfg, char *err, size_t errlen)
{
	const char	*dir = getenv("CREDENTIALS_DIRECTORY");
	char		**sp, *v;
	size_t		 i, n;

	for (i = 0; i < CONFIG_NKEYS; i++) {
		n = strlen(config_keys[i].name);
		if (config_keys[i].type != CONFIG_STR || n < 5 ||
		    strcmp(config_keys[i].name + n - 5, "_file") != 0 ||
		    strcmp(config_keys[i].name, "state_file") == 0)
			continue;
		sp = (char **)(void *)((char *)cfg + config_keys[i].offset);
		if (strncmp(*sp, "%d/", 3) != 0)
			continue;
		if (dir == NULL || dir[0] != '/')
			return check_fail(err, errlen, "%s: '%s' names a systemd credential, "
			    "but $CREDENTIALS_DIRECTORY is not set (LoadCredential= in the "
			    "unit sets it; outside systemd give the file's path)",
			    config_keys[i].name, *sp);
		if (asprintf(&v, "%s/%s", dir, *sp + 3) < 0)
			return check_fail(err, errlen, "out of memory");
		free(*sp);
		*sp = v;
	}
	return true;
}

bool
config_load(struct config *cfg, int argc, char **argv, bool *exit_now, char *err,
    size_t errlen)
{
	struct config_ctx ctx = { cfg, err, errlen };
	const char *file = NULL;
	size_t i;
	int line;

	memset(cfg, 0, sizeof(*cfg));
	*exit_now = false;
	for (i = 0; i < CONFIG_NKEYS; i++)
		if (!config_set(cfg, config_keys[i].name, config_keys[i].def, err, errlen))
			return false;
	if (!config_first_pass(cfg, argc, argv, &file, exit_now, err, errlen))
		return false;
	if (*exit_now)
		return true;
	if (file != NULL) {
		line = ini_parse(file, config_ini_cb, &ctx);
		if (line < 0)
			return check_fail(err, errlen, "cannot read config file '%s': %s", file,
			    strerror(errno));
		if (line > 0) {
			char why[256];

			snprintf(why, sizeof(why), "%s", err[0] ? err : "syntax error");
			return check_fail(err, errlen, "%s:%d: %s", file, line, why);
		}
	}
	if (!config_flags(cfg, argc, argv, err, errlen))
		return false;
	/* The values as given, before the checks: a sample may name files to come. */
	if (cfg->dump_format != NULL) {
		*exit_now = true;
		if (!config_doc_print(cfg, &config_table, cfg->dump_format, stdout))
			return check_fail(err, errlen, "--dump-settings: unknown format '%s' "
			    "(man, md, conf or help)", cfg->dump_format);
		return true;
	}
	if (!config_credentials(cfg, err, errlen) || !config_check(cfg, err, errlen))
		return false;
	/* The tier's shape every check and lease claim follows (checked above). */
	if (!server_shape_set(cfg->tier_increment, cfg->region, cfg->region_bits))
		return check_fail(err, errlen, "tier_increment, region and "
		    "region_bits do not fit together");
	if (!config_parse_extras(cfg, err, errlen) || !config_parse_others(cfg, err, errlen))
		return false;
	/* Every served namespace may hold a mark per server in the state file (13.6). */
	if ((uint64_t)cfg->max_namespaces * (SERVER_PAIR + cfg->extras) > NS_MARKS_MAX)
		return check_fail(err, errlen, "max_namespaces (%u) x the region's %u servers "
		    "is above the state file's %u namespace marks", cfg->max_namespaces,
		    SERVER_PAIR + cfg->extras, NS_MARKS_MAX);
	return config_read_password(cfg, err, errlen);
}

void
config_server_addr(const struct config *cfg, unsigned server, const char **host,
    unsigned *port)
{
	if (server >= SERVER_PAIR && server_is_own(server)) {
		*host = cfg->extra[server - SERVER_PAIR].host;
		*port = cfg->extra[server - SERVER_PAIR].port;
		return;
	}
	if (server >= SERVER_PAIR) {
		unsigned k = server - server_own_count();
		const struct config_region *o = &cfg->other[k / SERVER_PAIR];

		*host = o->host[k % SERVER_PAIR];
		*port = o->port[k % SERVER_PAIR];
		return;
	}
	*host = server == 0 ? cfg->odd_host : cfg->even_host;
	*port = server == 0 ? cfg->odd_port : cfg->even_port;
}

/* A config built by hand (the unit tests) may leave a string NULL: "". */
static const char *
config_str(const char *s)
{
	return s != NULL ? s : "";
}

void
config_dbtls(struct dbtls *t, const struct config *cfg)
{
	memset(t, 0, sizeof(*t));
	t->required = strcmp(config_str(cfg->db_tls), "required") == 0;
	t->verify_host = cfg->db_tls_verify_host != 0;
	t->ca_file = config_str(cfg->db_tls_ca_file);
	t->cert_file = config_str(cfg->db_tls_cert_file);
	t->key_file = config_str(cfg->db_tls_key_file);
	t->min_version = config_str(cfg->db_tls_min_version);
	t->handshake_ms = cfg->connect_timeout_ms;
}

/*
 * The connection settings of ticket server index (server.h): the caller builds
 * them here and hands them to db_new, so neither db.c nor dbtls.c reads the
 * config.
 */
void
config_db_params(struct db_params *p, const struct config *cfg, unsigned server,
    unsigned flags, const struct db_ops *ops)
{
	memset(p, 0, sizeof(*p));
	config_server_addr(cfg, server, &p->host, &p->port);
	p->user = cfg->db_user;
	p->password = cfg->db_password;
	p->database = cfg->db_name;
	p->connect_timeout_ms = cfg->connect_timeout_ms;
	p->query_timeout_ms = cfg->query_timeout_ms;
	p->flags = flags;
	config_dbtls(&p->tls, cfg);
	p->ops = ops;
}

/* Frees the strings a config owns. */
void
config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < CONFIG_NKEYS; i++)
		if (config_keys[i].type == CONFIG_STR)
			free(*(char **)(void *)((char *)cfg + config_keys[i].offset));
	free(cfg->db_password);
	memset(cfg, 0, sizeof(*cfg));
}
