/*
 * idgenctl - the operator's command: reads every ticket server of the tier and
 * reports its state (tier status) or every invariant the uniqueness argument
 * rests on (tier check), with the repair for each violation (docs/design.md
 * section 12).
 *
 * It reads the same config file as idserver and connects with the same user,
 * one blocking connection per server: an operator's tool, not the event loop.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>	/* the library's init and end; queries go through ctl.h */

#include "check.h"
#include "ctl.h"
#include "idgen.h"	/* IDGEN_VERSION */
#include "layout.h"

/* The longest lease window (lease_window_ms's bound) plus the skew bound, in ms. */
#define CTL_LEASE_AHEAD_MAX	(UINT64_C(86400000) + UINT64_C(3600000))

static void	ctl_check_rows(struct ctl *c, unsigned i);
static void	ctl_reread_counter(struct ctl_server *s);
static bool	ctl_lock(struct ctl *c);
static int	ctl_run(struct ctl *c, bool ns, int argc, char **argv);


static void
ctl_usage(FILE *f)
{
	fprintf(f,
	    "usage: idgenctl [--config FILE] [idserver options] COMMAND\n"
	    "       idgenctl --help | --version\n"
	    "\n"
	    "Reads every ticket server of the tier named by the config (odd_host/odd_port,\n"
	    "even_host/even_port, db_user, db_name, db_password_file or IDGEN_DB_PASSWORD),\n"
	    "over TLS when db_tls = required (db_tls_* settings, as idserver).\n"
	    "\n"
	    "commands:\n"
	    "  tier status   one line per server: address, settings, B, counter, marks,\n"
	    "                leases held now\n"
	    "  tier check    every invariant uniqueness rests on; one line per violation\n"
	    "                with its repair\n"
	    "  tier add-server OFFSET IP:PORT\n"
	    "                prepares a server of this region beyond its pair at an unused\n"
	    "                offset (its meta row, every region server's marks row) and\n"
	    "                prints the more_servers line; writes as IDGEN_ADMIN_USER\n"
	    "                (default root) with IDGEN_ADMIN_PASSWORD from the environment\n"
	    "  tier retire-server OFFSET\n"
	    "                flags a server beyond the pair retired on every server of\n"
	    "                the region: idservers refuse it, its offset is never given\n"
	    "                again, its marks stay; then carries its copies of the\n"
	    "                others' marks to them; writes as IDGEN_ADMIN_USER\n"
	    "  tier raise-increment M\n"
	    "                moves the tier to the increment M while idservers serve: a new\n"
	    "                generation above a floor (plan, seal, floor, open); run it\n"
	    "                again after an interruption; writes as IDGEN_ADMIN_USER\n"
	    "  ns list       the namespaces: B, fallback policy, state, top mark\n"
	    "  ns create NAME [--block-size B] [--fallback snowflake|refuse]\n"
	    "                [--start-above N] [--start-above-max URL TABLE COLUMN]...\n"
	    "                [--margin N] [--settle-ms MS]\n"
	    "                a sequence of its own on every server (two-phase: a killed\n"
	    "                create is run again); URL 'mariadb://USER@HOST:PORT/DATABASE',\n"
	    "                read as USER in DATABASE, its password in IDGEN_ADOPT_PASSWORD;\n"
	    "                starts above the largest MAX(COLUMN) of every shard named,\n"
	    "                read twice MS apart (default 1000): refused if it moved (a\n"
	    "                writer still inserts) unless --margin N: then above MAX + N\n"
	    "  ns raise NAME --above N\n"
	    "                its next ID above N (forward only)\n"
	    "  ns drop NAME [--force]\n"
	    "                marks it dropped, keeps its marks (refused while it took\n"
	    "                tickets in the last 600 s, unless --force)\n"
	    "\n"
	    "exit status: 0 all well, 1 a violation (tier check) or a refusal (add-server,\n"
	    "raise-increment),\n"
	    "2 a server could not be read or written, or a usage error.\n");
}

/*
 * The highest mark known for server r anywhere in the tier, in tickets of B = b;
 * where names the server holding it (r itself on a tie).
 */
static uint64_t
ctl_known_mark(const struct ctl *c, unsigned r, uint64_t b, unsigned *where)
{
	uint64_t best = 0;
	unsigned first, count;

	*where = r;
	server_group(r, &first, &count);
	for (unsigned k = 0; k < count; k++) {
		unsigned i = first + (r - first + k) % count;	/* its own row first */
		const struct ctl_server *s = &c->srv[i];
		uint64_t t;

		if (!s->up || !s->has_mark[r])
			continue;
		t = state_mark_ticket(&s->mark[r], b);
		if (t > best || (k == 0 && t == best)) {
			best = t;
			*where = i;
		}
		/* A mark of another B binds every server of the region (design 6.2.1). */
		for (unsigned j = first; j < first + count; j++)
			if (s->has_mark[j] && s->mark[j].block_size != 0 && s->mark[j].block_size != b &&
			    (t = state_mark_ticket(&s->mark[j], b)) > best) {
				best = t;
				*where = i;
			}
	}
	return best;
}

static unsigned
ctl_leases_held(const struct ctl *c, const struct ctl_server *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->nlease; i++)
		n += s->lease[i].holder[0] != '\0' && (int64_t)s->lease[i].window_end >= c->now_ms;
	return n;
}

/*
 * A holder name's fields (docs/design.md 3.7): HOST:PID:NONCE[:KIND], read
 * from the right (a row written before the kind has three); a name of
 * another shape is shown whole as the host.
 */
static void
ctl_holder_fields(const char *holder, char *host, size_t hostlen, char *pid, size_t pidlen,
    const char **kind)
{
	char buf[161], *f[3];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", holder);
	*kind = "-";
	snprintf(host, hostlen, "%s", holder);
	snprintf(pid, pidlen, "-");
	for (char *p = buf + strlen(buf); p > buf && n < 3; p--)
		if (p[-1] == ':') {
			p[-1] = '\0';
			f[n++] = p;
		}
	if (n >= 3 && (strcmp(f[0], "idserver") == 0 || strcmp(f[0], "libidgen") == 0)) {
		*kind = strcmp(f[0], "idserver") == 0 ? "idserver" : "libidgen";
		snprintf(pid, pidlen, "%s", f[2]);
	} else if (n >= 2)
		snprintf(pid, pidlen, "%s", f[1]);
	else
		return;
	if (strspn(pid, "0123456789") != strlen(pid) || pid[0] == '\0') {
		*kind = "-";
		snprintf(pid, pidlen, "-");
		return;
	}
	snprintf(host, hostlen, "%s", buf);
}

/* One line per worker number held now: who holds it (idserver or library), host, pid. */
static void
ctl_status_holders(const struct ctl *c)
{
	bool header = false;

	for (unsigned i = 0; i < server_count(); i++) {
		const struct ctl_server *s = &c->srv[i];

		for (unsigned k = 0; s->up && k < s->nlease; k++) {
			const struct ctl_lease *l = &s->lease[k];
			char host[161], pid[32];
			const char *kind;

			if (l->holder[0] == '\0' || (int64_t)l->window_end < c->now_ms)
				continue;
			if (!header)
				printf("%-6s %6s %-8s %-8s %-30s %8s %10s\n", "held", "worker", "server",
				    "kind", "host", "pid", "ends_in_ms");
			header = true;
			ctl_holder_fields(l->holder, host, sizeof(host), pid, sizeof(pid), &kind);
			printf("%-6s %6u %-8s %-8s %-30s %8s %10" PRId64 "\n", "held", l->worker,
			    server_name(i), kind, host, pid, (int64_t)l->window_end - c->now_ms);
		}
	}
}

static int
ctl_status(struct ctl *c)
{
	int rc = 0;

	printf("%-8s %-21s %-4s %-26s %4s %4s %6s %4s %10s %12s %12s %-24s %-9s %s\n", "name",
	    "address", "up", "version", "incr", "offs", "region", "gen", "B", "counter",
	    "own mark", "copies", "tls", "leases");
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		char addr[64], copies[160] = "", own[32] = "-", tls[16];
		unsigned first, count;
		size_t n = 0;

		snprintf(addr, sizeof(addr), "%s:%u", s->host, s->port);
		if (!s->up) {
			printf("%-8s %-21s %-4s %s\n", server_name(i), addr, "no", s->error);
			rc = 2;
			continue;
		}
		if (s->has_mark[i])
			snprintf(own, sizeof(own), "%" PRIu64, s->mark[i].high_water);
		server_group(i, &first, &count);
		for (unsigned j = first; j < first + count; j++)
			if (j != i && s->has_mark[j] && n < sizeof(copies))
				n += (size_t)snprintf(copies + n, sizeof(copies) - n, "%s%s:%" PRIu64,
				    n ? "," : "", server_name(j), s->mark[j].high_water);
		/* The TLS version alone: one word, so the columns stay fields. */
		snprintf(tls, sizeof(tls), "%s", s->tls[0] ? s->tls : "cleartext");
		tls[strcspn(tls, " ")] = '\0';
		printf("%-8s %-21s %-4s %-26.26s %4s %4s %6s %4s %10" PRIu64 " %12" PRIu64 " %12s "
		    "%-24s %-9s %u held of %u\n", server_name(i), addr, "yes", s->field[F_VERSION],
		    s->field[F_INCREMENT], s->field[F_OFFSET], s->field[F_REGION],
		    s->sealed ? "seal" : s->field[F_GENERATION], s->block_size,
		    s->counter, own, copies[0] ? copies : "-", tls, ctl_leases_held(c, s),
		    s->nlease);
	}
	ctl_status_holders(c);
	return rc;
}

static void __attribute__((format(printf, 2, 3)))
ctl_violation(struct ctl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("VIOLATION ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	c->violations++;
}

static void __attribute__((format(printf, 2, 3)))
ctl_warning(struct ctl *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("WARNING ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	c->warnings++;
}

/* Settings, meta row and rights of each server (check.c, as idserver judges them). */
static void
ctl_check_servers(struct ctl *c)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		struct check_server_info in;
		char why[512];
		uint64_t b;

		if (!s->up)
			continue;
#define F(k)	(s->null[k] ? NULL : s->field[k])
		in = (struct check_server_info){ F(F_VERSION), F(F_INCREMENT), F(F_OFFSET),
		    F(F_FLUSH), F(F_LAYOUT), F(F_BLOCK), F(F_PARITY), F(F_TIER_INCREMENT),
		    F(F_SERVER_OFFSET), F(F_REGION), F(F_REGION_BITS) };
		/* The settings, then tickets64's engine (check_table's first rule). */
		if (!check_server(&in, i, &b, why, sizeof(why)) ||
		    !check_engine(c->cfg.db_name, "tickets64", F(F_ENGINE), why, sizeof(why)))
			ctl_violation(c, "%s: %s", server_name(i), why);
#undef F
		if (s->rights[0] != '\0')
			ctl_violation(c, "%s: missing rights: %s", server_name(i), s->rights);
		ctl_check_rows(c, i);
	}
}

/* A server holds a marks row for every server of its region. */
static void
ctl_check_rows(struct ctl *c, unsigned i)
{
	unsigned first, count;

	server_group(i, &first, &count);
	for (unsigned j = first; j < first + count; j++) {
		if (c->srv[i].has_mark[j])
			continue;
		if (j < SERVER_PAIR || !server_is_own(j))
			ctl_violation(c, "%s: idgen_marks has no '%s' row; repair: load "
			    "schema/10-tables.sql on it", server_name(i), server_role(j));
		else
			ctl_violation(c, "%s: idgen_marks has no '%s' row (the %s server's mark); "
			    "repair: idgenctl tier add-server %u %s:%u", server_name(i),
			    server_role(j), server_name(j), server_offset(j), c->srv[j].host,
			    c->srv[j].port);
	}
}

/* No configured server is retired (docs/design.md section 12.5). */
static void
ctl_check_retired(struct ctl *c)
{
	for (unsigned j = 0; j < server_count(); j++)
		for (unsigned i = 0; i < server_count(); i++)
			if (c->srv[i].up && (c->srv[i].retired >> j & 1) != 0) {
				ctl_violation(c, "%s: retired (the %s server says so): idservers refuse "
				    "it; repair: remove %u=%s:%u from more_servers", server_name(j),
				    server_name(i), server_offset(j), c->srv[j].host, c->srv[j].port);
				break;
			}
}

/* Every server agrees on B, and no address is the same server twice. */
static void
ctl_check_agreement(struct ctl *c)
{
	for (unsigned i = 0; i < server_count(); i++)
		for (unsigned j = i + 1; j < server_count(); j++) {
			struct ctl_server *a = &c->srv[i], *b = &c->srv[j];

			if (!a->up || !b->up)
				continue;
			if (a->block_size != b->block_size)
				ctl_violation(c, "%s has B=%" PRIu64 " but %s has B=%" PRIu64 ": "
				    "every server must use the same B; repair: set "
				    "idgen_meta.block_size back on the one that changed",
				    server_name(i), a->block_size, server_name(j), b->block_size);
			if (a->field[F_UUID][0] != '\0' &&
			    strcmp(a->field[F_UUID], b->field[F_UUID]) == 0)
				ctl_violation(c, "%s and %s are the same server (server_uuid %s); "
				    "repair: point the %s server's address setting at its own server",
				    server_name(i), server_name(j), a->field[F_UUID], server_name(j));
		}
}

/*
 * One generation everywhere, nothing planned or sealed, every counter above
 * its server's floor (docs/design.md section 12.4).
 */
static void
ctl_check_generations(struct ctl *c)
{
	uint64_t top = 0, top_m = server_increment(), g;

	for (unsigned i = 0; i < server_count(); i++)
		if (c->srv[i].up && ctl_u64(c->srv[i].field[F_GENERATION], &g) && g > top) {
			top = g;
			if (!ctl_u64(c->srv[i].field[F_TIER_INCREMENT], &top_m))
				top_m = server_increment();
		}
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		uint64_t plan = 0, floor = 0;

		if (!s->up)
			continue;
		if (!ctl_u64(s->field[F_GENERATION], &g) || !ctl_u64(s->field[F_FLOOR], &floor) ||
		    !ctl_u64(s->field[F_PLAN], &plan)) {
			ctl_violation(c, "%s: idgen_meta lacks the generation columns; repair: load "
			    "schema/10-tables.sql on it", server_name(i));
			continue;
		}
		if (g != top || plan != 0 || s->sealed || s->own_gen != g)
			ctl_violation(c, "%s: in generation %" PRIu64 " (tier: %" PRIu64 ")%s%s: a "
			    "change of the increment is unfinished; repair: idgenctl tier "
			    "raise-increment %" PRIu64 " (it resumes)", server_name(i), g, top,
			    plan != 0 ? ", planned" : "", s->sealed ? ", sealed" : "",
			    plan != 0 ? plan : top_m);
		/* The floor is an ID: the first of the generation (docs/design.md 12.4). */
		if (s->block_size > 0 && floor > 0 && (s->counter > UINT64_MAX / s->block_size ||
		    s->counter * s->block_size < floor))
			ctl_violation(c, "%s: counter %" PRIu64 " (B=%" PRIu64 ") starts below the "
			    "generation's first ID %" PRIu64 "; repair: on the %s server run ALTER "
			    "TABLE %s.tickets64 AUTO_INCREMENT = %" PRIu64, server_name(i), s->counter,
			    s->block_size, floor, server_name(i), c->cfg.db_name,
			    (floor + s->block_size - 1) / s->block_size);
	}
}

/* The counter of tickets64 read again (AUTO_INCREMENT: the next ticket is >= it). */
static void
ctl_reread_counter(struct ctl_server *s)
{
	struct ctl_res *res = ctl_query(s, "SELECT AUTO_INCREMENT FROM information_schema.TABLES "
	    "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tickets64'");
	char **row;
	uint64_t v;

	if (res == NULL)
		return;		/* the first read stands */
	row = ctl_row(res);
	if (row != NULL && ctl_u64(row[0], &v))
		s->counter = v;
	ctl_res_free(res);
}

/* Each counter is above every mark known for it anywhere in the tier. */
static void
ctl_check_counters(struct ctl *c)
{
	/*
	 * Every counter read again now, after every server's marks and copies:
	 * a copy read later than its server's counter may hold tickets that
	 * idservers drew in between, and read a healthy counter as regressed
	 * (test_raise saw it under load; idserver orders its checks the same
	 * way, docs/design.md 6.4).
	 */
	for (unsigned i = 0; i < server_count(); i++)
		if (c->srv[i].up)
			ctl_reread_counter(&c->srv[i]);
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		char why[768], where[128];
		unsigned at;
		uint64_t mark;

		if (!s->up || s->block_size == 0)
			continue;
		mark = ctl_known_mark(c, i, s->block_size, &at);
		if (check_counter(s->counter, mark))
			continue;
		snprintf(where, sizeof(where), at == i ? "(its own idgen_marks)" :
		    "(the %s server's copy)", server_name(at));
		check_regressed_msg(why, sizeof(why), server_name(i), c->cfg.db_name, "tickets64",
		    s->counter, mark, where);
		ctl_violation(c, "%s: %s", server_name(i), why);
	}
}

/* Every server has the schema's guard triggers (docs/design.md 6.5). */
static void
ctl_check_guards(struct ctl *c)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];

		if (!s->up)
			continue;
		if (s->guards_error[0] != '\0') {
			ctl_violation(c, "%s: its triggers cannot be read (%s): nothing proven about "
			    "the guards; repair: load schema/10-tables.sql and schema/40-leases.sql "
			    "on it (as root)", server_name(i), s->guards_error);
			continue;
		}
		for (unsigned g = 0; g < ctl_guards_count; g++)
			if ((s->guards >> g & 1) == 0)
				ctl_violation(c, "%s: the trigger %s is missing: the database does not "
				    "refuse %s; repair: load schema/%s on it (as root)", server_name(i),
				    ctl_guards[g].name, ctl_guards[g].refuses, ctl_guards[g].file);
	}
}

/*
 * Lease rows that no writer of idgen produces (docs/design.md 12.1): an open
 * window without a holder, a window_end further ahead than any lease. Each
 * only wastes a number, so they warn.
 */
static void
ctl_check_lease_rows(struct ctl *c)
{
	if (c->now_ms <= 0)
		return;
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		char list[96] = "";
		unsigned open = 0;
		size_t n = 0;

		if (!s->up)
			continue;
		for (unsigned k = 0; k < s->nlease; k++) {
			const struct ctl_lease *l = &s->lease[k];

			if (l->holder[0] == '\0' && l->window_end > 0 &&
			    l->window_end >= (uint64_t)c->now_ms && open++ < 8 && n < sizeof(list))
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%u", n ? ", " : "",
				    l->worker);
			if (l->window_end > (uint64_t)c->now_ms + CTL_LEASE_AHEAD_MAX)
				ctl_warning(c, "%s: idgen_leases worker %u: window_end %" PRIu64 " is %"
				    PRIu64 " ms ahead of the server's now, more than any lease "
				    "(lease_window_ms at most 86400000) plus the skew bound: the number "
				    "is reserved until then (holder '%s'); a hand edit or a clock far "
				    "ahead?", server_name(i), l->worker, l->window_end,
				    l->window_end - (uint64_t)c->now_ms, l->holder);
		}
		/* One line: the restore repair (design 6.5) raises every row at once. */
		if (open > 0)
			ctl_warning(c, "%s: %u idgen_leases row%s (worker%s %s%s) ha%s an open window "
			    "and no holder: no idserver claims or extends %s until its window_end; "
			    "expected for a while after the restore repair, else a hand edit; do not "
			    "lower it", server_name(i), open, open == 1 ? "" : "s", open == 1 ? "" : "s",
			    list, open > 8 ? ", ..." : "", open == 1 ? "s" : "ve",
			    open == 1 ? "it" : "them");
	}
}

/*
 * Every worker number has exactly one authority: rows only on their owner, the
 * server of its parity in the pair of its region; none beyond a pair.
 */
static void
ctl_check_leases(struct ctl *c)
{
	for (unsigned i = 0; i < server_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		unsigned region = server_region_at(i);

		if (!s->up)
			continue;
		for (unsigned k = 0; k < s->nlease; k++) {
			const struct ctl_lease *l = &s->lease[k];
			const char *why = NULL;

			if (i >= SERVER_PAIR && server_is_own(i))
				why = "which no server beyond its region's pair may grant";
			else if (server_region_of(l->worker) != region)
				why = "which belongs to another region";
			else if (l->worker % 2 != server_offset(i) % 2)
				why = "which belongs to the other server of the pair";
			if (why == NULL)
				continue;
			ctl_violation(c, "%s: idgen_leases has worker %u, %s (region %u of the "
			    "worker, region_bits %u): two authorities for one number; repair: once "
			    "its window ended over an hour ago (window_end %" PRIu64 "; the schema's "
			    "trigger refuses it before), DELETE FROM "
			    "%s.idgen_leases WHERE worker = %u on the %s server", server_name(i),
			    l->worker, why, server_region_of(l->worker), server_region_bits(),
			    l->window_end, c->cfg.db_name, l->worker, server_name(i));
		}
	}
}

static int
ctl_check(struct ctl *c)
{
	unsigned down = 0;

	for (unsigned i = 0; i < server_count(); i++)
		if (!c->srv[i].up) {
			printf("UNCHECKED %s (%s:%u): %s\n", server_name(i), c->srv[i].host,
			    c->srv[i].port, c->srv[i].error);
			down++;
		}
	ctl_check_servers(c);
	ctl_check_agreement(c);
	ctl_check_counters(c);
	ctl_check_generations(c);
	ctl_check_retired(c);
	ctl_check_leases(c);
	ctl_check_guards(c);
	ctl_check_lease_rows(c);
	if (c->violations > 0) {
		printf("tier check: %u violation%s\n", c->violations, c->violations == 1 ? "" : "s");
		return 1;
	}
	if (down > 0) {
		printf("tier check: %u server%s not read: nothing proven about %s\n", down,
		    down == 1 ? "" : "s", down == 1 ? "it" : "them");
		return 2;
	}
	printf("tier check: ok (%u servers, B=%" PRIu64 "%s)\n", server_count(),
	    c->srv[0].block_size, c->warnings > 0 ? ", with warnings" : "");
	return 0;
}

/*
 * The tier's generation, as idserver follows it (docs/design.md section 12.4):
 * the latest any server reports, with its increment, judged in place of the
 * config's tier_increment; a note when the config lags.
 */
static void
ctl_follow_generation(struct ctl *c)
{
	uint64_t g, m, top = 0, top_m = 0;

	for (unsigned i = 0; i < server_count(); i++)
		if (c->srv[i].up && ctl_u64(c->srv[i].field[F_GENERATION], &g) && g > top &&
		    ctl_u64(c->srv[i].field[F_TIER_INCREMENT], &m) && m <= SERVER_INCREMENT_MAX) {
			top = g;
			top_m = m;
		}
	if (top == 0 || top_m == server_increment())
		return;
	if (top > UINT_MAX || !server_view_adopt((unsigned)top, (unsigned)top_m))
		return;
	printf("note: the tier is in generation %" PRIu64 " with M = %" PRIu64 " (idservers "
	    "follow it); tier_increment is %u in this config: set it to %" PRIu64 "\n", top, top_m,
	    c->cfg.tier_increment, top_m);
}

/*
 * How long a command waits for the lock: the server frees a finished or killed
 * command's lock when it has processed that connection's end, a moment after
 * the process exited (a command run right after another found it still held:
 * test_ns_serve's 80th ns create, issue 36).
 */
#define CTL_LOCK_WAIT_S	5
#define CTL_STR_(x)	#x
#define CTL_STR(x)	CTL_STR_(x)

/*
 * One command that changes the tier at a time: a named lock on the odd server,
 * held by this process's connection until it exits (two operators' plans,
 * seals or creates never interleave). Taken before any server is read: a
 * command that waited for it acts on what the one before it left, never on a
 * read from before that one ran (docs/design.md 12.4). ctl_read then reads the
 * odd server on this connection. A restart of the odd server frees the lock
 * with the connection, silently: ctldb.c checks it is still held before every
 * statement that writes, on any server, and stops the command if not.
 */
static bool
ctl_lock(struct ctl *c)
{
	struct ctl_server *s = &c->srv[0];
	struct ctl_res *res;
	char **row;
	bool ok = false, up;

	up = ctl_connect_as(c, s, c->cfg.db_user, c->cfg.db_password);
	if (up && (res = ctl_query(s, "SELECT GET_LOCK('idgenctl', "
	    CTL_STR(CTL_LOCK_WAIT_S) ")")) != NULL) {
		row = ctl_row(res);
		ok = row != NULL && row[0] != NULL && strcmp(row[0], "1") == 0;
		ctl_res_free(res);
	}
	if (ok)
		ctldb_lock_conn(s);
	if (!ok)
		fprintf(stderr, "idgenctl: %s%s\n", up ? "another idgenctl command is "
		    "changing this tier (it has held the lock 'idgenctl' on the odd server for the "
		    CTL_STR(CTL_LOCK_WAIT_S) " s this one waited): run this once it has finished" :
		    "the odd server cannot be read: no change without it: ", up ? "" : s->error);
	return ok;
}

/* The index of the first command word: options before it go to config_load. */
static int
ctl_command_start(int argc, char **argv)
{
	int a;

	for (a = 1; a < argc; a++) {
		if (strncmp(argv[a], "--", 2) != 0)
			return a;
		if (strchr(argv[a], '=') == NULL && strcmp(argv[a], "--help") != 0 &&
		    strcmp(argv[a], "--version") != 0)
			a++;	/* its value */
	}
	return argc;
}

/*
 * ns create refuses while a change of the increment is planned (docs/design.md
 * 13.8: the change carries every ready namespace, not one half made). 0 when
 * the command may go on.
 */
static int
ctl_ns_guard(struct ctl *c, const char *verb)
{
	if (strcmp(verb, "create") != 0)
		return 0;
	for (unsigned i = 0; i < server_own_count(); i++) {
		struct ctl_server *s = &c->srv[i];
		uint64_t n = 0;

		if (s->up && ctl_u64(s->field[F_PLAN], &n) && n != 0) {
			fprintf(stderr, "idgenctl: a change of the increment to %" PRIu64 " is in "
			    "progress (the %s server's tier_plan): finish it first (idgenctl tier "
			    "raise-increment %" PRIu64 ")\n", n, server_name(i), n);
			return 1;
		}
	}
	return 0;
}

/*
 * Reads every server (after the lock: ctl_lock) and runs the command, argv[0]
 * its verb (ns: a namespace command). Its exit status.
 */
static int
ctl_run(struct ctl *c, bool ns, int argc, char **argv)
{
	int rc;

	for (unsigned i = 0; i < server_count(); i++)
		ctl_read(c, &c->srv[i]);
	if (strcmp(argv[0], "raise-increment") != 0)
		ctl_follow_generation(c);
	if ((rc = ctl_ns_guard(c, argv[0])) != 0)
		return rc;
	if (ns)
		return ctl_ns(c, argc, argv);
	if (strcmp(argv[0], "add-server") == 0)
		return ctl_add_server(c, argv[1], argv[2]);
	if (strcmp(argv[0], "retire-server") == 0)
		return ctl_retire_server(c, argv[1]);
	if (strcmp(argv[0], "raise-increment") == 0)
		return ctl_raise_increment(c, argv[1]);
	return strcmp(argv[0], "status") == 0 ? ctl_status(c) : ctl_check(c);
}

int
main(int argc, char **argv)
{
	static struct ctl c;
	char err[512];
	bool exit_now, ns;
	int cmd = ctl_command_start(argc, argv), rc;

	for (int a = 1; a < cmd; a++)
		if (strcmp(argv[a], "--help") == 0) {
			ctl_usage(stdout);
			return 0;
		} else if (strcmp(argv[a], "--version") == 0) {
			printf("idgenctl %s\n", IDGEN_VERSION);
			return 0;
		}
	ns = cmd + 2 <= argc && strcmp(argv[cmd], "ns") == 0 &&
	    (strcmp(argv[cmd + 1], "list") == 0 ? cmd + 2 == argc : cmd + 3 <= argc &&
	    (strcmp(argv[cmd + 1], "create") == 0 || strcmp(argv[cmd + 1], "raise") == 0 ||
	    strcmp(argv[cmd + 1], "drop") == 0));
	if (!ns && (cmd + 2 > argc || strcmp(argv[cmd], "tier") != 0 ||
	    !((cmd + 2 == argc && (strcmp(argv[cmd + 1], "status") == 0 ||
	    strcmp(argv[cmd + 1], "check") == 0)) ||
	    (cmd + 3 == argc && strcmp(argv[cmd + 1], "raise-increment") == 0) ||
	    (cmd + 3 == argc && strcmp(argv[cmd + 1], "retire-server") == 0) ||
	    (cmd + 4 == argc && strcmp(argv[cmd + 1], "add-server") == 0)))) {
		ctl_usage(stderr);
		return 2;
	}
	if (!config_load(&c.cfg, cmd, argv, &exit_now, err, sizeof(err))) {
		fprintf(stderr, "idgenctl: %s\n", err);
		return 2;
	}
	config_dbtls(&c.tls, &c.cfg);
	if (mysql_library_init(0, NULL, NULL) != 0) {
		fprintf(stderr, "idgenctl: cannot initialise the MariaDB client library\n");
		return 2;
	}
	for (unsigned i = 0; i < server_count(); i++) {
		c.srv[i].index = i;
		config_server_addr(&c.cfg, i, &c.srv[i].host, &c.srv[i].port);
	}
	if ((ns ? strcmp(argv[cmd + 1], "list") != 0 : strcmp(argv[cmd + 1], "status") != 0 &&
	    strcmp(argv[cmd + 1], "check") != 0) && !ctl_lock(&c))
		rc = 1;
	else
		rc = ctl_run(&c, ns, argc - cmd - 1, argv + cmd + 1);
	for (unsigned i = 0; i < server_count(); i++) {
		if (c.srv[i].db != NULL)
			ctl_close(&c.srv[i]);
		free(c.srv[i].lease);
	}
	config_free(&c.cfg);
	mysql_library_end();
	return rc;
}
