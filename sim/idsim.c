/*
 * idsim.c - the simulation's driver (docs/design.md section 14): several
 * idservers (the real tier.c, ticket.c, statefile.c) in one process, on one
 * event loop in virtual time, over simulated ticket servers (tserver.c,
 * simdb.c). Per schedule one seed picks the shape, the weather and a subset
 * of fault kinds (swarm testing), then a sequence of events: IDs taken,
 * faults, idservers restarted. Every ID handed out goes into an interval set
 * (ranges.c); an overlap is an ID issued twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/evp.h>

#include "clk.h"
#include "config.h"
#include "layout.h"
#include "ranges.h"
#include "rng.h"
#include "rules.h"
#include "server.h"
#include "simdb.h"
#include "statefile.h"
#include "tier.h"
#include "tserver.h"
#include "vclock.h"

#define SIM_IDSERVERS	3
#define SIM_TRACE_KEEP	40	/* lines of the trace shown with a failure */
#define SIM_TAKE_MAX	256

/* Fault kinds; each schedule enables a random subset. */
enum fault {
	F_CRASH,	/* a server crashes and restarts at once */
	F_DOWN,		/* a server is down for a while */
	F_DROP,		/* connections lost before the server ran the query */
	F_LOST_REPLY,	/* a ticket committed, its reply lost (2013) */
	F_RESTORE,	/* a backup taken at a random moment, restored later */
	F_LOWER,	/* the counter lowered by hand, marks kept */
	F_RESTART,	/* an idserver restarted on its state file */
	F_FRESH,	/* an idserver restarted without a state file */
	F_COUNT,
};

static const char *const fault_names[F_COUNT] = {
	"crash", "down", "drop", "lost-reply", "restore", "lower", "restart", "fresh",
};

/* The documented residue (docs/design.md 6.5, section 14), one class each. */
enum residue_class {
	RES_BOTH,	/* both servers restored: neither row holds the ticket */
	RES_ABSENT,	/* one restored from a copy taken while its partner was down */
	RES_SILENT,	/* served while its partner could not answer (partner_wait_ms) */
	RES_LAG,	/* restored inside the lag of its partner's copy (6.2's table) */
	RES_COUNT,
};

static const char *const residue_names[RES_COUNT] = {
	"both-restored", "partner-absent", "partner-silent", "copy-lag",
};

struct draw {
	unsigned	srv;
	uint64_t	t;
	bool		absent;		/* the partner was down when it was drawn */
};

struct residue {
	unsigned	srv;
	uint64_t	t;
	enum residue_class cls;
};

struct idserver {
	bool			on;
	unsigned		who;		/* incarnation number, for reports */
	bool			file;		/* has a state file */
	char			path[160];
	struct statefile	sf;
	struct tier		t;
	uint64_t		file_mark[SERVER_MAX];	/* the marks its file held at open */
	uint64_t		read_due[TSERVER_MAX][TSERVER_MAX];	/* [S][R]: copies due
							 * at its last check of S */
	uint64_t		check_ms[TSERVER_MAX];	/* mono ms: S's last check answer
							 * delivered to it (or its start) */
	/* [S][R] at S's last check answer: R's copy on S, ever written, ever due. */
	bool			read[TSERVER_MAX];
	uint64_t		read_row[TSERVER_MAX][TSERVER_MAX];
	uint64_t		read_ever[TSERVER_MAX][TSERVER_MAX];
	uint64_t		read_due_ever[TSERVER_MAX][TSERVER_MAX];
};

struct sim {
	uint64_t		seed;
	struct event_base	*base;
	struct config		cfg;
	struct tserver		srv[TSERVER_MAX];
	uint64_t		down_until[TSERVER_MAX];	/* virtual us; 0: up */
	struct idserver		ids[SIM_IDSERVERS];
	unsigned		nids;
	unsigned		next_who;
	bool			fault_on[F_COUNT];
	uint64_t		b;
	uint64_t		drawn_max[TSERVER_MAX];
	/* Each first draw: its server and whether the partner was down then. */
	struct draw		*draws;
	size_t			ndraws, capdraws;
	bool			backup_absent[TSERVER_MAX];	/* its backup was taken while
							 * its partner was down */
	bool			restore_absent[TSERVER_MAX];	/* ... and restored since */
	/* Re-drawn tickets that meet a residue condition exactly, with its class. */
	struct residue		*residue;
	size_t			nresidue, capresidue;
	uint64_t		classes[RES_COUNT];	/* residue found, by class, all schedules */
	struct ranges		ranges;
	uint64_t		ev;		/* this schedule's event index */
	char			dir[64];
	bool			failed;
	char			unmodelled[256];
	char			trace[SIM_TRACE_KEEP][160];
	unsigned		ntrace;
	EVP_MD_CTX		*md;
	uint64_t		ids_taken;
};

static struct sim S;
static bool verbose;

static void	sim_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void	sim_hook_drew(unsigned owner, unsigned srv, uint64_t t, uint64_t own);
static uint64_t	sim_hook_copy_want(unsigned owner, unsigned srv, unsigned role);
static void	sim_hook_checked(unsigned owner, unsigned srv, const uint64_t *due);
static void	sim_hook_unmodelled(const char *why);
static struct idserver *sim_owner(unsigned who);
static bool	sim_ids_start(struct idserver *d, bool file);
static void	sim_ids_stop(struct idserver *d);
static void	sim_on_change(void *arg);
static int	sim_datasync(int fd);
static void	sim_run(uint64_t us);
static int	sim_record(struct idserver *d, uint64_t lo, uint64_t hi);
static int	sim_take(void);
static void	sim_fault(void);
static int	sim_schedule(uint64_t seed, unsigned *events);
static void	usage(void);

/* One line of the event trace: hashed, and the last ones kept for a failure. */
static void
sim_trace(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	EVP_DigestUpdate(S.md, line, strlen(line));
	EVP_DigestUpdate(S.md, "\n", 1);
	snprintf(S.trace[S.ntrace++ % SIM_TRACE_KEEP], sizeof(S.trace[0]), "%s", line);
	if (verbose)
		printf("  %s\n", line);
}

/* The live idserver whose connections are labelled who; NULL when gone. */
static struct idserver *
sim_owner(unsigned who)
{
	for (unsigned i = 0; i < S.nids; i++)
		if (S.ids[i].on && S.ids[i].who == who)
			return &S.ids[i];
	return NULL;
}

/* Appends to a growing array of n elements of size z (abort when memory runs out). */
static void *
sim_grow(void *p, size_t *cap, size_t n, size_t z)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * z);
	if (p == NULL)
		abort();
	return p;
}

/*
 * The residue class a re-drawn ticket t of srv meets exactly (docs/design.md
 * 6.5, section 14), or -1: none. The taker d passed srv's counter against
 * every mark it knew, so srv's own row lost t (a restore; a lowered counter
 * keeps the rows) and so did what d read of the partner p, or d read nothing.
 * Never residue when d's state file held t at its start (layer 1). Else:
 * - partner-silent: d's connection to srv serves without a check of p, and
 *   no check of p had answered d for partner_wait_ms when the wait ended
 *   (6.4; the simulator's own record of answers delivered);
 * Else, as p's rows were at d's last check of them:
 * - both-restored: p's rows held t once and a restore of p took it back;
 * - partner-absent: no idserver had been due to write t into p's rows (no
 *   ticket transaction on p, no witness at a connection to p carried it:
 *   checked against what was due, so a witness left out is not residue), t
 *   was drawn while p was down (6.5: the host loss, or the restore, before
 *   the witness landed; an idserver that remembers t refuses srv itself, but
 *   d does not ask it);
 * - copy-lag: the same with t drawn while p was up: p's copy lags by the
 *   tickets srv drew since p's last ticket transaction (6.2's table).
 */
static int
sim_residue_class(const struct idserver *d, unsigned srv, uint64_t t)
{
	unsigned p = 1 - srv;
	const struct draw *first = NULL;

	/* It remembered t in its state file: layer 1 was due to refuse it. */
	if (d != NULL && d->file_mark[srv] >= t)
		return -1;
	if (d != NULL && d->t.unasked[srv][p] &&
	    d->t.unasked_at[srv][p] >= d->check_ms[p] + S.cfg.partner_wait_ms)
		return RES_SILENT;
	/* What p's rows held, and had held and been due, at d's last read of them. */
	if (d == NULL || !d->read[p])
		return -1;
	if (d->read_ever[p][srv] >= t)
		return d->read_row[p][srv] < t ? RES_BOTH : -1;
	if (d->read_due_ever[p][srv] >= t)
		return -1;	/* due there, never written: a rule left out */
	for (size_t k = 0; k < S.ndraws && first == NULL; k++)
		if (S.draws[k].srv == srv && S.draws[k].t == t)
			first = &S.draws[k];
	if (first == NULL)
		return -1;
	return first->absent ? RES_ABSENT : RES_LAG;
}

/*
 * A ticket drawn. A first draw is noted (with whether the partner was down);
 * a re-drawn one (not above every ticket ever drawn there) that no layer
 * holds (its server's own row, the taker's marks when it sent the
 * transaction) is classified now: a duplicate of it later is residue only
 * when it met a documented residue condition exactly (sim_residue_class).
 */
static void
sim_hook_drew(unsigned owner, unsigned srv, uint64_t t, uint64_t own)
{
	struct idserver *d = sim_owner(owner);
	bool covered = t <= own || (d != NULL && t <= d->t.srv[srv].mark_sent);
	int cls;

	if (t > S.drawn_max[srv]) {
		S.drawn_max[srv] = t;
		S.draws = sim_grow(S.draws, &S.capdraws, S.ndraws, sizeof(*S.draws));
		S.draws[S.ndraws++] = (struct draw){ srv, t, !S.srv[1 - srv].up };
		return;
	}
	cls = covered ? -1 : sim_residue_class(d, srv, t);
	sim_trace("e%" PRIu64 " redraw %s t=%" PRIu64 " for i%u: %s (own row %" PRIu64 ", known %"
	    PRIu64 ", partner's copy %" PRIu64 " (ever %" PRIu64 "))", S.ev, server_role(srv), t,
	    owner, covered ? "covered" : cls < 0 ? "UNCOVERED, no residue condition" :
	    residue_names[cls], own, d != NULL ? d->t.srv[srv].mark_sent : 0,
	    S.srv[1 - srv].st.mark[srv], S.srv[1 - srv].copy_ever[srv]);
	if (cls < 0)
		return;
	S.residue = sim_grow(S.residue, &S.capresidue, S.nresidue, sizeof(*S.residue));
	S.residue[S.nresidue++] = (struct residue){ srv, t, (enum residue_class)cls };
}

/* What a new connection of owner to srv would bring role's copy up to. */
static uint64_t
sim_hook_copy_want(unsigned owner, unsigned srv, unsigned role)
{
	struct idserver *d = sim_owner(owner);

	return d != NULL ? d->t.srv[srv].copy_want[role] : 0;
}

static void
sim_hook_checked(unsigned owner, unsigned srv, const uint64_t *due)
{
	struct idserver *d = sim_owner(owner);

	if (d != NULL) {
		memcpy(d->read_due[srv], due, sizeof(d->read_due[srv]));
		d->check_ms[srv] = clk_mono_ms();
		d->read[srv] = true;
		for (unsigned k = 0; k < TSERVER_MAX; k++) {
			d->read_row[srv][k] = S.srv[srv].st.mark[k];
			d->read_ever[srv][k] = S.srv[srv].copy_ever[k];
			d->read_due_ever[srv][k] = S.srv[srv].due_ever[k];
		}
	}
	if (verbose)
		printf("  i%u read %s: copy %" PRIu64 " (due %" PRIu64 "), own %" PRIu64 ", counter %"
		    PRIu64 "\n", owner, server_role(srv), S.srv[srv].st.mark[1 - srv], due[1 - srv],
		    S.srv[srv].st.mark[srv], S.srv[srv].st.counter);
}

static void
sim_hook_unmodelled(const char *why)
{
	if (S.unmodelled[0] == '\0')
		snprintf(S.unmodelled, sizeof(S.unmodelled), "%s", why);
}

/* The disk is simulated as never failing: a write is durable once written. */
static int
sim_datasync(int fd)
{
	(void)fd;
	return 0;
}

static void
sim_on_change(void *arg)
{
	(void)arg;
}

/* Starts idserver d: its state file (kept, or none), a tier, the probes. */
static bool
sim_ids_start(struct idserver *d, bool file)
{
	char err[256];
	unsigned slot = (unsigned)(d - S.ids);

	d->who = S.next_who++;
	d->file = file;
	snprintf(d->path, sizeof(d->path), "%s/state%u", S.dir, slot);
	memset(d->read_due, 0, sizeof(d->read_due));
	memset(d->read, 0, sizeof(d->read));
	for (unsigned k = 0; k < TSERVER_MAX; k++)
		d->check_ms[k] = clk_mono_ms();
	if (!file)
		unlink(d->path);
	if (!statefile_open(&d->sf, file ? d->path : NULL, err, sizeof(err))) {
		printf("idsim: state file %s: %s\n", d->path, err);
		return false;
	}
	d->sf.datasync = sim_datasync;
	snprintf(d->sf.rec.host, sizeof(d->sf.rec.host), "sim%u", slot);
	snprintf(d->sf.rec.servers, sizeof(d->sf.rec.servers), "127.0.0.1:3307,127.0.0.1:3308");
	for (unsigned k = 0; k < SERVER_MAX; k++)
		d->file_mark[k] = k < server_count() ?
		    state_mark_ticket(&d->sf.rec.mark[k], S.b) : 0;
	simdb_owner(d->who);
	if (!tier_init(&d->t, S.base, &S.cfg, &d->sf, &simdb_ops, sim_on_change, d)) {
		printf("idsim: tier_init failed\n");
		statefile_close(&d->sf);
		return false;
	}
	d->on = true;
	tier_start(&d->t);
	return true;
}

static void
sim_ids_stop(struct idserver *d)
{
	if (!d->on)
		return;
	tier_free(&d->t);
	statefile_close(&d->sf);
	d->on = false;
}

/* Advances virtual time by us, letting every timer that falls due run. */
static void
sim_run(uint64_t us)
{
	uint64_t step = 500;

	while (us > 0) {
		uint64_t d = us < step ? us : step;

		vclock_advance_us(d);
		us -= d;
		for (int k = 0; k < 4; k++)
			event_base_loop(S.base, EVLOOP_NONBLOCK);
	}
	for (unsigned i = 0; i < TSERVER_MAX; i++)
		if (S.down_until[i] != 0 && vclock_now_us() >= S.down_until[i]) {
			S.down_until[i] = 0;
			S.srv[i].up = true;
			sim_trace("e%" PRIu64 " %s up", S.ev, server_role(i));
		}
}

/*
 * Records [lo, hi) handed out by d: 0, or 1 for an ID issued twice, 2 for
 * residue (both reported).
 */
static int
sim_record(struct idserver *d, uint64_t lo, uint64_t hi)
{
	const struct range *o = ranges_add(&S.ranges, lo, hi, d->who, S.ev);
	uint64_t id, t;
	int cls = -1;

	S.ids_taken += hi - lo;
	if (o == NULL)
		return 0;
	id = lo > o->lo ? lo : o->lo;
	t = layout_ticket_of(id, S.b);
	for (size_t k = 0; k < S.nresidue; k++)
		if (S.residue[k].t == t && server_owns_ticket(S.residue[k].srv, t))
			cls = (int)S.residue[k].cls;
	sim_trace("e%" PRIu64 " %s%s: ID %" PRIu64 " (ticket %" PRIu64 ") by i%u at e%" PRIu64
	    " and by i%u at e%" PRIu64, S.ev, cls >= 0 ? "RESIDUE " : "DUPLICATE",
	    cls >= 0 ? residue_names[cls] : "", id, t, o->who, o->ev, d->who, S.ev);
	if (cls >= 0)
		S.classes[cls]++;
	return cls >= 0 ? 2 : 1;
}

/* One taker: IDs or a block from a random idserver. */
static int
sim_take(void)
{
	struct idserver *d = &S.ids[rng_below(S.nids)];
	uint64_t out[SIM_TAKE_MAX], first;
	unsigned n;
	int r = 0;

	if (!d->on)
		return 0;
	if (rng_permille(700)) {
		n = 1 + (unsigned)rng_below(S.b);
		if (!tier_take_block(&d->t, n, &first)) {
			sim_trace("e%" PRIu64 " i%u block %u: none", S.ev, d->who, n);
			return 0;
		}
		sim_trace("e%" PRIu64 " i%u block %u: %" PRIu64, S.ev, d->who, n, first);
		return sim_record(d, first, first + n);
	}
	n = 1 + (unsigned)rng_below(SIM_TAKE_MAX);
	if (!tier_take_ids(&d->t, n, out)) {
		sim_trace("e%" PRIu64 " i%u ids %u: none", S.ev, d->who, n);
		return 0;
	}
	sim_trace("e%" PRIu64 " i%u ids %u: %" PRIu64 "..%" PRIu64, S.ev, d->who, n, out[0],
	    out[n - 1]);
	for (unsigned k = 0, start = 0; k < n && r == 0; k++)
		if (k + 1 == n || out[k + 1] != out[k] + 1) {
			r = sim_record(d, out[start], out[k] + 1);
			start = k + 1;
		}
	return r;
}

/* One fault of a kind this schedule enabled (connection faults are weather). */
static void
sim_fault(void)
{
	unsigned kinds[F_COUNT], n = 0, srv = (unsigned)rng_below(TSERVER_MAX);
	struct tserver *s = &S.srv[srv];
	struct idserver *d = &S.ids[rng_below(S.nids)];

	for (unsigned k = 0; k < F_COUNT; k++)
		if (S.fault_on[k] && k != F_LOST_REPLY)
			kinds[n++] = k;
	if (n == 0)
		return;
	switch (kinds[rng_below(n)]) {
	case F_CRASH:
		sim_trace("e%" PRIu64 " %s crash", S.ev, server_role(srv));
		simdb_crash(srv);
		break;
	case F_DOWN:
		if (!s->up)
			break;
		s->up = false;
		S.down_until[srv] = vclock_now_us() + 20000 + rng_below(2000000);
		sim_trace("e%" PRIu64 " %s down", S.ev, server_role(srv));
		simdb_crash(srv);
		break;
	case F_DROP:
		sim_trace("e%" PRIu64 " drop %d", S.ev, simdb_drop_one());
		break;
	case F_RESTORE:
		if (!s->have_backup || rng_permille(400)) {
			tserver_backup(s);
			S.backup_absent[srv] = !S.srv[1 - srv].up;
			sim_trace("e%" PRIu64 " %s backup at %" PRIu64, S.ev, server_role(srv),
			    s->st.counter);
			break;
		}
		(void)tserver_restore(s);
		S.restore_absent[srv] = S.backup_absent[srv];
		sim_trace("e%" PRIu64 " %s restored to %" PRIu64, S.ev, server_role(srv),
		    s->st.counter);
		simdb_crash(srv);
		break;
	case F_LOWER:
		tserver_lower(s, 1 + rng_below(6));
		sim_trace("e%" PRIu64 " %s counter lowered to %" PRIu64, S.ev, server_role(srv),
		    s->st.counter);
		break;
	case F_RESTART:
	case F_FRESH:
		if (!d->on)
			break;
		{
			bool file = S.fault_on[F_RESTART] && d->file && rng_permille(700);

			sim_trace("e%" PRIu64 " i%u restart %s", S.ev, d->who,
			    file ? "on its file" : "without a file");
			sim_ids_stop(d);
			if (!sim_ids_start(d, file))
				S.failed = true;
		}
		break;
	}
}

/*
 * One schedule: 0 clean, 1 a duplicate, 2 residue, 3 the harness failed.
 * events: how many events it ran.
 */
static int
sim_schedule(uint64_t seed, unsigned *events)
{
	static char host[] = "127.0.0.1", user[] = "idgen", db[] = "idgen", pw[] = "";
	unsigned nev, k;
	int r = 0;

	rng_seed(seed);
	vclock_reset();
	S.seed = seed;
	S.ev = 0;
	S.nresidue = 0;
	S.ndraws = 0;
	memset(S.backup_absent, 0, sizeof(S.backup_absent));
	memset(S.restore_absent, 0, sizeof(S.restore_absent));
	S.ids_taken = 0;
	S.failed = false;
	S.unmodelled[0] = '\0';
	S.ntrace = 0;
	S.next_who = 1;
	ranges_reset(&S.ranges);
	memset(S.drawn_max, 0, sizeof(S.drawn_max));
	memset(S.down_until, 0, sizeof(S.down_until));
	if (!server_shape_set(2, 0, 0))
		return 3;
	S.b = UINT64_C(4096) << rng_below(2);	/* the smallest B check.c takes */
	for (k = 0; k < TSERVER_MAX; k++)
		tserver_init(&S.srv[k], k, S.b);
	/* Swarm: each kind on with even odds. */
	for (k = 0; k < F_COUNT; k++)
		S.fault_on[k] = rng_permille(500);
	{
		struct simdb_weather w = {
			(unsigned)(100 + rng_below(3000)),
			S.fault_on[F_DROP] ? (unsigned)(1 + rng_below(30)) : 0,
			S.fault_on[F_LOST_REPLY] ? (unsigned)(1 + rng_below(100)) : 0,
		};
		struct simdb_hooks h = { sim_hook_drew, sim_hook_copy_want, sim_hook_checked,
		    sim_hook_unmodelled };

		simdb_setup(S.srv, TSERVER_MAX, &w, &h);
	}
	memset(&S.cfg, 0, sizeof(S.cfg));
	S.cfg.tier_increment = 2;
	S.cfg.odd_host = host;
	S.cfg.even_host = host;
	S.cfg.odd_port = 3307;
	S.cfg.even_port = 3308;
	S.cfg.db_user = user;
	S.cfg.db_name = db;
	S.cfg.db_password = pw;
	S.cfg.connect_timeout_ms = 1000;
	S.cfg.query_timeout_ms = 1000;
	S.cfg.reprobe_min_ms = 10;
	S.cfg.reprobe_max_ms = (unsigned)(20 + rng_below(500));
	S.cfg.recheck_ms = (unsigned)(50 + rng_below(2000));
	S.cfg.refused_retry_ms = (unsigned)(100 + rng_below(2000));
	S.cfg.partner_wait_ms = (unsigned)(100 + rng_below(3000));
	S.cfg.prefetch_blocks = (unsigned)(1 + rng_below(3));
	S.cfg.prefetch_max_blocks = S.cfg.prefetch_blocks + (unsigned)rng_below(3);
	S.cfg.block_size = (unsigned)S.b;
	S.cfg.max_namespaces = 0;
	snprintf(S.dir, sizeof(S.dir), "/dev/shm/idsim-%d-XXXXXX", (int)getpid());
	if (mkdtemp(S.dir) == NULL) {
		snprintf(S.dir, sizeof(S.dir), "/tmp/idsim-%d-XXXXXX", (int)getpid());
		if (mkdtemp(S.dir) == NULL)
			return 3;
	}
	S.base = event_base_new();
	if (S.base == NULL)
		return 3;
	S.nids = 1 + (unsigned)rng_below(SIM_IDSERVERS);
	nev = 200 + (unsigned)rng_below(600);
	{
		char kinds[128] = "";
		size_t len = 0;

		for (k = 0; k < F_COUNT; k++)
			if (S.fault_on[k])
				len += (size_t)snprintf(kinds + len, sizeof(kinds) - len, " %s",
				    fault_names[k]);
		sim_trace("schedule seed %" PRIu64 ": B=%" PRIu64 ", %u idservers, %u events, "
		    "faults:%s", seed, S.b, S.nids, nev, len ? kinds : " none");
	}
	for (k = 0; k < S.nids; k++)
		if (!sim_ids_start(&S.ids[k], rng_permille(800)))
			r = 3;
	for (S.ev = 0; S.ev < nev && r == 0; S.ev++) {
		unsigned pick = (unsigned)rng_below(100);

		if (pick < 55)
			r = sim_take();
		else if (pick < 65)
			sim_fault();
		if (S.failed)
			r = 3;
		if (r == 0)
			sim_run(rng_permille(50) ? 20000 + rng_below(400000) : rng_below(4000));
		if (r == 0 && S.unmodelled[0] != '\0') {
			printf("idsim: seed %" PRIu64 ": a query the model does not answer: %s\n",
			    seed, S.unmodelled);
			r = 3;
		}
	}
	*events = (unsigned)S.ev;
	for (k = 0; k < S.nids; k++)
		sim_ids_stop(&S.ids[k]);
	for (k = 0; k < SIM_IDSERVERS; k++) {
		char p[200];

		snprintf(p, sizeof(p), "%s/state%u", S.dir, k);
		unlink(p);
		snprintf(p, sizeof(p), "%s/state%u.corrupt", S.dir, k);
		unlink(p);
	}
	rmdir(S.dir);
	event_base_free(S.base);
	S.base = NULL;
	sim_trace("end seed %" PRIu64 ": %u events, %" PRIu64 " IDs, result %d", seed, *events,
	    S.ids_taken, r);
	return r;
}

static void
usage(void)
{
	fprintf(stdout, "usage: idsim [--seed S] [--schedules K | --seconds T] [--disable RULE]... "
	    "[--list-rules] [--verbose]\n");
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1, schedules = 100, seconds = 0, done = 0, events = 0, dups = 0, res = 0;
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned hl = 0;
	time_t start = time(NULL);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--list-rules") == 0) {
			for (unsigned k = 0; k < RULE_COUNT; k++)
				printf("%-14s %s\n", rules[k].name, rules[k].what);
			return 0;
		} else if (strcmp(a, "--verbose") == 0) {
			verbose = true;
		} else if (v != NULL && strcmp(a, "--seed") == 0) {
			seed = strtoull(v, NULL, 10);
			i++;
		} else if (v != NULL && strcmp(a, "--schedules") == 0) {
			schedules = strtoull(v, NULL, 10);
			i++;
		} else if (v != NULL && strcmp(a, "--seconds") == 0) {
			seconds = strtoull(v, NULL, 10);
			schedules = UINT64_MAX;
			i++;
		} else if (v != NULL && strcmp(a, "--disable") == 0) {
			unsigned k;

			for (k = 0; k < RULE_COUNT && strcmp(rules[k].name, v) != 0; k++)
				;
			if (k == RULE_COUNT) {
				printf("idsim: no rule '%s' (--list-rules)\n", v);
				return 2;
			}
			rules_off |= 1u << k;
			i++;
		} else {
			usage();
			return 2;
		}
	}
	/* idserver's log lines are the trace's business, not the terminal's. */
	if (!verbose && freopen("/dev/null", "w", stderr) == NULL)
		return 2;
	S.md = EVP_MD_CTX_new();
	if (S.md == NULL || !EVP_DigestInit_ex(S.md, EVP_sha256(), NULL))
		return 2;
	while (done < schedules) {
		unsigned ev = 0;
		int r;

		/* Real time (the process's clock is virtual): time() is not interposed. */
		if (seconds > 0 && (uint64_t)(time(NULL) - start) >= seconds)
			break;
		r = sim_schedule(seed + done, &ev);
		done++;
		events += ev;
		if (r == 2)
			res++;
		if (r == 1 || r == 3) {
			dups += r == 1;
			printf("idsim: seed %" PRIu64 " %s; replay: build/idsim --seed %" PRIu64
			    " --schedules 1", seed + done - 1,
			    r == 1 ? "issued an ID twice" : "failed", seed + done - 1);
			for (unsigned k = 0; k < RULE_COUNT; k++)
				if (!RULE_ON(k))
					printf(" --disable %s", rules[k].name);
			printf("; the trace's end:\n");
			for (unsigned k = S.ntrace > SIM_TRACE_KEEP ? S.ntrace - SIM_TRACE_KEEP : 0;
			    k < S.ntrace; k++)
				printf("  %s\n", S.trace[k % SIM_TRACE_KEEP]);
			if (r == 3)
				dups++;
			break;
		}
	}
	EVP_DigestFinal_ex(S.md, h, &hl);
	EVP_MD_CTX_free(S.md);
	ranges_free(&S.ranges);
	free(S.residue);
	free(S.draws);
	printf("residue by class:");
	for (unsigned k = 0; k < RES_COUNT; k++)
		printf(" %s %" PRIu64, residue_names[k], S.classes[k]);
	printf("\n");
	printf("sim: %" PRIu64 " schedules, %" PRIu64 " events, %" PRIu64 " duplicates, %" PRIu64
	    " residue, trace ", done, events, dups, res);
	for (unsigned k = 0; k < hl; k++)
		printf("%02x", h[k]);
	printf("\n");
	return dups == 0 ? 0 : 1;
}
