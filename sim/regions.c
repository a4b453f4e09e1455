/*
 * regions.c - more regions in the simulation (regions.h; docs/design.md
 * sections 12.3 and 14).
 */
#include "regions.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "disk.h"
#include "layout.h"
#include "lease.h"
#include "rng.h"
#include "server.h"
#include "simdb.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"
#include "vclock.h"

#define REGIONS_IDS	2	/* a region's idservers: one or two */
#define REGIONS_WHO	5000	/* region r's incarnations: 5000 + 1000 (r - 1) up */
#define REGIONS_TAKE	256
#define REGIONS_SEED	UINT64_C(0x726567696f6e73)	/* "regions": its stream's seed */
#define REGIONS_EVENTS	800	/* a schedule's events are fewer (idsim.c) */

struct region_ids {
	bool			on;
	unsigned		who;
	char			path[160];
	char			dir[64];
	struct statefile	sf;
	struct tier		t;
	struct snowflake	gen;
	struct lease		lease;
	struct source		src;
};

/* One region: its shape and B; but for region 0 (the driver's), its pair and idservers. */
struct region {
	unsigned		m;		/* its M: the tier's, another when wrong */
	unsigned		srv_m;		/* its servers' M: m, another when only they
						 * are wrong */
	unsigned		bits;		/* its region bits: 5, fewer when wrong */
	uint64_t		b;		/* its B: 2^20, another when wrong */
	struct tserver		srv[SERVER_PAIR];	/* offsets 2r+1 and 2r+2 */
	uint64_t		down_until[SERVER_PAIR];	/* virtual us; 0: up */
	bool			down0;		/* region 0's pair both down at the last look */
	struct region_ids	ids[REGIONS_IDS];
	unsigned		nids, next;
	struct config		cfg;
	struct event_base	*base;
};

enum regions_mode regions_mode;

static struct {
	bool			on;		/* this schedule has regions */
	enum regions_kind	kind;
	unsigned		n;		/* regions 0 .. n-1 */
	unsigned		bad;		/* the region set up wrong (b, m), or whose
						 * workers region 0 covers (r) */
	unsigned		split;		/* m: 0 the region's servers and idservers
						 * under another M, 1 its servers only, 2
						 * its servers' auto_increment_increment only */
	struct region		reg[REGIONS_MAX];
	struct tserver		*srv0;		/* region 0's pair (the driver's) */
	struct regions_io	io;
	uint64_t		ev;		/* their events, for the trace */
	bool			failed;		/* an idserver did not start again */
	/* The driver's generator and the own stream of regions 2 and 3. */
	struct rng_state	main, alt;
	struct rng_state	alt_ev[REGIONS_EVENTS], alt_run[REGIONS_EVENTS];
	/* The tier's hook is the driver's record of region 0: off in the others. */
	void			(*banked)(const struct tier *, const struct nsrv *, unsigned,
				    uint64_t, bool);
	uint64_t		schedules, kinds[REGIONS_KINDS], sizes[REGIONS_MAX + 1];
	bool			split_seen;	/* its refusal counted */
	uint64_t		splits, split_refused, split_ids;	/* m with split */
} R;

static const char *const regions_kind_names[REGIONS_KINDS] = {
	"the layout of every region", "region 1's servers under another B",
	"region 0 under fewer region bits", "a region under another M",
};

const char *
regions_mode_name(void)
{
	static const char *const names[] = { "some", "all", "none", "b", "r", "m" };

	return names[regions_mode];
}

/* Region k's code draws from the regions' own stream (k >= 2), or back. */
static void
regions_alt(unsigned k, bool in)
{
	if (k < 2)
		return;
	if (in) {
		rng_save(&R.main);
		rng_load(&R.alt);
	} else {
		rng_save(&R.alt);
		rng_load(&R.main);
	}
}

/* Region k's code runs with its shape, its servers, none of the driver's hooks. */
static void
regions_enter(unsigned k)
{
	(void)server_shape_set(R.reg[k].m, k, R.reg[k].bits);
	simdb_region(R.reg[k].srv, SERVER_PAIR);
	R.banked = tier_banked_hook;
	tier_banked_hook = NULL;
}

/* ... and back to region 0's (the driver's). */
static void
regions_leave(void)
{
	(void)server_shape_set(R.reg[0].m, 0, R.reg[0].bits);
	simdb_region(NULL, 0);
	tier_banked_hook = R.banked;
}

static int64_t regions_clock_ms(void) { return vclock_unix_us() / 1000; }
static int64_t regions_clock_us(void) { return vclock_unix_us(); }
static int regions_datasync(int fd) { (void)fd; return 0; }
static void regions_on_change(void *arg) { (void)arg; }

/* The owner rule's process table: the other regions' files are never resumed from. */
static bool
regions_running(uint64_t pid, uint64_t start)
{
	(void)pid;
	(void)start;
	return false;
}

static enum lease_trust
regions_trust(void *arg, int server)
{
	return source_trust(&((struct region_ids *)arg)->t, server);
}

/* A server's lease rows: two of its parity from worker lo up (tserver_init's are region 0's). */
static void
regions_workers(struct tserver *s, unsigned index, unsigned lo)
{
	for (unsigned k = 0; k < TSERVER_WORKERS; k++)
		s->st.lease[k].worker = lo + 2 * k + (index == SERVER_ODD ? 1 : 0);
}

static unsigned
regions_gcd(unsigned a, unsigned b)
{
	while (b != 0) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Whether region k under increment mk draws a ticket region j under m draws
 * too: t = a (mod mk) and t = c (mod m) have a common solution exactly when
 * a = c modulo gcd(mk, m).
 */
static bool
regions_overlap(unsigned k, unsigned mk, unsigned j, unsigned m)
{
	unsigned g = regions_gcd(mk, m);

	for (unsigned a = 2 * k + 1; a <= 2 * k + 2; a++)
		for (unsigned c = 2 * j + 1; c <= 2 * j + 2; c++)
			if (a % g == c % g)
				return true;
	return false;
}

/*
 * The mistake m: a region k set up under another even M (room for its pair)
 * whose tickets meet another region's; drawn among all such. Half the time
 * servers and idservers alike (12.3's residue); for a region of its own
 * idservers (k >= 1), the other half only its servers, their meta rows and
 * session increment or the increment alone (a my.cnf), which its idservers'
 * check of their own servers refuses (2.3).
 */
static void
regions_other_m(void)
{
	unsigned cand[REGIONS_MAX * 4][2], nc = 0, pick;

	for (unsigned k = 0; k < R.n; k++)
		for (unsigned mk = 2; mk <= 8; mk += 2) {
			bool meets = false;

			if (mk == R.reg[k].m || mk < 2 * k + 2)
				continue;
			for (unsigned j = 0; j < R.n; j++)
				meets = meets || (j != k && regions_overlap(k, mk, j, R.reg[j].m));
			if (meets) {
				cand[nc][0] = k;
				cand[nc++][1] = mk;
			}
		}
	pick = (unsigned)rng_draw_from(&R.alt, nc);
	R.bad = cand[pick][0];
	R.split = R.bad >= 1 && rng_draw_from(&R.alt, 1000) < 500 ?
	    1 + (unsigned)rng_draw_from(&R.alt, 2) : 0;
	R.reg[R.bad].srv_m = cand[pick][1];
	if (R.split == 0)
		R.reg[R.bad].m = cand[pick][1];
}

bool
regions_begin(uint64_t seed, bool pair, struct tserver *srv, unsigned n, uint64_t *b,
    const struct regions_io *io)
{
	unsigned bits0, m;
	uint64_t b_bad;
	char what[96];

	R.on = pair && regions_mode != REGIONS_NONE &&
	    (regions_mode != REGIONS_SOME || seed % 12 == 5);
	if (!R.on)
		return false;
	R.io = *io;
	R.srv0 = srv;
	R.kind = regions_mode == REGIONS_B ? REGIONS_BAD_B : regions_mode == REGIONS_R ?
	    REGIONS_BAD_R : regions_mode == REGIONS_M ? REGIONS_BAD_M : rng_permille(500) ?
	    REGIONS_OK : rng_permille(500) ? REGIONS_BAD_B : REGIONS_BAD_R;
	/*
	 * Region 0 under fewer bits owns workers 0 .. 2^(10-R) - 1, another
	 * region's among them; of the range its workers script provisions, the
	 * rows a claim can take twice are those: its two rows per server.
	 */
	bits0 = R.kind == REGIONS_BAD_R ? 1 + (unsigned)rng_below(4) : LAYOUT_REGION_BITS;
	b_bad = R.kind == REGIONS_BAD_B ? (rng_permille(500) ? LAYOUT_REGION_BLOCK / 2 :
	    LAYOUT_REGION_BLOCK * 2) : LAYOUT_REGION_BLOCK;
	/*
	 * The rest from the regions' own stream: how many regions, the tier's M
	 * (4 for two: the schedules they were; 6 or 8 for three, 8 for four),
	 * a third of the schedules set up right made a region of another M, and
	 * which region is wrong. Two regions draw from it nothing that region 1
	 * or the driver sees, so they are the schedules they were.
	 */
	rng_seed_state(&R.alt, seed ^ REGIONS_SEED);
	R.n = 2 + (unsigned)rng_draw_from(&R.alt, REGIONS_MAX - 1);
	m = R.n == 2 ? 4 : R.n == 3 && rng_draw_from(&R.alt, 1000) < 500 ? 6 : 8;
	if (R.kind == REGIONS_OK && rng_draw_from(&R.alt, 1000) < 333)
		R.kind = REGIONS_BAD_M;
	for (unsigned k = 0; k < R.n; k++) {
		R.reg[k].m = m;
		R.reg[k].srv_m = m;
		R.reg[k].bits = LAYOUT_REGION_BITS;
		R.reg[k].b = LAYOUT_REGION_BLOCK;
	}
	R.reg[0].bits = bits0;
	R.bad = 1;
	R.split = 0;
	if (R.kind == REGIONS_BAD_B) {
		R.bad = 1 + (unsigned)rng_draw_from(&R.alt, R.n - 1);
		R.reg[R.bad].b = b_bad;
	} else if (R.kind == REGIONS_BAD_R) {
		unsigned covered = 0;

		/* The regions whose worker rows lie inside region 0's range. */
		for (unsigned k = 1; k < R.n; k++)
			covered += (k + 1) << (10 - LAYOUT_REGION_BITS) <= 1u << (10 - bits0);
		R.bad = 1 + (unsigned)rng_draw_from(&R.alt, covered);
	} else if (R.kind == REGIONS_BAD_M) {
		regions_other_m();
	}
	*b = LAYOUT_REGION_BLOCK;
	R.schedules++;
	R.kinds[R.kind]++;
	R.sizes[R.n]++;
	R.splits += R.split != 0;
	R.split_seen = false;
	R.ev = 0;
	R.failed = false;
	for (unsigned k = 1; k < R.n; k++) {
		struct region *g = &R.reg[k];

		g->nids = 0;
		g->next = 0;
		g->base = NULL;
		g->down0 = false;
		memset(g->down_until, 0, sizeof(g->down_until));
		regions_enter(k);
		(void)server_shape_set(g->srv_m, k, LAYOUT_REGION_BITS);	/* its servers' */
		for (unsigned j = 0; j < SERVER_PAIR; j++) {
			tserver_init(&g->srv[j], j, g->b);
			if (R.split == 2)
				g->srv[j].st.meta_m = g->m;
			g->srv[j].now_ms = srv[0].now_ms;
			g->srv[j].region = k;
			g->srv[j].region_bits = LAYOUT_REGION_BITS;
			regions_workers(&g->srv[j], j, k << (10 - LAYOUT_REGION_BITS));
		}
		regions_leave();
	}
	for (unsigned k = 0; k < n; k++) {
		uint64_t (*now)(void) = srv[k].now_ms;

		tserver_init(&srv[k], k, *b);
		srv[k].now_ms = now;
		srv[k].region_bits = bits0;
		if (R.kind == REGIONS_BAD_R)
			regions_workers(&srv[k], k, R.bad << (10 - LAYOUT_REGION_BITS));
	}
	if (R.n == 2 && R.kind != REGIONS_BAD_M) {
		/* The line two regions had before M could differ: their traces stay. */
		R.io.trace("regions: region 0 (offsets 1, 2; R=%u, B=%" PRIu64 ") and region 1 "
		    "(offsets 3, 4; R=%u, B=%" PRIu64 "), M=%u: %s", bits0, *b, LAYOUT_REGION_BITS,
		    R.reg[1].b, m, regions_kind_names[R.kind]);
		return true;
	}
	if (R.kind == REGIONS_OK)
		snprintf(what, sizeof(what), "%s", regions_kind_names[REGIONS_OK]);
	else
		snprintf(what, sizeof(what), R.kind == REGIONS_BAD_B ? "region %u's servers under "
		    "another B" : R.kind == REGIONS_BAD_R ? "region 0 under fewer region bits, its "
		    "worker rows region %u's" : R.split == 0 ? "region %u under another M" :
		    R.split == 1 ? "region %u's servers under another M than its idservers'" :
		    "region %u's servers' auto_increment_increment another M", R.bad);
	/* A trace line holds 160 characters: one line each. */
	R.io.trace("regions: %u regions of pairs, the tier's M=%u: %s", R.n, m, what);
	for (unsigned k = 0; k < R.n; k++) {
		char srv_m[32] = "";

		if (R.reg[k].srv_m != R.reg[k].m)
			snprintf(srv_m, sizeof(srv_m), ", its servers' M=%u", R.reg[k].srv_m);
		R.io.trace("regions: region %u (offsets %u, %u): M=%u, R=%u, B=%" PRIu64 "%s", k,
		    2 * k + 1, 2 * k + 2, R.reg[k].m, R.reg[k].bits, R.reg[k].b, srv_m);
	}
	return true;
}

bool
regions_active(void)
{
	return R.on;
}

/*
 * Starts region k's idserver d as the driver starts one: on its state file
 * (its lease resumed when lease_resume says so) or without one.
 */
static bool
regions_ids_start(unsigned k, struct region_ids *d, unsigned slot, const char *dir, bool file)
{
	struct region *g = &R.reg[k];
	struct snowflake_config sc = { g->cfg.backstep_tolerance_ms, g->cfg.clock_wait_ms };
	char err[256], why[512], servers[64];

	d->who = REGIONS_WHO + 1000 * (k - 1) + g->next++;
	if (dir != d->dir)
		snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(d->path, sizeof(d->path), "%s/region%u-%u", dir, k, slot);
	if (!file)
		unlink(d->path);
	if (!statefile_open(&d->sf, d->path, err, sizeof(err))) {
		printf("idsim: state file %s: %s\n", d->path, err);
		return false;
	}
	d->sf.datasync = regions_datasync;
	d->sf.pwrite = disk_pwrite;	/* a write moves the file's ctime (disk.h) */
	disk_fd(d->sf.fd, &d->sf.dev, &d->sf.ino);
	d->sf.running = regions_running;
	d->sf.me.pid = 100000 + d->who;
	d->sf.me.start = d->who;
	snprintf(d->sf.rec.host, sizeof(d->sf.rec.host), "region%u-%u", k, slot);
	simdb_owner(d->who);
	if (!tier_init(&d->t, g->base, &g->cfg, &d->sf, &simdb_ops, regions_on_change, d)) {
		statefile_close(&d->sf);
		return false;
	}
	snowflake_init(&d->gen, &sc);
	if (!lease_init(&d->lease, g->base, &g->cfg, &d->gen, &d->sf, &simdb_ops, regions_clock_ms,
	    regions_on_change, regions_trust, d)) {
		tier_free(&d->t);
		statefile_close(&d->sf);
		return false;
	}
	d->lease.home = (unsigned)rng_below(SERVER_PAIR);
	/* A holder of one length wherever the simulation runs (idsim.c's sim_ids_start). */
	snprintf(d->lease.holder, sizeof(d->lease.holder), "sim:%u:%016" PRIx64 ":%s",
	    100000 + d->who, rng_mix(100000 + d->who), LEASE_KIND_IDSERVER);
	snprintf(servers, sizeof(servers), "127.0.0.1:%u,127.0.0.1:%u", g->cfg.odd_port,
	    g->cfg.even_port);
	if (!lease_resume(&d->lease, servers, why, sizeof(why)))
		d->sf.rec.lease.held = false;
	snprintf(d->sf.rec.servers, sizeof(d->sf.rec.servers), "%s", servers);
	d->sf.rec.owner = d->sf.me;
	if (!statefile_save(&d->sf)) {
		lease_free(&d->lease);
		tier_free(&d->t);
		statefile_close(&d->sf);
		return false;
	}
	source_init(&d->src, &d->t, &d->gen, &d->lease, regions_clock_us, g->cfg.refill_wait_ms);
	d->on = true;
	tier_start(&d->t);
	lease_start(&d->lease);
	return true;
}

/* A crash: nothing more is written anywhere. */
static void
regions_ids_stop(struct region_ids *d)
{
	if (!d->on)
		return;
	lease_free(&d->lease);
	tier_free(&d->t);
	statefile_close(&d->sf);
	d->on = false;
}

/* Region k's idservers, one or two, on a loop of their own. */
static bool
regions_start_one(unsigned k, const struct config *cfg, const char *dir)
{
	struct region *g = &R.reg[k];
	bool ok = true;

	/*
	 * A region's idservers have region 0's settings but their servers'; the
	 * block size is "the servers'" (0) when their B is wrong (a config
	 * naming 2^20 would refuse them as it starts, 12.3), else either.
	 */
	g->cfg = *cfg;
	g->cfg.tier_increment = g->m;
	g->cfg.region = k;
	g->cfg.region_bits = LAYOUT_REGION_BITS;
	g->cfg.odd_port = 3307 + 10 * k;
	g->cfg.even_port = 3308 + 10 * k;
	g->cfg.block_size = g->b != LAYOUT_REGION_BLOCK || rng_permille(500) ? 0 :
	    (unsigned)LAYOUT_REGION_BLOCK;
	g->base = vclock_base_new();
	if (g->base == NULL)
		return false;
	g->nids = 1 + (unsigned)rng_below(REGIONS_IDS);
	regions_enter(k);
	for (unsigned j = 0; j < g->nids; j++)
		ok = ok && regions_ids_start(k, &g->ids[j], j, dir, false);
	regions_leave();
	return ok;
}

bool
regions_start(const struct config *cfg, const char *dir)
{
	bool ok = true;

	for (unsigned k = 1; k < R.n && ok; k++) {
		regions_alt(k, true);
		ok = regions_start_one(k, cfg, dir);
		regions_alt(k, false);
	}
	return ok;
}

/*
 * The refusal of the servers of a region whose idservers another M set up
 * (m, split): traced and counted once, at a take or at the end; none when no
 * server of it was reached.
 */
static void
regions_split_seen(void)
{
	struct region *g = &R.reg[R.bad];

	for (unsigned j = 0; j < g->nids && !R.split_seen; j++)
		for (unsigned i = 0; i < SERVER_PAIR && !R.split_seen; i++) {
			const char *why = g->ids[j].t.srv[i].logged_refusal;

			if (!g->ids[j].on || (strstr(why, "tier_increment") == NULL &&
			    strstr(why, "auto_increment_increment") == NULL))
				continue;
			R.io.trace("regions: region %u's idservers refused its servers: %s", R.bad,
			    why);
			R.split_refused++;
			R.split_seen = true;
		}
}

/* A taker of region k: IDs or a block, through source.c, recorded beside the others'. */
static int
regions_take(unsigned k)
{
	struct region *g = &R.reg[k];
	struct region_ids *d = &g->ids[rng_below(g->nids)];
	uint64_t out[REGIONS_TAKE], first = 0;
	unsigned n, wait_us = 0;
	bool may_fallback = rng_permille(300), block = rng_permille(700);
	const char *why = "";
	enum source_status st;
	int r = 0;

	if (!d->on)
		return 0;
	n = 1 + (unsigned)rng_below(block ? SNOWFLAKE_TAKE_MAX : REGIONS_TAKE);
	regions_enter(k);
	st = source_take(&d->src, NULL, block, n, block ? &first : out, may_fallback, &wait_us,
	    &why);
	regions_leave();
	if (R.split != 0 && k == R.bad)
		regions_split_seen();
	if (st != SOURCE_OK) {
		R.io.trace("r%" PRIu64 " i%u %s %u: none (%d)", R.ev, d->who, block ? "block" : "ids",
		    n, (int)st);
		return 0;
	}
	/* A region whose servers its idservers refuse hands out no ticket ID (counted). */
	if (R.split != 0 && k == R.bad && (block ? first : out[0]) < (UINT64_C(1) << 53))
		R.split_ids += n;
	if (block) {
		R.io.trace("r%" PRIu64 " i%u block %u: %" PRIu64, R.ev, d->who, n, first);
		return R.io.record(d->who, first, first + n);
	}
	R.io.trace("r%" PRIu64 " i%u ids %u: %" PRIu64 "..%" PRIu64, R.ev, d->who, n, out[0],
	    out[n - 1]);
	for (unsigned j = 0, start = 0; j < n && r == 0; j++)
		if (j + 1 == n || out[j + 1] != out[j] + 1) {
			r = R.io.record(d->who, out[start], out[j] + 1);
			start = j + 1;
		}
	return r;
}

/*
 * An idserver of region k crashed and started again, on its file (its lease
 * resumed, its blocks gone: while its servers are down it falls back) or
 * without one.
 */
static void
regions_restart(unsigned k)
{
	struct region *g = &R.reg[k];
	unsigned slot = (unsigned)rng_below(g->nids);
	struct region_ids *d = &g->ids[slot];
	bool file = rng_permille(700);

	if (!d->on)
		return;
	R.io.trace("r%" PRIu64 " i%u crashed, restarts %s", R.ev, d->who, file ? "on its file" :
	    "without a file");
	regions_enter(k);
	regions_ids_stop(d);
	if (!regions_ids_start(k, d, slot, d->dir, file))
		R.failed = true;
	regions_leave();
}

/* A server of region k down for a while (both: its idservers fall back), or crashed. */
static void
regions_fault(unsigned k)
{
	struct region *g = &R.reg[k];
	unsigned what = (unsigned)rng_below(6), srv = (unsigned)rng_below(SERVER_PAIR);

	if (what == 5) {
		regions_restart(k);
		return;
	}

	what = what < 2 ? 0 : what < 4 ? 1 : 2;
	if (what == 2 && (!g->srv[0].up || !g->srv[1].up))
		return;

	regions_enter(k);
	for (unsigned j = 0; j < SERVER_PAIR; j++) {
		if (what == 0 ? j != srv : what == 1 ? j != srv || !g->srv[j].up : false)
			continue;
		if (what > 0) {
			g->srv[j].up = false;
			g->down_until[j] = vclock_now_us() + (what == 1 ? 20000 + rng_below(2000000) :
			    200000 + rng_below(4000000));
		}
		simdb_crash(j);
	}
	regions_leave();
	R.io.trace("r%" PRIu64 " region %u: %s", R.ev, k, what == 0 ? (srv == 0 ? "odd crash" :
	    "even crash") : what == 1 ? (srv == 0 ? "odd down" : "even down") : "both servers down");
}

int
regions_event(void)
{
	unsigned k = 1;
	int r = 0;

	/* Which region: from the own stream, so that two regions draw as they did. */
	if (R.n > 2)
		k = 1 + (unsigned)rng_draw_from(&R.alt, R.n - 1);
	regions_alt(k, true);
	R.ev++;
	if (rng_permille(950))
		r = regions_take(k);
	else
		regions_fault(k);
	regions_alt(k, false);
	return r != 0 ? r : R.failed ? 3 : 0;
}

/* Region k's servers back up, region 0's outage reaching it, its loop run when due. */
static int64_t
regions_run_one(unsigned k)
{
	struct region *g = &R.reg[k];
	int64_t mine;

	for (unsigned j = 0; j < SERVER_PAIR; j++)
		if (g->down_until[j] != 0 && vclock_now_us() >= g->down_until[j]) {
			g->down_until[j] = 0;
			g->srv[j].up = true;
			R.io.trace("r%" PRIu64 " region %u: %s up", R.ev, k, j == 0 ? "odd" : "even");
		}
	/*
	 * Half the outages of region 0's whole pair reach region k's too (a
	 * network or power both share): the regions fall back at once.
	 */
	if (!R.srv0[0].up && !R.srv0[1].up && !g->down0 && rng_permille(500)) {
		regions_enter(k);
		for (unsigned j = 0; j < SERVER_PAIR; j++) {
			g->srv[j].up = false;
			g->down_until[j] = vclock_now_us() + 200000 + rng_below(4000000);
			simdb_crash(j);
		}
		regions_leave();
		R.io.trace("r%" PRIu64 " region %u: both servers down with region 0's", R.ev, k);
	}
	g->down0 = !R.srv0[0].up && !R.srv0[1].up;
	mine = vclock_next_due(g->base);
	if (mine <= vclock_unix_us()) {
		regions_enter(k);
		event_base_loop(g->base, EVLOOP_NONBLOCK);
		regions_leave();
		mine = vclock_next_due(g->base);
	}
	return mine;
}

int64_t
regions_run(int64_t due)
{
	if (!R.on)
		return due;
	for (unsigned k = 1; k < R.n; k++) {
		int64_t mine;

		if (R.reg[k].base == NULL)
			continue;
		regions_alt(k, true);
		mine = regions_run_one(k);
		regions_alt(k, false);
		due = mine < due ? mine : due;
	}
	return due;
}

void
regions_stream_at(unsigned ev, bool run, bool replay)
{
	struct rng_state *at = run ? R.alt_run : R.alt_ev;

	if (!R.on || R.n <= 2 || ev >= REGIONS_EVENTS)
		return;
	if (replay)
		R.alt = at[ev];
	else
		at[ev] = R.alt;
}

/* The region of an idserver of the driver (0) or of regions.c. */
static unsigned
regions_of(unsigned who)
{
	return who < REGIONS_WHO ? 0 : 1 + (who - REGIONS_WHO) / 1000;
}

/* Whether region k's pair draws ticket t, under its own M. */
static bool
regions_draws(unsigned k, uint64_t t)
{
	unsigned m = R.reg[k].m;

	return t % m == (2 * k + 1) % m || t % m == (2 * k + 2) % m;
}

bool
regions_residue(unsigned who_a, unsigned who_b, uint64_t t)
{
	unsigned a = regions_of(who_a), b = regions_of(who_b);

	if (!R.on || R.kind != REGIONS_BAD_M || a >= R.n || b >= R.n || a == b ||
	    R.reg[a].m == R.reg[b].m)
		return false;
	return regions_draws(a, t) && regions_draws(b, t);
}

void
regions_end(void)
{
	if (!R.on)
		return;
	if (R.split != 0)
		regions_split_seen();
	for (unsigned k = 1; k < R.n; k++) {
		struct region *g = &R.reg[k];

		regions_alt(k, true);
		regions_enter(k);
		for (unsigned j = 0; j < g->nids; j++) {
			char p[200];

			regions_ids_stop(&g->ids[j]);
			unlink(g->ids[j].path);
			snprintf(p, sizeof(p), "%s.tmp", g->ids[j].path);
			unlink(p);
			snprintf(p, sizeof(p), "%s.corrupt", g->ids[j].path);
			unlink(p);
		}
		regions_leave();
		regions_alt(k, false);
		if (g->base != NULL)
			event_base_free(g->base);
		g->base = NULL;
	}
	R.on = false;
}

void
regions_tally(uint64_t *t, bool put_back)
{
	if (!put_back) {
		t[0] = R.schedules;
		memcpy(t + 1, R.kinds, sizeof(R.kinds));
		memcpy(t + 1 + REGIONS_KINDS, R.sizes, sizeof(R.sizes));
		t[REGIONS_TALLY - 3] = R.splits;
		t[REGIONS_TALLY - 2] = R.split_refused;
		t[REGIONS_TALLY - 1] = R.split_ids;
		return;
	}
	R.schedules = t[0];
	memcpy(R.kinds, t + 1, sizeof(R.kinds));
	memcpy(R.sizes, t + 1 + REGIONS_KINDS, sizeof(R.sizes));
	R.splits = t[REGIONS_TALLY - 3];
	R.split_refused = t[REGIONS_TALLY - 2];
	R.split_ids = t[REGIONS_TALLY - 1];
}

void
regions_report(void)
{
	printf("regions: %" PRIu64 " schedules of regions (%" PRIu64 " of two, %" PRIu64 " of "
	    "three, %" PRIu64 " of four; %" PRIu64 " with a region's servers under another B, %"
	    PRIu64 " with %s, %" PRIu64 " with %s: %" PRIu64 " of them only its servers, refused "
	    "in %" PRIu64 ", %" PRIu64 " ticket IDs served from them)\n", R.schedules, R.sizes[2],
	    R.sizes[3], R.sizes[4], R.kinds[REGIONS_BAD_B], R.kinds[REGIONS_BAD_R],
	    regions_kind_names[REGIONS_BAD_R], R.kinds[REGIONS_BAD_M],
	    regions_kind_names[REGIONS_BAD_M], R.splits, R.split_refused, R.split_ids);
}
