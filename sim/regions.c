/*
 * regions.c - a second region in the simulation (regions.h; docs/design.md
 * sections 12.3 and 14).
 */
#include "regions.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

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

#define REGIONS_IDS	2	/* region 1's idservers: one or two */
#define REGIONS_WHO	5000	/* their incarnation numbers: none of the driver's */
#define REGIONS_M	4	/* two regions of pairs: offsets 1, 2 and 3, 4 */
#define REGIONS_TAKE	256

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

enum regions_mode regions_mode;

static struct {
	bool			on;		/* this schedule has two regions */
	enum regions_kind	kind;
	unsigned		bits0;		/* region 0's region bits: 5, fewer when wrong */
	uint64_t		b1;		/* region 1's B: 2^20, another when wrong */
	struct tserver		srv[SERVER_PAIR];	/* region 1's pair, offsets 3 and 4 */
	struct tserver		*srv0;		/* region 0's pair (the driver's) */
	bool			down0;		/* ... both down at the last look */
	uint64_t		down_until[SERVER_PAIR];	/* virtual us; 0: up */
	struct region_ids	ids[REGIONS_IDS];
	unsigned		nids, next;
	struct config		cfg;
	struct event_base	*base;
	struct regions_io	io;
	uint64_t		ev;		/* its events, for the trace */
	bool			failed;		/* an idserver did not start again */
	/* The tier's hooks are the driver's records of region 0: off in region 1. */
	void			(*banked)(const struct tier *, const struct nsrv *, unsigned,
				    uint64_t, bool);
	uint64_t		schedules, kinds[REGIONS_KINDS];	/* all schedules */
} R;

static const char *const regions_kind_names[REGIONS_KINDS] = {
	"the layout of every region", "region 1's servers under another B",
	"region 0 under fewer region bits",
};

/* Region 1's code runs with its shape, its servers, none of the driver's hooks. */
static void
regions_enter(void)
{
	(void)server_shape_set(REGIONS_M, 1, LAYOUT_REGION_BITS);
	simdb_region(R.srv, SERVER_PAIR);
	R.banked = tier_banked_hook;
	tier_banked_hook = NULL;
}

/* ... and back to region 0's (the driver's). */
static void
regions_leave(void)
{
	(void)server_shape_set(REGIONS_M, 0, R.bits0);
	simdb_region(NULL, 0);
	tier_banked_hook = R.banked;
}

static int64_t regions_clock_ms(void) { return vclock_unix_us() / 1000; }
static int64_t regions_clock_us(void) { return vclock_unix_us(); }
static int regions_datasync(int fd) { (void)fd; return 0; }
static void regions_on_change(void *arg) { (void)arg; }

/* The owner rule's process table: region 1's files are never resumed from. */
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

bool
regions_begin(uint64_t seed, bool pair, struct tserver *srv, unsigned n, uint64_t *b,
    const struct regions_io *io)
{
	R.on = pair && (regions_mode == REGIONS_ALL || regions_mode == REGIONS_B ||
	    regions_mode == REGIONS_R || (regions_mode == REGIONS_SOME && seed % 12 == 5));
	if (!R.on)
		return false;
	R.io = *io;
	R.srv0 = srv;
	R.down0 = false;
	R.kind = regions_mode == REGIONS_B ? REGIONS_BAD_B : regions_mode == REGIONS_R ?
	    REGIONS_BAD_R : rng_permille(500) ? REGIONS_OK : rng_permille(500) ? REGIONS_BAD_B :
	    REGIONS_BAD_R;
	/*
	 * Region 0 under fewer bits owns workers 0 .. 2^(10-R) - 1, region 1's
	 * 32 .. 63 among them; of the range its workers script provisions, the
	 * rows a claim can take twice are those: its two rows per server.
	 */
	R.bits0 = R.kind == REGIONS_BAD_R ? 1 + (unsigned)rng_below(4) : LAYOUT_REGION_BITS;
	R.b1 = R.kind == REGIONS_BAD_B ? (rng_permille(500) ? LAYOUT_REGION_BLOCK / 2 :
	    LAYOUT_REGION_BLOCK * 2) : LAYOUT_REGION_BLOCK;
	*b = LAYOUT_REGION_BLOCK;
	R.schedules++;
	R.kinds[R.kind]++;
	R.ev = 0;
	R.nids = 0;
	R.next = 0;
	R.failed = false;
	R.base = NULL;
	memset(R.down_until, 0, sizeof(R.down_until));
	regions_enter();
	for (unsigned k = 0; k < SERVER_PAIR; k++) {
		tserver_init(&R.srv[k], k, R.b1);
		R.srv[k].now_ms = srv[0].now_ms;
		R.srv[k].region = 1;
		R.srv[k].region_bits = LAYOUT_REGION_BITS;
		regions_workers(&R.srv[k], k, 1u << (10 - LAYOUT_REGION_BITS));
	}
	regions_leave();
	for (unsigned k = 0; k < n; k++) {
		uint64_t (*now)(void) = srv[k].now_ms;

		tserver_init(&srv[k], k, *b);
		srv[k].now_ms = now;
		srv[k].region_bits = R.bits0;
		if (R.kind == REGIONS_BAD_R)
			regions_workers(&srv[k], k, 1u << (10 - LAYOUT_REGION_BITS));
	}
	R.io.trace("regions: region 0 (offsets 1, 2; R=%u, B=%" PRIu64 ") and region 1 (offsets "
	    "3, 4; R=%u, B=%" PRIu64 "), M=%u: %s", R.bits0, *b, LAYOUT_REGION_BITS, R.b1,
	    REGIONS_M, regions_kind_names[R.kind]);
	return true;
}

bool
regions_active(void)
{
	return R.on;
}

/*
 * Starts region 1's idserver d as the driver starts one: on its state file
 * (its lease resumed when lease_resume says so) or without one.
 */
static bool
regions_ids_start(struct region_ids *d, unsigned slot, const char *dir, bool file)
{
	struct snowflake_config sc = { R.cfg.backstep_tolerance_ms, R.cfg.clock_wait_ms };
	char err[256], why[512];

	d->who = REGIONS_WHO + R.next++;
	if (dir != d->dir)
		snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(d->path, sizeof(d->path), "%s/region1-%u", dir, slot);
	if (!file)
		unlink(d->path);
	if (!statefile_open(&d->sf, d->path, err, sizeof(err))) {
		printf("idsim: state file %s: %s\n", d->path, err);
		return false;
	}
	d->sf.datasync = regions_datasync;
	d->sf.running = regions_running;
	d->sf.me.pid = 100000 + d->who;
	d->sf.me.start = d->who;
	snprintf(d->sf.rec.host, sizeof(d->sf.rec.host), "region1-%u", slot);
	simdb_owner(d->who);
	if (!tier_init(&d->t, R.base, &R.cfg, &d->sf, &simdb_ops, regions_on_change, d)) {
		statefile_close(&d->sf);
		return false;
	}
	snowflake_init(&d->gen, &sc);
	if (!lease_init(&d->lease, R.base, &R.cfg, &d->gen, &d->sf, &simdb_ops, regions_clock_ms,
	    regions_on_change, regions_trust, d)) {
		tier_free(&d->t);
		statefile_close(&d->sf);
		return false;
	}
	d->lease.home = (unsigned)rng_below(SERVER_PAIR);
	if (!lease_resume(&d->lease, "127.0.0.1:3317,127.0.0.1:3318", why, sizeof(why)))
		d->sf.rec.lease.held = false;
	snprintf(d->sf.rec.servers, sizeof(d->sf.rec.servers), "127.0.0.1:3317,127.0.0.1:3318");
	d->sf.rec.owner = d->sf.me;
	if (!statefile_save(&d->sf)) {
		lease_free(&d->lease);
		tier_free(&d->t);
		statefile_close(&d->sf);
		return false;
	}
	source_init(&d->src, &d->t, &d->gen, &d->lease, regions_clock_us, R.cfg.refill_wait_ms);
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

bool
regions_start(const struct config *cfg, const char *dir)
{
	bool ok = true;

	/*
	 * Region 1's idservers have region 0's settings but their servers'; the
	 * block size is "the servers'" (0) when their B is wrong (a config
	 * naming 2^20 would refuse them as it starts, 12.3), else either.
	 */
	R.cfg = *cfg;
	R.cfg.region = 1;
	R.cfg.region_bits = LAYOUT_REGION_BITS;
	R.cfg.odd_port = 3317;
	R.cfg.even_port = 3318;
	R.cfg.block_size = R.kind == REGIONS_BAD_B || rng_permille(500) ? 0 :
	    (unsigned)LAYOUT_REGION_BLOCK;
	R.base = event_base_new();
	if (R.base == NULL)
		return false;
	R.nids = 1 + (unsigned)rng_below(REGIONS_IDS);
	regions_enter();
	for (unsigned k = 0; k < R.nids; k++)
		ok = ok && regions_ids_start(&R.ids[k], k, dir, false);
	regions_leave();
	return ok;
}

/* A taker of region 1: IDs or a block, through source.c, recorded beside region 0's. */
static int
regions_take(void)
{
	struct region_ids *d = &R.ids[rng_below(R.nids)];
	uint64_t out[REGIONS_TAKE], first = 0;
	unsigned n, wait_us = 0;
	bool may_fallback = rng_permille(300), block = rng_permille(700);
	const char *why = "";
	enum source_status st;
	int r = 0;

	if (!d->on)
		return 0;
	n = 1 + (unsigned)rng_below(block ? SNOWFLAKE_TAKE_MAX : REGIONS_TAKE);
	regions_enter();
	st = source_take(&d->src, NULL, block, n, block ? &first : out, may_fallback, &wait_us,
	    &why);
	regions_leave();
	if (st != SOURCE_OK) {
		R.io.trace("r%" PRIu64 " i%u %s %u: none (%d)", R.ev, d->who, block ? "block" : "ids",
		    n, (int)st);
		return 0;
	}
	if (block) {
		R.io.trace("r%" PRIu64 " i%u block %u: %" PRIu64, R.ev, d->who, n, first);
		return R.io.record(d->who, first, first + n);
	}
	R.io.trace("r%" PRIu64 " i%u ids %u: %" PRIu64 "..%" PRIu64, R.ev, d->who, n, out[0],
	    out[n - 1]);
	for (unsigned k = 0, start = 0; k < n && r == 0; k++)
		if (k + 1 == n || out[k + 1] != out[k] + 1) {
			r = R.io.record(d->who, out[start], out[k] + 1);
			start = k + 1;
		}
	return r;
}

/*
 * An idserver of region 1 crashed and started again, on its file (its lease
 * resumed, its blocks gone: while its servers are down it falls back) or
 * without one.
 */
static void
regions_restart(void)
{
	unsigned slot = (unsigned)rng_below(R.nids);
	struct region_ids *d = &R.ids[slot];
	bool file = rng_permille(700);

	if (!d->on)
		return;
	R.io.trace("r%" PRIu64 " i%u crashed, restarts %s", R.ev, d->who, file ? "on its file" :
	    "without a file");
	regions_enter();
	regions_ids_stop(d);
	if (!regions_ids_start(d, slot, d->dir, file))
		R.failed = true;
	regions_leave();
}

/* A server of region 1 down for a while (both: its idservers fall back), or crashed. */
static void
regions_fault(void)
{
	unsigned what = (unsigned)rng_below(6), srv = (unsigned)rng_below(SERVER_PAIR);

	if (what == 5) {
		regions_restart();
		return;
	}

	what = what < 2 ? 0 : what < 4 ? 1 : 2;
	if (what == 2 && (!R.srv[0].up || !R.srv[1].up))
		return;

	regions_enter();
	for (unsigned k = 0; k < SERVER_PAIR; k++) {
		if (what == 0 ? k != srv : what == 1 ? k != srv || !R.srv[k].up : false)
			continue;
		if (what > 0) {
			R.srv[k].up = false;
			R.down_until[k] = vclock_now_us() + (what == 1 ? 20000 + rng_below(2000000) :
			    200000 + rng_below(4000000));
		}
		simdb_crash(k);
	}
	regions_leave();
	R.io.trace("r%" PRIu64 " region 1: %s", R.ev, what == 0 ? (srv == 0 ? "odd crash" :
	    "even crash") : what == 1 ? (srv == 0 ? "odd down" : "even down") : "both servers down");
}

int
regions_event(void)
{
	R.ev++;
	if (rng_permille(950))
		return regions_take();
	regions_fault();
	return R.failed ? 3 : 0;
}

/* A timer of the loop (sim_due_cb's rule): its deadline, or now when it cannot be foreseen. */
static int
regions_due_cb(const struct event_base *base, const struct event *ev, void *arg)
{
	int64_t *due = arg;
	struct timeval tv;

	(void)base;
	if (event_get_fd(ev) >= 0 || (event_get_events(ev) & EV_SIGNAL) != 0 ||
	    event_pending(ev, EV_READ | EV_WRITE | EV_SIGNAL, NULL) != 0) {
		*due = INT64_MIN;
		return 1;
	}
	if (event_pending(ev, EV_TIMEOUT, &tv) != 0) {
		int64_t at = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;

		if (at < *due)
			*due = at;
	}
	return 0;
}

static int64_t
regions_next_due(void)
{
	int64_t due = INT64_MAX;

	if (event_base_get_num_events(R.base, EVENT_BASE_COUNT_ACTIVE) > 0)
		return INT64_MIN;
	(void)event_base_foreach_event(R.base, regions_due_cb, &due);
	return due;
}

int64_t
regions_run(int64_t due)
{
	int64_t mine;

	if (!R.on || R.base == NULL)
		return due;
	for (unsigned k = 0; k < SERVER_PAIR; k++)
		if (R.down_until[k] != 0 && vclock_now_us() >= R.down_until[k]) {
			R.down_until[k] = 0;
			R.srv[k].up = true;
			R.io.trace("r%" PRIu64 " region 1: %s up", R.ev, k == 0 ? "odd" : "even");
		}
	/*
	 * Half the outages of region 0's whole pair reach region 1's too (a
	 * network or power both share): the regions fall back at once.
	 */
	if (!R.srv0[0].up && !R.srv0[1].up && !R.down0 && rng_permille(500)) {
		regions_enter();
		for (unsigned k = 0; k < SERVER_PAIR; k++) {
			R.srv[k].up = false;
			R.down_until[k] = vclock_now_us() + 200000 + rng_below(4000000);
			simdb_crash(k);
		}
		regions_leave();
		R.io.trace("r%" PRIu64 " region 1: both servers down with region 0's", R.ev);
	}
	R.down0 = !R.srv0[0].up && !R.srv0[1].up;
	mine = regions_next_due();
	if (mine <= vclock_unix_us()) {
		regions_enter();
		event_base_loop(R.base, EVLOOP_NONBLOCK);
		regions_leave();
		mine = regions_next_due();
	}
	return mine < due ? mine : due;
}

void
regions_end(void)
{
	if (!R.on)
		return;
	regions_enter();
	for (unsigned k = 0; k < R.nids; k++) {
		char p[200];

		regions_ids_stop(&R.ids[k]);
		unlink(R.ids[k].path);
		snprintf(p, sizeof(p), "%s.tmp", R.ids[k].path);
		unlink(p);
		snprintf(p, sizeof(p), "%s.corrupt", R.ids[k].path);
		unlink(p);
	}
	regions_leave();
	if (R.base != NULL)
		event_base_free(R.base);
	R.base = NULL;
	R.on = false;
}

void
regions_tally(uint64_t *t, bool put_back)
{
	if (!put_back) {
		t[0] = R.schedules;
		memcpy(t + 1, R.kinds, sizeof(R.kinds));
		return;
	}
	R.schedules = t[0];
	memcpy(R.kinds, t + 1, sizeof(R.kinds));
}

void
regions_report(void)
{
	printf("regions: %" PRIu64 " schedules of two regions (%" PRIu64 " with %s, %" PRIu64
	    " with %s)\n", R.schedules, R.kinds[REGIONS_BAD_B], regions_kind_names[REGIONS_BAD_B],
	    R.kinds[REGIONS_BAD_R], regions_kind_names[REGIONS_BAD_R]);
}
