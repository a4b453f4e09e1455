/*
 * metrics.c - the typed table of every counter and state, and its walker.
 */
#include "metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "core.h"
#include "layout.h"
#include "lease.h"
#include "listener.h"
#include "proto_grpc.h"
#include "reqlat.h"
#include "server.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"
#include "trim.h"
#include "tls.h"

static void	metrics_text(struct metric_value *v, const char *text);
static unsigned	metrics_n(const struct metrics_src *m, enum metric_scope scope);
static void	metrics_family(FILE *b, const char *name, const char *type, const char *help);
static void	metrics_sample(FILE *b, const struct metric_def *d, const char *family,
		    const char *labels, const struct metric_value *v);
static void	metrics_capacity(FILE *b, const struct metrics_src *m);
static void	metrics_namespaces(FILE *b, const struct nss *ns);
static void	metrics_histogram(FILE *b, const char *family, const char *label,
		    const char *value, const uint64_t *hist, const unsigned *bounds_us, unsigned n,
		    uint64_t sum_us);
static void	metrics_latency(FILE *b);
static void	metrics_certs(FILE *b, const struct tls_counters *tls);

/*
 * Most rows are exported to /metrics as is, with no state set: under their
 * own name, SAME(X, name, ...) is X(name, ..., "name", METRIC_AS_IS, NULL,
 * ...); under another (or none, NULL), PROM(X, name, ..., prom, ...) is
 * X(name, ..., prom, METRIC_AS_IS, NULL, ...). They expand their arguments
 * on the way, so no row word (C, SVC, SRV ...) may be a macro where the
 * rows are expanded.
 */
#define SAME(X, name, type, scope, section, help, ...) \
	X(name, type, scope, section, help, #name, METRIC_AS_IS, NULL, __VA_ARGS__)
#define PROM(X, name, type, scope, section, help, prom, ...) \
	X(name, type, scope, section, help, prom, METRIC_AS_IS, NULL, __VA_ARGS__)

/*
 * Every row, in STATS order (per-server rows form one run): its name, type,
 * scope, INFO section, help, Prometheus family (NULL: not exported),
 * conversion and state set, then the statements that read its value into v.
 * Each row's reader is generated from its name below, so a name is spelled
 * once and a row cannot exist without its value. In a reader, m is the
 * metrics_src and SERVER the ticket server of a per-server row.
 */
#define METRICS_ROWS(X) \
	PROM(X, pid, G, SVC, "server", "process id", \
	    NULL, NUM((uint64_t)getpid())) \
	PROM(X, uptime, G, SVC, "server", "seconds since start", \
	    "uptime_seconds", NUM((uint64_t)(time(NULL) - m->started))) \
	X(mode, I, SVC, "server", "ticket, fallback or down", \
	    "mode", METRIC_AS_IS, "ticket fallback down", \
	    TEXT(source_mode_name(m->source->mode))) \
	/* mode_reason: not in /metrics, its numbers change by the millisecond. */ \
	PROM(X, mode_reason, I, SVC, "server", "why the mode is what it is, one line of text", \
	    NULL, source_mode_reason(m->source, v->reason, sizeof(v->reason)); TEXT(v->reason)) \
	SAME(X, block_size, G, SVC, "server", "B, IDs per ticket (0 until a server is checked)", \
	    NUM(TIER->block_size)) \
	PROM(X, curr_connections, G, SVC, "clients", "client connections open", \
	    "connections", NUM(m->conns->open)) \
	PROM(X, total_connections, C, SVC, "clients", "client connections accepted", \
	    "connections_accepted", NUM(m->conns->total)) \
	PROM(X, rejected_connections, C, SVC, "clients", "connections refused while draining", \
	    "connections_rejected", NUM(m->listener->rejected)) \
	PROM(X, evicted_connections, C, SVC, "clients", \
	    "connections closed at max_clients to give a new one the slot of the least recently served", \
	    "connections_evicted", NUM(m->conns->evicted)) \
	SAME(X, write_timeouts, C, SVC, "clients", \
	    "clients dropped for not reading (write_timeout_ms)", \
	    NUM(m->conns->write_timeouts)) \
	SAME(X, idle_timeouts, C, SVC, "clients", \
	    "clients closed after idle_timeout_ms without a request", \
	    NUM(m->conns->idle_timeouts)) \
	SAME(X, partial_timeouts, C, SVC, "clients", \
	    "clients closed with a request unfinished for partial_timeout_ms", \
	    NUM(m->conns->partial_timeouts)) \
	PROM(X, rejected_per_ip, C, SVC, "clients", "connections refused over max_clients_per_ip", \
	    "connections_rejected_per_ip", NUM(m->conns->rejected_per_ip)) \
	SAME(X, accept_errors, C, SVC, "clients", "failed accepts (e.g. out of descriptors)", \
	    NUM(m->listener->accept_errors)) \
	SAME(X, grpc_connections, G, SVC, "grpc", "gRPC connections open", \
	    NUM(GRPC(open))) \
	PROM(X, grpc_rejected, C, SVC, "grpc", \
	    "gRPC connections refused at grpc_max_connections, none being open to evict", \
	    "grpc_connections_rejected", NUM(GRPC(rejected))) \
	PROM(X, grpc_evicted, C, SVC, "grpc", \
	    "gRPC connections closed at grpc_max_connections to give a new one the slot of the least recently served", \
	    "grpc_connections_evicted", NUM(GRPC(evicted))) \
	PROM(X, grpc_rejected_per_ip, C, SVC, "grpc", \
	    "gRPC connections refused over grpc_max_connections_per_ip", \
	    "grpc_connections_rejected_per_ip", NUM(GRPC(rejected_per_ip))) \
	SAME(X, grpc_request_timeouts, C, SVC, "grpc", \
	    "gRPC requests left incomplete for grpc_request_timeout_ms, ended and reset", \
	    NUM(GRPC(request_timeouts))) \
	SAME(X, grpc_idle_timeouts, C, SVC, "grpc", \
	    "gRPC connections closed after grpc_idle_timeout_ms without a request progressing", \
	    NUM(GRPC(idle_timeouts))) \
	SAME(X, tls_handshakes, C, SVC, "clients", \
	    "TLS sessions established (text/RESP and gRPC listeners)", \
	    NUM(TLSC(handshakes))) \
	SAME(X, tls_handshake_failures, C, SVC, "clients", \
	    "TLS handshakes refused or broken: version, certificate, not TLS", \
	    NUM(TLSC(handshake_failures))) \
	SAME(X, tls_handshake_timeouts, C, SVC, "clients", \
	    "TLS handshakes not done within tls_handshake_timeout_ms", \
	    NUM(TLSC(handshake_timeouts))) \
	SAME(X, tls_reloads, C, SVC, "clients", \
	    "SIGHUP reloads of the TLS listeners' certificate, key and CA files", \
	    NUM(TLSC(reloads))) \
	SAME(X, tls_reload_failures, C, SVC, "clients", \
	    "TLS listeners whose reload failed: each kept the certificate it had (the log says why)", \
	    NUM(TLSC(reload_failures))) \
	SAME(X, tls_reload_clean, G, SVC, "clients", \
	    "1: the last SIGHUP reloaded every TLS listener (or none reloaded yet, or no TLS); " \
	    "0: one kept its old certificate", \
	    NUM(TLSC(reload_failed_last) == 0)) \
	SAME(X, requests, C, SVC, "stats", "requests answered", \
	    NUM(CORE.requests)) \
	SAME(X, ids_ticket, C, SVC, "stats", "IDs handed out from ticket blocks", \
	    NUM(m->source->stats.ids_ticket)) \
	SAME(X, ids_fallback, C, SVC, "stats", "Snowflake IDs handed out", \
	    NUM(m->source->stats.ids_fallback)) \
	SAME(X, ids_buffered, G, SVC, "stats", "ticket IDs prefetched, not yet issued", \
	    NUM(pool_available(&TIER->seq.pool))) \
	SAME(X, namespaces, G, SVC, "stats", \
	    "namespaces served (idgenctl ns create; max_namespaces)", \
	    NUM(tier_ns_served(TIER))) \
	SAME(X, namespaces_ignored, G, SVC, "stats", \
	    "namespaces of the catalogue not served: beyond max_namespaces", \
	    NUM(TIER->nss.ignored)) \
	SAME(X, namespace_refusals, C, SVC, "stats", \
	    "namespace tickets refused on a server (regressed counter, missing table, state file)", \
	    NUM(TIER->ns_refusals)) \
	SAME(X, namespace_ids_released, C, SVC, "stats", \
	    "buffered namespace IDs let go (idle past ns_idle_ms, dropped): a gap", \
	    NUM(TIER->ns_released + TIER->nss.released)) \
	SAME(X, namespace_copies_pushed, C, SVC, "stats", \
	    "copy UPDATEs run so that a namespace ticket's block is banked with its mark " \
	    "copied to another server (copy first)", \
	    NUM(TIER->ns_copies_pushed)) \
	SAME(X, namespace_tickets_banked_alone, C, SVC, "stats", \
	    "namespace tickets banked with no other server of the region up to hold a copy", \
	    NUM(TIER->ns_banked_alone)) \
	PROM(X, prefetch_target, G, SVC, "stats", "IDs the prefetch keeps buffered or in flight", \
	    "prefetch_target_ids", NUM(TIER->seq.target)) \
	SAME(X, ids_dropped, C, SVC, "stats", "buffered IDs abandoned (a gap, never expected)", \
	    NUM(TIER->ids_dropped)) \
	SAME(X, ticket_region, G, SVC, "stats", \
	    "the region whose pair gave the last ticket (another than region while ours is down)", \
	    NUM(TIER->ticket_region)) \
	SAME(X, tier_generation, G, SVC, "stats", \
	    "the tier's generation: changes of the increment seen (idgenctl tier raise-increment)", \
	    NUM(server_generation())) \
	SAME(X, tier_increment, G, SVC, "stats", \
	    "the tier's increment M in that generation (tier_increment until a change)", \
	    NUM(server_increment())) \
	SAME(X, tickets_other_regions, C, SVC, "stats", \
	    "tickets taken from other regions' pairs (other_regions)", \
	    NUM(TIER->tickets_other_regions)) \
	SAME(X, copies_pushed, C, SVC, "stats", \
	    "copy UPDATEs run so that a ticket's block is banked with its mark copied to " \
	    "another server (copy first)", \
	    NUM(TIER->copies_pushed)) \
	SAME(X, tickets_banked_alone, C, SVC, "stats", \
	    "tickets banked with no other server of their region up to hold a copy", \
	    NUM(TIER->banked_alone)) \
	SAME(X, tickets_conn_dropped, C, SVC, "stats", \
	    "tickets not used: the connection they were drawn on ended before a copy of " \
	    "their mark could count (copy-conn; a gap)", \
	    NUM(TIER->conn_dropped)) \
	SAME(X, refill_waits, C, SVC, "stats", "requests that found no buffered ID and waited", \
	    NUM(CORE.waits)) \
	SAME(X, refill_late_fallbacks, C, SVC, "stats", \
	    "requests the fallback answered because a refill was late", \
	    NUM(m->source->stats.late_refills)) \
	SAME(X, mode_changes, C, SVC, "stats", "transitions between modes", \
	    NUM(m->source->stats.mode_changes)) \
	PROM(X, err_badreq, C, SVC, "stats", "requests refused: malformed", \
	    "errors_badreq", NUM(CORE.errors[CORE_ERR_BADREQ])) \
	PROM(X, err_range, C, SVC, "stats", "requests refused: a number out of bounds", \
	    "errors_range", NUM(CORE.errors[CORE_ERR_RANGE])) \
	PROM(X, err_unavailable, C, SVC, "stats", "requests refused: no ID could be served", \
	    "errors_unavailable", NUM(CORE.errors[CORE_ERR_UNAVAILABLE])) \
	PROM(X, err_unknown_ns, C, SVC, "stats", "requests refused: no such namespace", \
	    "errors_unknown_namespace", NUM(CORE.errors[CORE_ERR_NONS])) \
	PROM(X, err_clock, C, SVC, "stats", \
	    "requests refused for the clock (stepped back, behind a resumed lease's floor, stopped)", \
	    "errors_clock", NUM(CORE.errors[CORE_ERR_CLOCK])) \
	SAME(X, auth_tokens, G, SVC, "stats", \
	    "tokens of auth_tokens_file loaded (0: no authentication)", \
	    NUM(AUTH(n))) \
	SAME(X, auth_refused, C, SVC, "stats", "requests refused: no token given (NOAUTH, 401)", \
	    NUM(CORE.errors[CORE_ERR_NOAUTH])) \
	SAME(X, auth_anonymous, C, SVC, "stats", \
	    "requests served without a token by auth_mode = optional (0 before auth_mode = required)", \
	    NUM(CORE.anonymous)) \
	SAME(X, auth_failures, C, SVC, "stats", \
	    "tokens refused: not in auth_tokens_file, or not the name given (WRONGPASS, 401)", \
	    NUM(CORE.errors[CORE_ERR_WRONGPASS])) \
	SAME(X, auth_denied, C, SVC, "stats", \
	    "requests refused: a read-only token asked for IDs (NOPERM)", \
	    NUM(CORE.errors[CORE_ERR_NOPERM])) \
	SAME(X, auth_delayed, C, SVC, "stats", \
	    "wrong tokens whose reply was held auth_fail_delay_ms (an address failing again)", \
	    NUM(AUTH(stats.delayed))) \
	SAME(X, auth_reloads, C, SVC, "stats", "auth_tokens_file reread (SIGHUP)", \
	    NUM(AUTH(stats.reloads))) \
	SAME(X, auth_reload_failures, C, SVC, "stats", \
	    "rereads of an unreadable file (the previous tokens stay; the log says why)", \
	    NUM(AUTH(stats.reload_failures))) \
	SAME(X, auth_reload_errors, C, SVC, "stats", \
	    "rereads not clean: lines left out (malformed, too long, a token twice) or the file " \
	    "unreadable", \
	    NUM(AUTH(stats.reload_errors))) \
	SAME(X, auth_reload_clean, G, SVC, "stats", \
	    "1: the last load of auth_tokens_file applied every line (or no file); 0: it did not", \
	    NUM(m->core->auth == NULL || m->core->auth->clean)) \
	/* auth_reload_error: not in /metrics, a line of text. */ \
	X(auth_reload_error, I, SVC, "stats", \
	    "what the last load left out (line numbers, never a token), or none", \
	    NULL, METRIC_AS_IS, NULL, \
	    TEXT(m->core->auth != NULL && !m->core->auth->clean ? m->core->auth->why : "none")) \
	PROM(X, state_file, I, SVC, "state", "the local state file, or off", \
	    "state_file_info", TEXT(statefile_on(m->sf) ? m->sf->path : "off")) \
	SAME(X, state_saves, C, SVC, "state", \
	    "state file saves asked for; one write may cover several (the writer thread)", \
	    NUM(m->sf->stats.snapshots)) \
	SAME(X, state_writes, C, SVC, "state", "durable writes of the state file", \
	    NUM(m->sf->stats.writes)) \
	SAME(X, state_write_failures, C, SVC, "state", "state file writes that failed", \
	    NUM(m->sf->stats.failures)) \
	PROM(X, state_write_us_avg, G, SVC, "state", "mean time of one state file write, us", \
	    NULL, NUM(AVG(m->sf->stats.write_us_total, m->sf->stats.writes))) \
	PROM(X, state_write_us_max, G, SVC, "state", "longest state file write, us", \
	    NULL, NUM(m->sf->stats.write_us_max)) \
	PROM(X, state_save_loop_us_max, G, SVC, "state", \
	    "longest a state file save held the event loop, us (a wait for the writer " \
	    "thread included)", \
	    NULL, NUM(m->sf->stats.loop_us_max)) \
	SAME(X, memory_trims, C, SVC, "memory", \
	    "freed memory given back after a flood (trim_free_bytes)", \
	    NUM(m->trim != NULL ? m->trim->trims : 0)) \
	PROM(X, memory_trim_us_max, G, SVC, "memory", "the longest of those, us", \
	    NULL, NUM(m->trim != NULL ? m->trim->trim_us_max : 0)) \
	X(state, I, SRV, "tickets", "up, down, connecting, refused or regressed", \
	    "ticket_server_state", METRIC_AS_IS, "up down connecting refused regressed", \
	    TEXT(ticket_state_name(SERVER->state))) \
	PROM(X, waits_for, I, SRV, "tickets", \
	    "up but not used yet: the servers whose check, sent after its connection was " \
	    "checked, it waits for (- none)", \
	    NULL, TEXT(tier_waits_for(TIER, (unsigned)server, v->reason, sizeof(v->reason)))) \
	SAME(X, tickets, C, SRV, "tickets", "tickets used", \
	    NUM(SERVER->stats.tickets)) \
	SAME(X, last_ticket, G, SRV, "tickets", "the last ticket this process used", \
	    NUM(SERVER->last_ticket)) \
	PROM(X, mark, G, SRV, "tickets", "the high-water mark its tickets must exceed", \
	    "high_water_mark", NUM(SERVER->mark)) \
	SAME(X, next_ticket, G, SRV, "tickets", "its counter at the last check", \
	    NUM(SERVER->seen.counter)) \
	SAME(X, workers_leased, G, SRV, "tickets", \
	    "its worker numbers whose lease window is open", \
	    NUM(SERVER->seen.workers_leased)) \
	SAME(X, rechecks, C, SRV, "tickets", "checks of a live connection", \
	    NUM(SERVER->stats.rechecks)) \
	PROM(X, witnessed, C, SRV, "tickets", \
	    "connects that brought its copy of the partner's mark up to date", \
	    "partner_marks_witnessed", NUM(SERVER->stats.witnessed)) \
	SAME(X, witness_failures, C, SRV, "tickets", \
	    "connects whose copies of the others' marks could not be written", \
	    NUM(SERVER->stats.witness_failures)) \
	SAME(X, witness_pending, G, SRV, "tickets", \
	    "1 while its last witness could not land: a restore of another server is not " \
	    "caught meanwhile", \
	    NUM(SERVER->witness_pending ? 1 : 0)) \
	PROM(X, unbanked, C, SRV, "tickets", \
	    "tickets drawn on a server sealed by a change of the increment, not used", \
	    "tickets_unbanked", NUM(SERVER->stats.unbanked)) \
	SAME(X, deadlocks, C, SRV, "tickets", "deadlocks (1213), retried", \
	    NUM(SERVER->stats.deadlocks)) \
	SAME(X, lock_timeouts, C, SRV, "tickets", "lock wait timeouts (1205), retried", \
	    NUM(SERVER->stats.lock_timeouts)) \
	PROM(X, failures, C, SRV, "tickets", "connect or query failures", \
	    "ticket_server_failures", NUM(SERVER->stats.failures)) \
	PROM(X, refusals, C, SRV, "tickets", "refusals (settings, rights, regressed counter)", \
	    "ticket_server_refusals", NUM(SERVER->stats.refusals)) \
	PROM(X, connects, C, SRV, "tickets", "connection attempts", \
	    "ticket_server_connects", NUM(SERVER->stats.connects)) \
	PROM(X, fetch_us_avg, G, SRV, "tickets", "mean time to take a ticket, us", \
	    NULL, NUM(AVG(SERVER->stats.fetch_us_total, SERVER->stats.tickets))) \
	PROM(X, fetch_us_max, G, SRV, "tickets", "longest time to take a ticket, us", \
	    NULL, NUM(SERVER->stats.fetch_us_max)) \
	X(lease_state, I, SVC, "fallback", "none, held, expired (held, past its end) or refused", \
	    "lease_state", METRIC_AS_IS, "none held expired refused", \
	    TEXT(source_lease_state(m->source))) \
	SAME(X, lease_worker, G, SVC, "fallback", "the leased worker number", \
	    NUM(LEASE->worker)) \
	X(lease_server, I, SVC, "fallback", "the server owning the lease row", \
	    "lease_server", METRIC_AS_IS, "odd even none", \
	    TEXT(LEASE->state == LEASE_HELD ? server_name((unsigned)LEASE->server) : "none")) \
	X(lease_window_start, G, SVC, "fallback", "start of the lease window, layout ms", \
	    "lease_window_start_timestamp_seconds", METRIC_LAYOUT_MS, NULL, \
	    NUM(LEASE->window_start)) \
	X(lease_window_end, G, SVC, "fallback", "end of the lease window, layout ms", \
	    "lease_window_end_timestamp_seconds", METRIC_LAYOUT_MS, NULL, \
	    NUM(LEASE->window_end)) \
	X(lease_window_end_time, I, SVC, "fallback", "end of the lease window, ISO-8601", \
	    NULL, METRIC_AS_IS, NULL, \
	    layout_format_iso(layout_ts_to_unix_ms(LEASE->window_end), v->buf, sizeof(v->buf)); \
	    TEXT(LEASE->state == LEASE_HELD ? v->buf : "none")) \
	SAME(X, lease_claims, C, SVC, "fallback", "lease claims", \
	    NUM(LEASE->stats.claims)) \
	SAME(X, lease_claim_failures, C, SVC, "fallback", "failed lease claims", \
	    NUM(LEASE->stats.claim_failures)) \
	SAME(X, lease_extends, C, SVC, "fallback", "lease extensions", \
	    NUM(LEASE->stats.extends)) \
	SAME(X, lease_extend_failures, C, SVC, "fallback", "failed lease extensions", \
	    NUM(LEASE->stats.extend_failures)) \
	SAME(X, lease_skew_refusals, C, SVC, "fallback", "claims refused for clock skew", \
	    NUM(LEASE->stats.skew_refusals)) \
	SAME(X, lease_extend_skew_refusals, C, SVC, "fallback", \
	    "extends and re-adoptions refused for clock skew (the window runs on to its end)", \
	    NUM(LEASE->stats.extend_skew_refusals)) \
	SAME(X, lease_lost, C, SVC, "fallback", "leases found held by another", \
	    NUM(LEASE->stats.lost)) \
	SAME(X, lease_releases, C, SVC, "fallback", "clean releases of the lease at shutdown", \
	    NUM(LEASE->stats.releases)) \
	SAME(X, lease_resumed, C, SVC, "fallback", "leases resumed from the state file", \
	    NUM(LEASE->stats.resumed)) \
	SAME(X, lease_adopted, C, SVC, "fallback", "resumed leases re-adopted in the database", \
	    NUM(LEASE->stats.adopted)) \
	SAME(X, lease_reservations, C, SVC, "fallback", \
	    "write-ahead reservations of Snowflake time", \
	    NUM(LEASE->stats.reservations)) \
	SAME(X, lease_reserve_waits, C, SVC, "fallback", \
	    "Snowflake takes that waited for a reservation on disk (the limit reached)", \
	    NUM(LEASE->stats.reserve_waits)) \
	SAME(X, lease_reserve_ahead_failures, C, SVC, "fallback", \
	    "reservations written ahead of minting whose write failed", \
	    NUM(LEASE->stats.reserve_ahead_failures)) \
	X(lease_reserve_lead_ms, G, SVC, "fallback", \
	    "how far ahead of minting a reservation is written: twice fallback_reserve_ms, " \
	    "or twice the slowest recent reservation write (up to fallback_reserve_lead_max_ms)", \
	    "lease_reserve_lead_seconds", METRIC_MS, NULL, \
	    NUM(lease_reserve_lead(LEASE))) \
	X(fallback_reserved_ts, G, SVC, "fallback", "highest ms that may be minted, layout ms", \
	    "fallback_reserved_timestamp_seconds", METRIC_LAYOUT_MS, NULL, \
	    NUM(!m->sf->rec.lease.held ? 0 : LEASE->gen->reserved < m->sf->rec.lease.reserved ? \
	    LEASE->gen->reserved : m->sf->rec.lease.reserved)) \
	X(lease_clock_skew_ms, G, SVC, "fallback", \
	    "clock skew against the database at the last claim, extend or re-adoption", \
	    "lease_clock_skew_seconds", METRIC_MS, NULL, \
	    NUM((uint64_t)(LEASE->skew_ms < 0 ? -LEASE->skew_ms : LEASE->skew_ms))) \
	X(fallback_last_ts, G, SVC, "fallback", "last ms minted, layout ms", \
	    "fallback_last_timestamp_seconds", METRIC_LAYOUT_MS, NULL, \
	    NUM(snowflake_last_ts(GEN))) \
	SAME(X, clock_absorbed_backsteps, C, SVC, "fallback", \
	    "small backward clock steps absorbed", \
	    NUM(GEN->counters.absorbed_backsteps)) \
	SAME(X, clock_large_backsteps, C, SVC, "fallback", "large backward clock steps", \
	    NUM(GEN->counters.large_backsteps)) \
	X(clock_largest_backstep_ms, G, SVC, "fallback", "largest backward step seen, ms", \
	    "clock_largest_backstep_seconds", METRIC_MS, NULL, \
	    NUM(GEN->counters.largest_backstep_ms)) \
	SAME(X, fallback_seq_exhausted, C, SVC, "fallback", "waits for the next millisecond", \
	    NUM(GEN->counters.seq_exhausted)) \
	SAME(X, fallback_clock_refusals, C, SVC, "fallback", "takes refused for the clock", \
	    NUM(GEN->counters.clock_refusals)) \
	SAME(X, fallback_window_refusals, C, SVC, "fallback", "takes refused outside the window", \
	    NUM(GEN->counters.window_refusals)) \
	X(ids_buffered, G, NS, "namespaces", "ticket IDs of a namespace prefetched, not yet issued", \
	    "namespace_ids_buffered", METRIC_AS_IS, NULL, \
	    NUM(NSRV != NULL ? pool_available(&NSRV->seq.pool) : 0))

#define NUM(x)		(v->num = (x))
#define TEXT(x)		metrics_text(v, (x))
#define AVG(sum, n)	((n) != 0 ? (sum) / (n) : 0)
#define TIER		(m->source->tier)
#define SERVER		(&TIER->srv[server])
#define NSRV		((unsigned)server < TIER->nss.n ? TIER->nss.v[server] : NULL)
#define LEASE		(m->source->lease)
#define GEN		(m->source->gen)
#define CORE		(m->core->stats)
#define AUTH(f)		(m->core->auth != NULL ? (uint64_t)m->core->auth->f : 0)	/* 0: off */
#define GRPC(f)		(m->grpc != NULL ? m->grpc->f : 0)	/* all 0 while gRPC is off */
#define TLSC(f)		(m->tls != NULL ? m->tls->f : 0)	/* all 0 without TLS */

static void
metrics_text(struct metric_value *v, const char *text)
{
	v->is_text = true;
	v->text = text;
}

/* One reader per row: metrics_get_<scope>_<name> (a name is unique in its scope). */
#define METRICS_GETTER(name, type, scope, section, help, prom, conv, states, ...) \
static void \
metrics_get_##scope##_##name(const struct metrics_src *m, int server, struct metric_value *v) \
{ \
	(void)m; \
	(void)server; \
	__VA_ARGS__; \
}
METRICS_ROWS(METRICS_GETTER)
#undef METRICS_GETTER

#undef NUM
#undef TEXT
#undef AVG
#undef TIER
#undef SERVER
#undef NSRV
#undef LEASE
#undef GEN
#undef CORE
#undef GRPC
#undef TLSC

/* A row's type and scope words, looked up by name (see SAME above). */
#define METRICS_TYPE_C		METRIC_COUNTER
#define METRICS_TYPE_G		METRIC_GAUGE
#define METRICS_TYPE_I		METRIC_INFO
#define METRICS_SCOPE_SVC	METRIC_SERVICE
#define METRICS_SCOPE_SRV	METRIC_PER_SERVER
#define METRICS_SCOPE_NS	METRIC_PER_NS
#define METRICS_DEF(name, type, scope, section, help, prom, conv, states, ...) \
	{ #name, METRICS_TYPE_##type, METRICS_SCOPE_##scope, section, help, prom, conv, states, \
	    metrics_get_##scope##_##name },
const struct metric_def metrics_table[] = {
	METRICS_ROWS(METRICS_DEF)
};
#undef METRICS_DEF
const size_t metrics_count = sizeof(metrics_table) / sizeof(metrics_table[0]);

/* One row's value, read where it lives. */
void
metrics_value(const struct metrics_src *m, size_t row, int server, struct metric_value *v)
{
	memset(v, 0, sizeof(*v));
	metrics_table[row].get(m, server, v);
}

/* The values of a row of scope: one per server, one per namespace, or one. */
static unsigned
metrics_n(const struct metrics_src *m, enum metric_scope scope)
{
	return scope == METRIC_PER_SERVER ? server_count() :
	    scope == METRIC_PER_NS ? m->source->tier->nss.n : 1;
}

/*
 * Every value in table order; a run of per-server rows for odd, then even,
 * and a run of per-namespace rows for each namespace in name order.
 */
void
metrics_walk(const struct metrics_src *m, metrics_fn fn, void *arg)
{
	struct metric_value v;
	enum metric_scope scope;
	char name[128];
	size_t i, j, end;
	unsigned s, n;

	for (i = 0; i < metrics_count; i = end) {
		scope = metrics_table[i].scope;
		if (scope == METRIC_SERVICE) {
			metrics_value(m, i, 0, &v);
			fn(&metrics_table[i], metrics_table[i].name, 0, &v, arg);
			end = i + 1;
			continue;
		}
		for (end = i; end < metrics_count && metrics_table[end].scope == scope; end++)
			;
		n = metrics_n(m, scope);
		for (s = 0; s < n; s++)
			for (j = i; j < end; j++) {
				metrics_value(m, j, (int)s, &v);
				if (scope == METRIC_PER_SERVER)
					snprintf(name, sizeof(name), "%s_%s", server_name(s),
					    metrics_table[j].name);
				else
					snprintf(name, sizeof(name), "ns_%s_%s",
					    m->source->tier->nss.v[s]->name, metrics_table[j].name);
				fn(&metrics_table[j], name, (int)s, &v, arg);
			}
	}
}

static void
metrics_family(FILE *b, const char *name, const char *type, const char *help)
{
	fprintf(b, "# HELP idgen_%s %s\n# TYPE idgen_%s %s\n", name, help, name, type);
}

/* One sample; a label value is a word of the table (no quotes to escape). */
static void
metrics_sample(FILE *b, const struct metric_def *d, const char *family, const char *labels,
    const struct metric_value *v)
{
	const char *st, *end, *key;
	char lab[128];

	if (d->type == METRIC_INFO && d->states == NULL) {
		fprintf(b, "idgen_%s{%s%svalue=\"%s\"} 1\n", family, labels,
		    labels[0] ? "," : "", v->text);
		return;
	}
	if (d->type == METRIC_INFO) {
		/* A state set: every possible value, 1 for the current one; the label
		 * is the family's last word (mode, state, server). */
		key = strrchr(d->prom, '_') != NULL ? strrchr(d->prom, '_') + 1 : d->prom;
		for (st = d->states; *st != '\0'; st = *end ? end + 1 : end) {
			end = strchr(st, ' ');
			if (end == NULL)
				end = st + strlen(st);
			snprintf(lab, sizeof(lab), "%.*s", (int)(end - st), st);
			fprintf(b, "idgen_%s{%s%s%s=\"%s\"} %d\n", family, labels,
			    labels[0] ? "," : "", key, lab, strcmp(lab, v->text) == 0);
		}
		return;
	}
	snprintf(lab, sizeof(lab), labels[0] ? "{%s}" : "%s", labels);
	if (d->conv == METRIC_AS_IS)
		fprintf(b, "idgen_%s%s %" PRIu64 "\n", family, lab, v->num);
	else	/* METRIC_MS, METRIC_LAYOUT_MS: seconds */
		fprintf(b, "idgen_%s%s %.3f\n", family, lab, d->conv == METRIC_MS ?
		    (double)v->num / 1000.0 : v->num == 0 ? 0.0 :
		    (double)layout_ts_to_unix_ms(v->num) / 1000.0);
}

/* One series per namespace known (max_namespaces bounds them). */
static void
metrics_namespaces(FILE *b, const struct nss *ns)
{
	unsigned i;

	metrics_family(b, "namespace_ids_total", "counter",
	    "IDs handed out per namespace, from its tickets or the Snowflake fallback");
	for (i = 0; i < ns->n; i++) {
		fprintf(b, "idgen_namespace_ids_total{ns=\"%s\",source=\"ticket\"} %" PRIu64
		    "\n", ns->v[i]->name, ns->v[i]->seq.ids_ticket);
		fprintf(b, "idgen_namespace_ids_total{ns=\"%s\",source=\"fallback\"} %"
		    PRIu64 "\n", ns->v[i]->name, ns->v[i]->seq.ids_fallback);
	}
	metrics_family(b, "namespace_served", "gauge",
	    "1 while a namespace is served (every server up says ready, alike)");
	for (i = 0; i < ns->n; i++)
		fprintf(b, "idgen_namespace_served{ns=\"%s\"} %d\n", ns->v[i]->name,
		    ns->v[i]->served);
}

/*
 * How much is left: of the layout's life, of the ticket region per server, of
 * the lease window, and of the worker numbers (counted at each server check).
 */
static void
metrics_capacity(FILE *b, const struct metrics_src *m)
{
	const struct tier *t = m->source->tier;
	const struct lease *l = m->source->lease;
	uint64_t now = 0, last, used;
	unsigned s;

	(void)layout_ts_from_unix_ms(m->source->clock_us() / 1000, &now);
	metrics_family(b, "layout_seconds_left", "gauge",
	    "seconds until the 41-bit Snowflake time runs out (2095-09-07)");
	fprintf(b, "idgen_layout_seconds_left %.3f\n",
	    now < LAYOUT_TS_MAX ? (double)(LAYOUT_TS_MAX - now) / 1000.0 : 0.0);
	metrics_family(b, "lease_window_seconds_left", "gauge",
	    "seconds of the Snowflake lease window left (an outage this long is served)");
	fprintf(b, "idgen_lease_window_seconds_left %.3f\n",
	    l->state == LEASE_HELD && l->window_end > now ?
	    (double)(l->window_end - now) / 1000.0 : 0.0);
	if (t->block_size != 0) {
		metrics_family(b, "ticket_region_tickets_left", "gauge",
		    "tickets this server can still issue before its blocks reach 2^53");
		last = (LAYOUT_TICKET_LIMIT - 1) / t->block_size;
		for (s = 0; s < server_count(); s++) {
			const struct ticket_server *srv = &t->srv[s];

			used = srv->seen.counter > srv->mark ? srv->seen.counter : srv->mark;
			fprintf(b, "idgen_ticket_region_tickets_left{server=\"%s\"} %" PRIu64
			    "\n", server_name(s), used < last ? (last - used) / server_increment() : 0);
		}
	}
	{
		const struct core_callers *k = &m->core->callers;
		unsigned i;

		metrics_family(b, "grpc_calls_total", "counter",
		    "gRPC ID calls by caller_service (max_callers names; the rest in _other)");
		for (i = 0; i < k->n; i++)
			fprintf(b, "idgen_grpc_calls_total{caller=\"%s\"} %" PRIu64 "\n",
			    k->named[i].name, k->named[i].calls);
		fprintf(b, "idgen_grpc_calls_total{caller=\"_none\"} %" PRIu64 "\n", k->none);
		fprintf(b, "idgen_grpc_calls_total{caller=\"_other\"} %" PRIu64 "\n",
		    k->other);
	}
	metrics_namespaces(b, &t->nss);
	metrics_family(b, "ticket_fetch_seconds", "histogram",
	    "time to take one ticket (its transaction, and the state file write)");
	for (s = 0; s < server_count(); s++)
		metrics_histogram(b, "ticket_fetch_seconds", "server", server_name(s),
		    t->srv[s].stats.fetch_hist, ticket_fetch_bounds_us, TICKET_FETCH_BUCKETS,
		    t->srv[s].stats.fetch_us_total);
}

/*
 * One series of a histogram, labelled label="value": the cumulative buckets
 * of hist (per bucket, not cumulative; hist[n] is the overflow), +Inf, the
 * sum and the count.
 */
static void
metrics_histogram(FILE *b, const char *family, const char *label,
    const char *value, const uint64_t *hist, const unsigned *bounds_us, unsigned n,
    uint64_t sum_us)
{
	uint64_t cum = 0;

	for (unsigned k = 0; k < n; k++) {
		cum += hist[k];
		fprintf(b, "idgen_%s_bucket{%s=\"%s\",le=\"%g\"} %" PRIu64 "\n", family,
		    label, value, bounds_us[k] / 1e6, cum);
	}
	cum += hist[n];
	fprintf(b, "idgen_%s_bucket{%s=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", family,
	    label, value, cum);
	fprintf(b, "idgen_%s_sum{%s=\"%s\"} %.6f\n", family, label, value,
	    (double)sum_us / 1e6);
	fprintf(b, "idgen_%s_count{%s=\"%s\"} %" PRIu64 "\n", family, label, value,
	    cum);
}

/* Request latency per protocol (reqlat.h): one histogram, label protocol. */
static void
metrics_latency(FILE *b)
{
	const struct reqlat *r = reqlat_get();

	metrics_family(b, "request_duration_seconds", "histogram",
	    "time from a request read to its reply handed to the connection, waits for a "
	    "refill included, by protocol (text and RESP: per batch read)");
	for (int p = 0; p < REQLAT_PROTOS; p++)
		metrics_histogram(b, "request_duration_seconds", "protocol",
		    reqlat_name((enum reqlat_proto)p), r->hist[p], reqlat_bounds_us, REQLAT_BUCKETS,
		    r->sum_us[p]);
}

/* When each TLS listener's certificate expires; none while all are cleartext. */
static void
metrics_certs(FILE *b, const struct tls_counters *tls)
{
	metrics_family(b, "tls_cert_not_after_timestamp_seconds", "gauge",
	    "notAfter of the certificate a TLS listener serves, unix seconds (as loaded at "
	    "start or by the last SIGHUP that loaded it)");
	for (int w = 0; tls != NULL && w < TLS_WHERE_N; w++)
		if (tls->not_after[w] != 0)
			fprintf(b, "idgen_tls_cert_not_after_timestamp_seconds{listener="
			    "\"%s\"} %" PRId64 "\n", tls_where_name((enum tls_where)w),
			    tls->not_after[w]);
}

char *
metrics_prometheus(const struct metrics_src *m, size_t *len)
{
	char *text = NULL, family[96], labels[80];
	FILE *b = open_memstream(&text, len);
	struct metric_value v;
	size_t i;
	unsigned s, n;
	bool failed;

	if (b == NULL)
		return NULL;
	for (i = 0; i < metrics_count; i++) {
		const struct metric_def *d = &metrics_table[i];

		if (d->prom == NULL)
			continue;
		snprintf(family, sizeof(family), "%s%s", d->prom,
		    d->type == METRIC_COUNTER ? "_total" : "");
		metrics_family(b, family, d->type == METRIC_COUNTER ? "counter" : "gauge",
		    d->help);
		n = metrics_n(m, d->scope);
		for (s = 0; s < n; s++) {
			metrics_value(m, i, (int)s, &v);
			if (d->scope == METRIC_PER_SERVER)
				snprintf(labels, sizeof(labels), "server=\"%s\"", server_name(s));
			else if (d->scope == METRIC_PER_NS)	/* a name is [A-Za-z0-9_] */
				snprintf(labels, sizeof(labels), "ns=\"%s\"",
				    m->source->tier->nss.v[s]->name);
			else
				labels[0] = '\0';
			metrics_sample(b, d, family, labels, &v);
		}
	}
	metrics_capacity(b, m);
	metrics_latency(b);
	metrics_certs(b, m->tls);
	failed = ferror(b) != 0;
	if (fclose(b) != 0 || failed) {
		free(text);
		return NULL;
	}
	return text;
}
