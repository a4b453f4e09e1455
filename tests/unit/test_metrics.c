/*
 * test_metrics.c - the metrics table: every row reads a value, names are
 * unique, per-server rows form one run, and every counter of every module's
 * counters struct is shown by some row (a counter that is counted and never
 * shown fails here, as the gRPC reject counters once were).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "core.h"
#include "lease.h"
#include "listener.h"
#include "metrics.h"
#include "proto_grpc.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"
#include "trim.h"
#include "tls.h"

static int64_t
fake_clock_us(void)
{
	return INT64_C(1800000000000000);	/* 2027 */
}

struct rig {
	struct listener_counters	lc;
	struct conn_counters		cc;
	struct grpc_counters		gc;
	struct tls_counters		tc;
	struct core			core;
	struct tier			tier;
	struct snowflake		gen;
	struct lease			lease;
	struct source			src;
	struct statefile		sf;
	struct trim			trim;
	struct metrics_src		m;
	struct config			cfg;		/* the lease's settings (its lead) */
};

/* A counters struct (uint64_t only) under test, and the slots shown elsewhere. */
struct slab {
	const char	*what;
	uint64_t	*p;
	size_t		 n;
	uint64_t	 base;
};

#define SLAB(what, field, base)	{ what, (uint64_t *)(void *)&(field), \
	sizeof(field) / sizeof(uint64_t), base }

/* Marks every slot of a slab with its own value. */
static void
slab_fill(const struct slab *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->p[i] = s->base + i;
}

static uint64_t seen[512];
static size_t nseen;

/* Every numeric value of every row, both servers for per-server rows. */
static void
collect(const struct metrics_src *m)
{
	struct metric_value v;
	size_t i;
	int s;

	nseen = 0;
	for (i = 0; i < metrics_count; i++)
		for (s = 0; s < (metrics_table[i].scope == METRIC_PER_SERVER ? 2 : 1); s++) {
			metrics_value(m, i, s, &v);
			if (!v.is_text && nseen < sizeof(seen) / sizeof(seen[0]))
				seen[nseen++] = v.num;
		}
}

static bool
shown(uint64_t x)
{
	size_t i;

	for (i = 0; i < nseen; i++)
		if (seen[i] == x)
			return true;
	return false;
}

static void
rig_init(struct rig *r)
{
	struct snowflake_config sc = { 50, 1000 };

	memset(r, 0, sizeof(*r));
	pool_init(&r->tier.seq.pool);
	r->tier.srv[SERVER_ODD].name = "odd";
	r->tier.srv[SERVER_EVEN].name = "even";
	snowflake_init(&r->gen, &sc);
	r->cfg.fallback_reserve_ms = 100;
	r->lease.cfg = &r->cfg;
	source_init(&r->src, &r->tier, &r->gen, &r->lease, fake_clock_us, 50);
	r->m.listener = &r->lc;
	r->m.conns = &r->cc;
	r->m.grpc = &r->gc;
	r->m.tls = &r->tc;
	r->m.core = &r->core;
	r->m.source = &r->src;
	r->m.sf = &r->sf;
	r->m.trim = &r->trim;
}

/* Rows: a reader each, a unique name, per-server rows in one run. */
static void
test_rows(void **state)
{
	size_t i, j, runs = 0;

	(void)state;
	assert_true(metrics_count > 50);
	for (i = 0; i < metrics_count; i++) {
		assert_non_null(metrics_table[i].get);
		assert_non_null(metrics_table[i].help);
		/* Unique in its scope: the flat names of the other scopes are prefixed. */
		for (j = i + 1; j < metrics_count; j++)
			if (metrics_table[i].scope == metrics_table[j].scope)
				assert_string_not_equal(metrics_table[i].name, metrics_table[j].name);
		if (metrics_table[i].scope == METRIC_PER_SERVER &&
		    (i == 0 || metrics_table[i - 1].scope != METRIC_PER_SERVER))
			runs++;
	}
	assert_int_equal(runs, 1);
}

/*
 * Every counter slot of every module is shown by a row. The exceptions are
 * named: sums behind an average, a histogram /metrics exports by its own
 * code, core's count of requests without error (requests counts them all),
 * the generator's IDs (ids_fallback counts the same IDs as handed out), the
 * last TLS reload's failures (shown as tls_reload_clean), and
 * the certificates' notAfter, which /metrics exports by its own code (checked
 * there).
 */
static void
test_every_counter_shown(void **state)
{
	static struct rig r;
	size_t i, k;

	(void)state;
	rig_init(&r);
	{
		const struct slab slabs[] = {
			SLAB("listener", r.lc, 1000),
			SLAB("conn", r.cc, 2000),
			SLAB("grpc", r.gc, 3000),
			SLAB("tls", r.tc, 11000),
			SLAB("core", r.core.stats, 4000),
			SLAB("source", r.src.stats, 5000),
			SLAB("lease", r.lease.stats, 6000),
			SLAB("snowflake", r.gen.counters, 7000),
			SLAB("statefile", r.sf.stats, 8000),
			SLAB("odd ticket server", r.tier.srv[SERVER_ODD].stats, 9000),
			SLAB("even ticket server", r.tier.srv[SERVER_EVEN].stats, 10000),
		};
		const uint64_t *skip[] = {
			&r.core.stats.errors[CORE_OK],
			&r.gen.counters.ids,
			&r.tc.reload_failed_last,	/* shown as tls_reload_clean */
			&r.sf.stats.write_us_total,
			&r.tier.srv[SERVER_ODD].stats.fetch_us_total,
			&r.tier.srv[SERVER_EVEN].stats.fetch_us_total,
		};

		for (k = 0; k < sizeof(slabs) / sizeof(slabs[0]); k++)
			slab_fill(&slabs[k]);
		collect(&r.m);
		for (k = 0; k < sizeof(slabs) / sizeof(slabs[0]); k++)
			for (i = 0; i < slabs[k].n; i++) {
				const uint64_t *p = &slabs[k].p[i];
				const uint64_t *h0 = r.tier.srv[SERVER_ODD].stats.fetch_hist;
				const uint64_t *h1 = r.tier.srv[SERVER_EVEN].stats.fetch_hist;
				const uint64_t *na = (const uint64_t *)(const void *)r.tc.not_after;
				bool excused = (p >= h0 && p < h0 + TICKET_FETCH_BUCKETS + 1) ||
				    (p >= h1 && p < h1 + TICKET_FETCH_BUCKETS + 1) ||
				    (p >= na && p < na + TLS_WHERE_N);
				size_t j;

				for (j = 0; j < sizeof(skip) / sizeof(skip[0]); j++)
					excused |= p == skip[j];
				if (!excused && !shown(*p))
					fail_msg("%s counter #%zu (value %llu) is shown by no row",
					    slabs[k].what, i, (unsigned long long)*p);
			}
	}
	{
		size_t len;
		char *text = metrics_prometheus(&r.m, &len), want[128];

		assert_non_null(text);
		for (int w = 0; w < TLS_WHERE_N; w++) {
			snprintf(want, sizeof(want), "idgen_tls_cert_not_after_timestamp_seconds"
			    "{listener=\"%s\"} %lld\n", tls_where_name((enum tls_where)w),
			    (long long)r.tc.not_after[w]);
			if (strstr(text, want) == NULL)
				fail_msg("/metrics lacks %s", want);
		}
		free(text);
	}
}

/* A per-server row reads the server it is asked for. */
static void
test_per_server(void **state)
{
	static struct rig r;
	struct metric_value v;
	size_t i;

	(void)state;
	rig_init(&r);
	r.tier.srv[SERVER_ODD].stats.tickets = 11;
	r.tier.srv[SERVER_EVEN].stats.tickets = 22;
	for (i = 0; i < metrics_count && strcmp(metrics_table[i].name, "tickets") != 0; i++)
		;
	assert_true(i < metrics_count);
	metrics_value(&r.m, i, 0, &v);
	assert_true(v.num == 11);
	metrics_value(&r.m, i, 1, &v);
	assert_true(v.num == 22);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_every_counter_shown),
		cmocka_unit_test(test_per_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
