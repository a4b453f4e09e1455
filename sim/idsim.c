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
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/evp.h>

#include "clk.h"
#include "config.h"
#include "ctlrun.h"
#include "disk.h"
#include "layout.h"
#include "lease.h"
#include "leasefree.h"
#include "live.h"
#include "log.h"
#include "ranges.h"
#include "regions.h"
#include "rng.h"
#include "rules.h"
#include "server.h"
#include "simdb.h"
#include "snowflake.h"
#include "source.h"
#include "statefile.h"
#include "tier.h"
#include "tserver.h"
#include "vclock.h"

/* --disable needs the rule switches that IDGEN_RULES_FIXED compiles out (rules.h). */
#ifdef IDGEN_RULES_FIXED
#error "build/idsim needs the rule switches: build it without -DIDGEN_RULES_FIXED"
#endif

#define SIM_IDSERVERS	3
#define SIM_TRACE_KEEP	40	/* lines of the trace shown with a failure */
#define SIM_TAKE_MAX	256
#define SIM_SERVERS	"127.0.0.1:3307,127.0.0.1:3308"
#define SIM_PID_BASE	100000	/* the incarnations' pids (sim_running) */
#define SIM_OLD_MIN_US	300000	/* older file contents are at least this old (sim_file_back) */
#define SIM_EVENTS_MAX	800	/* a schedule's events are fewer (sim_schedule) */
#define SIM_SHRINK_RUNS	4000	/* replays a shrink may take (sim_shrink) */

/* Fault kinds; each schedule enables a random subset. */
enum fault {
	F_CRASH,	/* a server crashes and restarts at once */
	F_DOWN,		/* a server is down for a while */
	F_DROP,		/* connections lost before the server ran the query */
	F_LOST_REPLY,	/* a ticket committed, its reply lost (2013) */
	F_RESTORE,	/* a backup taken at a random moment, restored later */
	F_LOWER,	/* the counter lowered by hand, marks kept */
	F_RESTART,	/* an idserver restarted on its state file */
	F_FRESH,	/* an idserver restarted without a state file (or it deleted) */
	F_BOTH_DOWN,	/* both servers down for a while: the Snowflake fallback */
	F_CLOCK,	/* an idserver's clock skewed or stepped */
	F_FILE_COPY,	/* an idserver's state file copied to another's path, that restarted */
	F_FILE_BACK,	/* older contents of an idserver's state file put back, it restarted */
	F_CUT,		/* an idserver cut off from one server or both for a while */
	F_READ_ONLY,	/* a server read-only for a while (sim_read_only): chosen by the
			 * seed, not drawn (sim_ro_drawn) */
	F_TIMEOUT,	/* query timeouts (simdb.h), and a server stalled for a while:
			 * chosen by the seed, not drawn (sim_to_drawn) */
	F_COUNT,
};

static const char *const fault_names[F_COUNT] = {
	"crash", "down", "drop", "lost-reply", "restore", "lower", "restart", "fresh",
	"both-down", "clock", "file-copy", "file-back", "cut", "read-only", "timeout",
};

/* The documented residue (docs/design.md 6.5, section 14), one class each. */
enum residue_class {
	RES_BOTH,	/* both servers restored: neither row holds the ticket */
	RES_ABSENT,	/* banked with no other server up, then its server restored */
	RES_SILENT,	/* served while its partner could not answer (partner_wait_ms) */
	RES_INFLIGHT,	/* its copy landed on the partner after the taker last read it */
	RES_NS_UNHELD,	/* a namespace block no row or copy held, nor was due to: copy
			 * first's exceptions decide at the duplicate (13.6); never counted */
	RES_REGIONS_M,	/* two regions under different M drew one ticket (12.3) */
	RES_TRUNCATED,	/* as a restore's residue, the row lost to TRUNCATE idgen_marks
			 * (mark-edits; no trigger sees it: section 14.1) */
	RES_COUNT,
};

static const char *const residue_names[RES_COUNT] = {
	"both-restored", "partner-absent", "partner-silent", "copy-in-flight", "ns-unheld",
	"regions-m", "marks-truncated",
};

/* What an event of a schedule did, as first run (its fault kind: EV_FAULT + kind). */
enum { EV_NONE, EV_TAKE, EV_NS_OP, EV_LEASE_EDIT, EV_POWER, EV_FAULT };

/* --ctl-ops (section 14): more of idgenctl's procedures, run for real. */
enum { CTLOP_RETIRE = 1, CTLOP_NS_RAISE = 2, CTLOP_B_CHANGE = 4 };
/* Their counts over all schedules. */
enum { CO_RETIRES, CO_RETIRE_RUNS, CO_RETIRE_KILLED, CO_RETIRED, CO_REUSE_RUNS, CO_REUSE_REFUSED,
	CO_NSR_RUNS, CO_NSR_KILLED, CO_NSR_DONE, CO_NSR_BACK, CO_NSR_AGAIN, CO_NSR_MOVED,
	CO_BC, CO_BC_LIVE, CO_BC_DONE, CO_BC_REPAIRS, CTLOP_COUNTS };

/* Counters over all schedules, kept aside while a shrink replays one (sim_shrink). */
struct sim_counts {
	uint64_t	classes[RES_COUNT];
	uint64_t	ctlop[CTLOP_COUNTS];
	uint64_t	ns_ids, ns_ops, ns_redraws, ns_tier_draws, ns_tier_redraws;
	uint64_t	fb_ids, fb_claims, fb_resumed, fb_adopted, fb_lost, fb_releases, fb_refused;
	uint64_t	tiers, raises, raises_done, ctl_runs, ctl_killed, add_runs, add_killed;
	uint64_t	regions[REGIONS_TALLY];
	struct disk_counts disks;
	struct simdb_timeout_counts timeouts;
};

/* A re-drawn namespace block that met a residue condition (sim_ns_class). */
struct ns_residue {
	unsigned	ns;
	uint64_t	lo, hi;		/* its IDs */
	enum residue_class cls;
	unsigned	srv;		/* its server */
	/* The taker's last read of each other server h (vclock); unheld: h's class was. */
	uint64_t	read_us[TSERVER_MAX];
	bool		unheld[TSERVER_MAX];
};

/* A namespace block banked alone: no copy elsewhere, no other server up (13.6). */
struct ns_alone {
	unsigned	ns;
	uint64_t	lo, hi;
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
	uint64_t		file_mark[SERVER_MAX];	/* the marks its file held at open, or
							 * must have held (file_must) */
	/*
	 * What its file must hold: the highest ticket of each server whose
	 * block an incarnation banked on it (banked only once durable, 6.6),
	 * carried with the file (copied, put back); old_must when kept.
	 */
	uint64_t		file_must[SERVER_MAX];
	uint64_t		old_must[SERVER_MAX];
	uint64_t		read_due[TSERVER_MAX][TSERVER_MAX];	/* [S][R]: copies due
							 * at its last check of S */
	uint64_t		check_ms[TSERVER_MAX];	/* mono ms: S's last check answer
							 * delivered to it (or its start) */
	/* [S][R] at S's last check answer: R's copy on S, ever written, ever due. */
	bool			read[TSERVER_MAX];
	uint64_t		read_row[TSERVER_MAX][TSERVER_MAX];
	uint64_t		read_ever[TSERVER_MAX][TSERVER_MAX];
	uint64_t		read_due_ever[TSERVER_MAX][TSERVER_MAX];
	uint64_t		read_hand[TSERVER_MAX][TSERVER_MAX];	/* ... ever taken
							 * by a hand edit (tserver.h) */
	uint64_t		read_trunc[TSERVER_MAX][TSERVER_MAX];	/* ... by TRUNCATE */
	/* The Snowflake fallback, as main.c wires it (source.c, lease.c, snowflake.c). */
	struct snowflake	gen;
	struct lease		lease;
	struct source		src;
	bool			released;
	int64_t			skew_us;	/* its wall clock minus the true one */
	uint64_t		cut_until[TSERVER_MAX];	/* virtual us: cut off from S */
	/* Namespaces (docs/design.md 13.6), by server S, namespace k, role R, in ID space. */
	uint64_t		ns_file_end[TSERVER_NS][TSERVER_MAX];	/* its file's marks
							 * at its start */
	uint64_t		ns_conn_us[TSERVER_MAX];	/* its tier connection to S
							 * connected (virtual us) */
	bool			ns_fresh[TSERVER_MAX];	/* ... its first namespace check unread */
	uint64_t		ns_read_us[TSERVER_MAX];	/* its last namespace check of S read */
	bool			ns_read[TSERVER_MAX];
	uint64_t		ns_read_row[TSERVER_MAX][TSERVER_NS][TSERVER_MAX];	/* S's rows then */
	uint64_t		ns_read_ever[TSERVER_MAX][TSERVER_NS][TSERVER_MAX];	/* ... ever held */
	uint64_t		ns_read_due[TSERVER_MAX][TSERVER_NS][TSERVER_MAX];	/* ... ever due */
	uint64_t		ns_read_hand[TSERVER_MAX][TSERVER_NS][TSERVER_MAX];	/* ... taken
							 * by a hand edit */
	uint64_t		ns_sent_end[TSERVER_MAX];	/* its known end when it sent the
							 * ticket transaction to S (tier.c) */
	/*
	 * What its file must hold (13.6): the end of every block of k drawn on R
	 * it handed IDs of (write-ahead) and every mark of R a check read
	 * (known marks are kept), carried with the file (copied, kept, put
	 * back); and as it was at this incarnation's start.
	 */
	uint64_t		ns_handed[TSERVER_NS][TSERVER_MAX];
	uint64_t		ns_old_handed[TSERVER_NS][TSERVER_MAX];
	uint64_t		ns_should[TSERVER_NS][TSERVER_MAX];
	bool			ns_due_set[TSERVER_MAX];	/* copies due at S's witness point */
	uint64_t		ns_due[TSERVER_MAX][TSERVER_NS][TSERVER_MAX];
	bool			ns_sent_unasked[TSERVER_MAX];	/* ... with another server
							 * (the pair: its partner) up or
							 * connecting and not read since S
							 * connected */
	int			ns_sent_unread[TSERVER_MAX][TSERVER_MAX];	/* [S][h] ... the
							 * residue class of another server h
							 * not read then: refused (RES_ABSENT),
							 * silent for partner_wait_ms by the
							 * simulator's record (RES_SILENT),
							 * else -1 */
	bool			start_again;	/* exited at start (its disk): started at
							 * the next event, on its file */
	/* Older contents of its state file (F_FILE_BACK), and when they were taken. */
	char			*old;
	size_t			oldlen;
	uint64_t		old_us;
};

struct sim {
	uint64_t		seed;
	struct event_base	*base;
	struct config		cfg;
	struct tserver		srv[TSERVER_MAX];
	unsigned		nsrv;		/* servers of this schedule: 2 (the pair), 3 or 4 */
	bool			tier_on;	/* more_servers: a tier of M = 4 beyond the pair */
	/*
	 * A raise: the pair (M = 2) raised to M = 4 by the schedule (12.4), then
	 * the tier's servers added and every idserver restarted with them.
	 */
	bool			raise_on;
	unsigned		raise_phase;	/* 0 planned .. RAISE_DONE */
	uint64_t		raise_floor;	/* F, in tickets of B */
	unsigned		raise_offsets[2], raise_n;	/* the servers it adds */
	bool			added[2], add_made[2];	/* ... added (--ctl real); made */
	/*
	 * --ctl-ops retire: the tier's last server retired (tier retire-server,
	 * 12.5), idservers restarted without it, then in half the schedules its
	 * offset offered to a new server (tier add-server: refused).
	 */
	bool			retire_on;
	unsigned		retire_phase, retire_idx, retire_off;
	/* --ctl-ops b-change: B halved on the pair's servers (6.2.1), its step. */
	bool			bchange_on;
	unsigned		bchange_phase;
	uint64_t		ns_raise_above[TSERVER_NS];	/* --ctl-ops ns-raise: a run
							 * killed, run again as typed; 0 none */
	uint64_t		ctlop[CTLOP_COUNTS];	/* all schedules (sim_ctlops_report) */
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
	/* Tickets banked alone (no copy elsewhere, no other server up: 6.5). */
	struct draw		*alone;
	size_t			nalone, capalone;
	bool			backup_absent[TSERVER_MAX];	/* its backup was taken while
							 * its partner was down */
	bool			restore_absent[TSERVER_MAX];	/* ... and restored since */
	/* Re-drawn tickets that meet a residue condition exactly, with its class. */
	struct residue		*residue;
	size_t			nresidue, capresidue;
	uint64_t		classes[RES_COUNT];	/* residue found, by class, all schedules */
	struct ranges		ranges;
	/* Namespaces: on in this schedule, IDs by name (every incarnation), blocks drawn. */
	bool			ns_on;
	struct ranges		nsr[TSERVER_NS];
	uint64_t		ns_drawn_end[TSERVER_NS][TSERVER_MAX];
	bool			ns_dropping[TSERVER_NS];	/* a drop killed: run it again */
	struct ns_residue	*nsres;
	size_t			nnsres, capnsres;
	struct ns_alone		*nsalone;
	size_t			nnsalone, capnsalone;
	uint64_t		ns_ids, ns_ops, ns_redraws;	/* all schedules */
	uint64_t		ns_tier_draws, ns_tier_redraws;	/* ... on o3, o4 */
	uint64_t		tiers, raises, raises_done;	/* all schedules */
	uint64_t		ctl_runs, ctl_killed;	/* ... runs of the real idgenctl */
	uint64_t		add_runs, add_killed;
	uint64_t		ev;		/* this schedule's event index */
	char			dir[64];
	bool			failed;
	char			unmodelled[256];
	char			trace[SIM_TRACE_KEEP][160];
	unsigned		ntrace;
	EVP_MD_CTX		*md;
	EVP_MD_CTX		*md1;		/* this schedule's lines alone (--hashes) */
	uint64_t		ids_taken;
	/* All schedules: Snowflake IDs handed out, and what the leases did. */
	uint64_t		fb_ids, fb_claims, fb_resumed, fb_adopted, fb_lost, fb_releases,
				fb_refused;
	/*
	 * Replays (sim_shrink, --events, --faults): each event's generator state
	 * at its start and before its run of the loop, as first run, and what it
	 * did then; a replay starts each event, and each run of the loop after
	 * it, from those states, so an event left out changes no other event's
	 * draws. Left out: events ev_off, and faults of kinds kind_off.
	 */
	struct rng_state	at_ev[SIM_EVENTS_MAX], at_run[SIM_EVENTS_MAX];
	unsigned		rec_ev, rec_run;	/* ... recorded below these */
	unsigned		did[SIM_EVENTS_MAX];
	bool			replay;
	bool			ev_off[SIM_EVENTS_MAX];
	bool			kind_off[F_COUNT];
	bool			mute;		/* neither hashed nor reported (a shrink's runs) */
	bool			echo;		/* every trace line printed */
	uint64_t		dup_ev;		/* the event a duplicate was found at */
};

static struct sim S;
static bool verbose;
static bool hashes;		/* --hashes: each schedule's own trace hash, one line each */
static unsigned ctl_ops_on;	/* --ctl-ops: CTLOP_ bits, idgenctl procedures beyond the mix */
static int ns_mode;		/* --namespaces: 0 every third schedule, 1 all, 2 none */
static int tier_mode;		/* --tiers: 0 every third schedule, 1 all, 2 none (the pair),
				 * 3 all, each a raise of the pair's increment */
static struct lease_freed LF;	/* the fault lease-freed: its generator, --lease-freed, counts */
static struct mark_edits ME;	/* the fault mark-edits: its generator, --mark-edits, counts */
static int ro_mode;		/* --read-only: 0 half the schedules, 1 all, 2 none */
static int disk_mode;		/* --disk-faults: 0 half the schedules, 1 all, 2 none */
static int to_mode;		/* --timeouts: 0 half the schedules, 1 all, 2 none */
static struct disk sim_disks[SIM_IDSERVERS];	/* each idserver slot's disk (disk.h) */
static unsigned sim_stopping;	/* inside a clean stop's wait: no host loses power */
static bool ctl_driver;		/* --ctl driver: raise's steps applied by the driver, as before
				 * ctl/raise.c ran inside (sim_raise_one); else the real command */

/* Each idserver's wall clock: the true one plus its skew (lease.c, source.c read it). */
static int64_t sim_unix_us(unsigned slot) { return vclock_unix_us() + S.ids[slot].skew_us; }
static int64_t sim_ms0(void) { return sim_unix_us(0) / 1000; }
static int64_t sim_ms1(void) { return sim_unix_us(1) / 1000; }
static int64_t sim_ms2(void) { return sim_unix_us(2) / 1000; }
static int64_t sim_us0(void) { return sim_unix_us(0); }
static int64_t sim_us1(void) { return sim_unix_us(1); }
static int64_t sim_us2(void) { return sim_unix_us(2); }
static int64_t (*const sim_clock_ms[SIM_IDSERVERS])(void) = { sim_ms0, sim_ms1, sim_ms2 };
static int64_t (*const sim_clock_us[SIM_IDSERVERS])(void) = { sim_us0, sim_us1, sim_us2 };

static void	sim_vtrace(bool hash, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));
static void	sim_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void	sim_hook_drew(unsigned owner, unsigned srv, uint64_t t, uint64_t own);
static void	sim_hook_banked(const struct tier *t, const struct nsrv *ns, unsigned srv,
		    uint64_t ticket, bool alone);
static int	sim_ns_copy_class(const struct ns_residue *r, uint64_t id);
static uint64_t	sim_hook_copy_want(unsigned owner, unsigned srv, unsigned role);
static void	sim_hook_checked(unsigned owner, unsigned srv, const uint64_t *due);
static void	sim_hook_unmodelled(const char *why);
static bool	sim_hook_cut(unsigned owner, unsigned srv);
static struct idserver *sim_owner(unsigned who);
static bool	sim_ids_start(struct idserver *d, bool file);
static void	sim_ids_stop(struct idserver *d, bool clean);
static void	sim_on_change(void *arg);
static enum lease_trust sim_trust(void *arg, int server);
static bool	sim_running(uint64_t pid, uint64_t start);
static void	sim_released(void *arg);
static uint64_t	sim_now_ms(void);
static bool	sim_file_copy(const char *from, const char *to);
static bool	sim_file_back(struct idserver *d);
static void	sim_file_keep(struct idserver *d);
static void	sim_restart(struct idserver *d, bool file, bool clean);
static void	sim_whoami(struct state_owner *me);
static void	sim_lease_whoami(struct lease *l);
static int	sim_mkdir(const char *dir, mode_t mode);
static bool	sim_sync_dir(const char *path);
static int	sim_datasync(int fd);
static void	sim_run(uint64_t us);
static int	sim_record(struct idserver *d, uint64_t lo, uint64_t hi);
static int	sim_take(void);
static int	sim_take_ns(struct idserver *d, unsigned k);
static void	sim_ns_op(unsigned k, bool whole);
static void	sim_ns_run(unsigned k, bool whole);
static int	sim_ns_class(const struct idserver *d, unsigned srv, unsigned k, uint64_t lo,
		    bool *unheld);
static void	sim_hook_ns_drew(unsigned owner, unsigned srv, const struct tserver_answer *a);
static void	sim_hook_ns_sent(unsigned owner, unsigned srv);
static void	sim_hook_ns_seen(unsigned owner, unsigned srv, bool connect);
static void	sim_hook_ns_answered(unsigned owner, unsigned srv);
static void	sim_hook_ns_ran(unsigned owner, unsigned srv);
static void	sim_fault(void);
static uint64_t	sim_copy_draw(void);
static bool	sim_copy_dead(struct idserver *d, struct idserver *to);
static bool	sim_ro_drawn(uint64_t seed);
static bool	sim_to_drawn(uint64_t seed);
static void	sim_read_only(unsigned srv);
static void	sim_ro_end(void);
static void	sim_ro_args(void);
static void	sim_disk_args(void);
static void	sim_power_loss(struct idserver *d);
static void	sim_doomed(void);
static void	sim_power_event(void);
static void	sim_raise_step(void);
static bool	sim_raise_one(void);
static void	sim_raise_carried(void);
static void	sim_raise_ns_repair(void);
static void	sim_raise_ns_carried(void);
static bool	sim_raise_run(void);
static bool	sim_add_run(void);
static void	sim_srv_restart(unsigned srv);
static void	sim_ctl_between(void);
static void	sim_ctl_step(void);
static void	sim_retire_step(void);
static void	sim_bchange_step(void);
static bool	sim_ns_raise(unsigned k);
static bool	sim_ctlops_parse(const char *v);
static void	sim_ctlops_args(void);
static void	sim_ctlops_report(void);
static int	sim_schedule(uint64_t seed, unsigned *events);
static void	sim_counts(struct sim_counts *c, bool put_back);
static int	sim_replay(uint64_t seed, unsigned *events);
static bool	sim_shrink_try(uint64_t seed, unsigned *runs);
static void	sim_shrink_events(uint64_t seed, unsigned *runs);
static void	sim_replay_args(bool masked, uint64_t last);
static void	sim_shrink(uint64_t seed, bool masked);
static void	usage(void);
static void	sim_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void	sim_lease_freed(void);
static void	sim_mark_edits(void);
static void	sim_lease_freed_args(void);

/*
 * One line of the event trace, kept for a failure and shown; hashed unless
 * a note (hash false: an edit refused, a schedule's swarm choices).
 */
static void
sim_vtrace(bool hash, const char *fmt, va_list ap)
{
	char line[160];
	int n;

	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	if (hash && !S.mute) {
		size_t len = strlen(line);

		EVP_DigestUpdate(S.md, line, len);
		EVP_DigestUpdate(S.md, "\n", 1);
		if (hashes) {
			EVP_DigestUpdate(S.md1, line, len);
			EVP_DigestUpdate(S.md1, "\n", 1);
		}
	}
	snprintf(S.trace[S.ntrace++ % SIM_TRACE_KEEP], sizeof(S.trace[0]), "%s", line);
	if ((verbose && !S.mute) || S.echo)
		printf("  %s\n", line);
}

/* One line of the event trace: hashed, and the last ones kept for a failure. */
static void
sim_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vtrace(true, fmt, ap);
	va_end(ap);
}

/* A line of the trace kept for a failure and shown, but not hashed. */
static void
sim_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vtrace(false, fmt, ap);
	va_end(ap);
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
 * Mark h of B hb as the last ticket of the schedule's B it covers (exact when
 * one B divides the other; hb 0 or the schedule's B: h itself).
 */
static uint64_t
sim_in_b(uint64_t h, uint64_t hb)
{
	return hb == 0 || hb == S.b ? h : (h + 1) * hb / S.b - ((h + 1) * hb % S.b == 0);
}

/* True when no server of the schedule but srv is up (the pair: its partner is down). */
static bool
sim_others_down(unsigned srv)
{
	for (unsigned h = 0; h < S.nsrv; h++)
		if (h != srv && S.srv[h].up)
			return false;
	return true;
}

/*
 * What the taker d's last read of another server h says of a re-drawn ticket
 * t of srv (sim_residue_class): -1 when h's rows or what was due there should
 * have made d refuse t (a duplicate), else why h did not: SIM_H_SILENT (d's
 * connection to srv serves without a check of h, silent for
 * partner_wait_ms), RES_BOTH (h's rows held t once and a restore took it
 * back), RES_INFLIGHT (its copy landed on h after d's last read of h),
 * SIM_H_LATE (it landed in the very millisecond of that read), SIM_H_NONE
 * (no copy of t ever reached h, none was due).
 */
#define SIM_H_SILENT	RES_SILENT
#define SIM_H_NONE	(RES_COUNT + 1)
#define SIM_H_LATE	(RES_COUNT + 2)
static int
sim_residue_at(const struct idserver *d, unsigned srv, unsigned h, uint64_t t)
{
	if (d->t.unasked[srv][h] &&
	    d->t.unasked_at[srv][h] >= d->check_ms[h] + S.cfg.partner_wait_ms)
		return SIM_H_SILENT;
	if (!d->read[h])
		return -1;
	/* A restore took it back, not an operator's hand edit (mark-edits: no residue). */
	if (d->read_ever[h][srv] >= t)
		return d->read_row[h][srv] < t && d->read_hand[h][srv] < t ? RES_BOTH : -1;
	if (d->read_due_ever[h][srv] >= t)
		return -1;	/* due there, never written: a rule left out */
	for (size_t k = 0; k < S.srv[h].nlanded; k++)
		if (S.srv[h].landed[k].role == srv && S.srv[h].landed[k].value >= t)
			return S.srv[h].landed[k].ms > d->check_ms[h] ? RES_INFLIGHT : SIM_H_LATE;
	return SIM_H_NONE;
}

/*
 * The residue class a re-drawn ticket t of srv meets exactly (docs/design.md
 * 6.5, 12.2, section 14), or -1: none. The taker d passed srv's counter
 * against every mark it knew, so srv's own row lost t (a restore; a lowered
 * counter keeps the rows) and so did what d read of every other server h of
 * the region. Never residue when d's state file held t at its start (layer
 * 1), nor when any h fails to excuse it (sim_residue_at: h not read and not
 * silent, h's rows holding t when read, a copy of t due on h and never
 * written). Else, over every other server h (the pair: its partner):
 * - partner-silent: d's connection to srv serves without a check of some h,
 *   and no check of h had answered d for partner_wait_ms when the wait ended
 *   (6.4, all others first of 12.2; the simulator's record of answers);
 * - both-restored: some h's rows held t once and a restore of h took it back;
 * - partner-absent (copy first, 6.5): t's block was banked by an idserver
 *   that had no other server of the region up (tier_banked_hook);
 * - copy-in-flight: t's copy landed on some h only after d's last read of it
 *   (copy first's window). Otherwise a block handed out with no copy of its
 *   mark on any other server: a duplicate.
 */
static int	sim_residue_restored(const struct idserver *d, unsigned srv, uint64_t t);

static int
sim_residue_class(const struct idserver *d, unsigned srv, uint64_t t)
{
	int c = sim_residue_restored(d, srv, t);

	/*
	 * A restore's residue whose row (its own, or a copy d read) lost t to a
	 * TRUNCATE of idgen_marks rather than to a restore: its own class
	 * (mark-edits' truncate; design 6.5 names no such residue, section 14.1).
	 */
	if (c < 0 || c == RES_REGIONS_M || d == NULL)
		return c;
	if (S.srv[srv].trunc_lost[srv] >= t)
		return RES_TRUNCATED;
	for (unsigned h = 0; h < S.nsrv; h++)
		if (h != srv && d->read[h] && d->read_trunc[h][srv] >= t)
			return RES_TRUNCATED;
	return c;
}

static int
sim_residue_restored(const struct idserver *d, unsigned srv, uint64_t t)
{
	const struct draw *first = NULL;
	bool silent = false, both = false, inflight = false;

	/* It remembered t in its state file: layer 1 was due to refuse it. */
	if (d != NULL && d->file_mark[srv] >= t)
		return -1;
	/* srv's own row lost t to an operator's hand edit, not to a restore: no residue. */
	if (S.srv[srv].hand_lost[srv] >= t)
		return -1;
	if (d == NULL)
		return -1;
	for (unsigned h = 0; h < S.nsrv; h++) {
		int c = h == srv ? SIM_H_NONE : sim_residue_at(d, srv, h, t);

		if (c < 0)
			return -1;
		silent |= c == SIM_H_SILENT;
		both |= c == RES_BOTH;
		inflight |= c == RES_INFLIGHT;
	}
	if (silent)
		return RES_SILENT;
	if (both)
		return RES_BOTH;
	for (size_t k = 0; k < S.ndraws && first == NULL; k++)
		if (S.draws[k].srv == srv && S.draws[k].t == t)
			first = &S.draws[k];
	if (first == NULL)
		return -1;
	for (size_t k = 0; k < S.nalone; k++)
		if (S.alone[k].srv == srv && S.alone[k].t == t)
			return RES_ABSENT;
	return inflight ? RES_INFLIGHT : -1;
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
	const struct ticket_flight *f = d != NULL ? &d->t.srv[srv].flight : NULL;
	uint64_t known = f != NULL && f->seq == 0 ? f->mark : 0;	/* the default's */
	bool covered = t <= own || t <= known;
	int cls;

	if (t > S.drawn_max[srv]) {
		S.drawn_max[srv] = t;
		S.draws = sim_grow(S.draws, &S.capdraws, S.ndraws, sizeof(*S.draws));
		S.draws[S.ndraws++] = (struct draw){ srv, t, sim_others_down(srv) };
		return;
	}
	cls = covered ? -1 : sim_residue_class(d, srv, t);
	sim_trace("e%" PRIu64 " redraw %s t=%" PRIu64 " for i%u: %s (own row %" PRIu64 ", known %"
	    PRIu64 ", partner's copy %" PRIu64 " (ever %" PRIu64 "))", S.ev, server_role(srv), t,
	    owner, covered ? "covered" : cls < 0 ? "UNCOVERED, no residue condition" :
	    residue_names[cls], own, known,
	    S.srv[server_partner(srv)].st.mark[srv], S.srv[server_partner(srv)].copy_ever[srv]);
	if (cls < 0)
		return;
	S.residue = sim_grow(S.residue, &S.capresidue, S.nresidue, sizeof(*S.residue));
	S.residue[S.nresidue++] = (struct residue){ srv, t, (enum residue_class)cls };
}

/* A block banked; alone: with no copy of its mark elsewhere, none being up. */
static void
sim_hook_banked(const struct tier *t, const struct nsrv *ns, unsigned srv, uint64_t ticket,
    bool alone)
{
	int k = ns != NULL ? tserver_ns_index(ns->name, ns->len) : -1;

	/* The default's banked ticket: what its idserver's state file must hold. */
	for (unsigned i = 0; ns == NULL && i < S.nids; i++)
		if (&S.ids[i].t == t && S.ids[i].file && srv < SERVER_MAX &&
		    ticket > S.ids[i].file_must[srv])
			S.ids[i].file_must[srv] = ticket;
	if (!alone)
		return;
	if (ns == NULL) {
		S.alone = sim_grow(S.alone, &S.capalone, S.nalone, sizeof(*S.alone));
		S.alone[S.nalone++] = (struct draw){ srv, ticket, true };
		return;
	}
	/* A namespace's: its block in ID space. */
	if (k < 0)
		return;
	S.nsalone = sim_grow(S.nsalone, &S.capnsalone, S.nnsalone, sizeof(*S.nsalone));
	S.nsalone[S.nnsalone++] = (struct ns_alone){ (unsigned)k, ticket * ns->b,
	    (ticket + 1) * ns->b };
}

/*
 * Copy first for namespaces (docs/design.md 13.6, section 14): a block no row
 * or copy held when it was drawn again (r, RES_NS_UNHELD) is residue only
 * under the default's copy-first exceptions, judged when its ID id repeats (a
 * block waiting for its copy may be banked after the draw):
 * - partner-absent: a block holding id was banked by an idserver with no
 *   other server of the region up (tier_banked_hook);
 * - copy-in-flight: the first copy of r's server's mark covering the block
 *   landed on another server h (the pair: the partner) only after the
 *   taker's last read of h, and on no h whose row the taker read held none.
 * Else -1: a duplicate (a copy landed on some h before that read and h's row
 * held it then, or none ever landed though the block was handed out).
 */
static int
sim_ns_copy_class(const struct ns_residue *r, uint64_t id)
{
	bool inflight = false;

	for (size_t a = 0; a < S.nnsalone; a++)
		if (S.nsalone[a].ns == r->ns && S.nsalone[a].lo <= id && id < S.nsalone[a].hi)
			return RES_ABSENT;
	for (unsigned h = 0; h < S.nsrv; h++) {
		const struct tserver *p = &S.srv[h];

		if (h == r->srv || !r->unheld[h])
			continue;
		for (size_t a = 0; a < p->nns_landed; a++)
			if (p->ns_landed[a].ns == r->ns && p->ns_landed[a].role == r->srv &&
			    p->ns_landed[a].end >= r->hi) {
				if (p->ns_landed[a].us <= r->read_us[h])
					return -1;
				inflight = true;
				break;
			}
	}
	return inflight ? RES_INFLIGHT : -1;
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
	const struct tserver *s = &S.srv[srv];

	/*
	 * A sealed server (its own row sealed, or not yet in its meta row's
	 * generation) is a down server, its check no answer: its marks are not
	 * read (ticket.c, 12.4). One behind the view is refused, an answer, as
	 * any refusal is.
	 */
	if (s->st.sealed || s->st.own_gen != s->st.gen)
		d = NULL;
	if (d != NULL) {
		memcpy(d->read_due[srv], due, sizeof(d->read_due[srv]));
		d->check_ms[srv] = clk_mono_ms();
		d->read[srv] = true;
		for (unsigned k = 0; k < S.nsrv; k++) {
			d->read_row[srv][k] = sim_in_b(S.srv[srv].st.mark[k], S.srv[srv].st.mark_b[k]);
			d->read_ever[srv][k] = S.srv[srv].copy_ever[k];
			d->read_due_ever[srv][k] = S.srv[srv].due_ever[k];
			d->read_hand[srv][k] = S.srv[srv].hand_lost[k];
			d->read_trunc[srv][k] = S.srv[srv].trunc_lost[k];
		}
	}
	if (verbose && !S.mute)
		printf("  i%u read %s: copy %" PRIu64 " (due %" PRIu64 "), own %" PRIu64 ", counter %"
		    PRIu64 "\n", owner, server_role(srv), S.srv[srv].st.mark[server_partner(srv)], due[server_partner(srv)],
		    S.srv[srv].st.mark[srv], S.srv[srv].st.counter);
}

/* A partition: owner's queries to srv are lost before they reach it. */
static bool
sim_hook_cut(unsigned owner, unsigned srv)
{
	struct idserver *d = sim_owner(owner);

	return d != NULL && srv < S.nsrv && (vclock_now_us() < d->cut_until[srv] ||
	    sim_disks[d - S.ids].doomed);
}

static void
sim_hook_unmodelled(const char *why)
{
	if (S.unmodelled[0] == '\0')
		snprintf(S.unmodelled, sizeof(S.unmodelled), "%s", why);
}

/*
 * The residue class a re-drawn namespace block [lo, lo + B) of srv meets
 * (docs/design.md 13.6, section 14), or -1: none. The taker d's marks when
 * it sent the transaction, its server's own row and d's state file at its
 * start did not hold it (sim_hook_ns_drew). The namespace code has no copy
 * first, so copy lag stays residue there; what is never residue: partner
 * first broken (d's partner p up or connecting, and not read since d's
 * connection to srv came up), p's row holding lo at d's last read of it (the
 * check's marks not merged), or a copy due on p (a witness, a ticket's copy)
 * that never landed there.
 */
#define SIM_NS_RETIRED	(RES_COUNT + 3)	/* ns_sent_unread: refused as retired */
static int
sim_ns_class_at(const struct idserver *d, unsigned srv, unsigned p, unsigned k, uint64_t lo)
{
	/*
	 * No check of p answered this incarnation: residue only when p could
	 * not answer when the ticket was sent (6.4, 13.6): refused or regressed
	 * (partner-absent, as before), or silent for partner_wait_ms
	 * (partner-silent, the default's); before that partner first waits,
	 * and a draw then is a duplicate (seed 16517).
	 */
	if (!d->ns_read[p] && d->ns_sent_unread[srv][p] != SIM_NS_RETIRED)
		return d->ns_sent_unread[srv][p];
	/*
	 * Refused as retired and never read: its marks are read before the
	 * refusal (12.5, ticket_retired), so p is judged by its rows as they
	 * are now, at the draw (what that read would have found, unless a
	 * copy landed on p or a restore took one back since the refusal).
	 */
	if (!d->ns_read[p]) {
		const struct tserver *x = &S.srv[p];
		const struct tserver_ns *n = &x->st.ns[k];

		if (n->state != TS_NS_NONE && tserver_ns_end(n->hw[srv], n->hb[srv], n->b) > lo)
			return -1;
		if (x->ns_copy_ever[k][srv] > lo)
			return x->ns_hand_lost[k][srv] > lo ? -1 : RES_BOTH;
		return x->ns_due_ever[k][srv] > lo ? -1 : RES_NS_UNHELD;
	}
	if (d->ns_read_row[p][k][srv] > lo)
		return -1;
	if (d->ns_read_ever[p][k][srv] > lo)
		return d->ns_read_hand[p][k][srv] > lo ? -1 : RES_BOTH;
	if (d->ns_read_due[p][k][srv] > lo)
		return -1;	/* due there, never written: a rule left out */
	return RES_NS_UNHELD;
}

/*
 * Over every other server p of the region (sim_ns_class_at; the pair: its
 * partner alone): -1 when any p says so; else partner-silent when some p was,
 * both-restored when some p's row lost it to a restore, partner-absent when
 * every p was refused and never read, else unheld (judged by copy first when
 * an ID repeats: sim_ns_copy_class, over the p's marked in unheld).
 */
static int
sim_ns_class(const struct idserver *d, unsigned srv, unsigned k, uint64_t lo, bool *unheld)
{
	bool silent = false, both = false, absent = true;

	if (d == NULL)
		return -1;
	if (d->ns_sent_unasked[srv])
		return -1;
	if (S.srv[srv].ns_hand_lost[k][srv] > lo)
		return -1;	/* its own row lost the block to a hand edit (mark-edits) */
	for (unsigned p = 0; p < S.nsrv; p++) {
		int c = p == srv ? RES_COUNT : sim_ns_class_at(d, srv, p, k, lo);

		if (c < 0)
			return -1;
		if (c == RES_COUNT)
			continue;
		unheld[p] = c == RES_NS_UNHELD;
		silent |= c == RES_SILENT;
		both |= c == RES_BOTH;
		absent &= c == RES_ABSENT;
	}
	return silent ? RES_SILENT : both ? RES_BOTH : absent ? RES_ABSENT : RES_NS_UNHELD;
}

/*
 * A namespace ticket drawn. A first draw raises the server's highest block
 * drawn; a block below it (the counter moved back) that no layer holds is
 * classified now (sim_ns_class), as sim_hook_drew does for the default.
 */
static void
sim_hook_ns_drew(unsigned owner, unsigned srv, const struct tserver_answer *a)
{
	struct idserver *d = sim_owner(owner);
	uint64_t lo = a->ticket * a->ns_b, hi = lo + a->ns_b;
	unsigned k = a->ns;
	bool covered, unheld[TSERVER_MAX] = { false };
	int cls;

	if (!a->ns_ok)
		return;		/* the catalogue row changed: the ticket is not used */
	S.ns_tier_draws += srv >= SERVER_PAIR;
	if (lo >= S.ns_drawn_end[k][srv]) {
		S.ns_drawn_end[k][srv] = hi;
		return;
	}
	S.ns_redraws++;
	S.ns_tier_redraws += srv >= SERVER_PAIR;
	covered = a->ns_own_end > lo || (d != NULL && (d->ns_sent_end[srv] > lo ||
	    d->ns_file_end[k][srv] > lo || d->ns_should[k][srv] > lo));
	cls = covered ? -1 : sim_ns_class(d, srv, k, lo, unheld);
	sim_trace("e%" PRIu64 " redraw %s %s t=%" PRIu64 " (IDs %" PRIu64 "..) for i%u: %s (own "
	    "row end %" PRIu64 ", known %" PRIu64 ")", S.ev, tserver_ns_name(k), server_role(srv),
	    a->ticket, lo, owner, covered ? "covered" : cls < 0 ?
	    "UNCOVERED, no residue condition" : residue_names[cls], a->ns_own_end,
	    d != NULL ? d->ns_sent_end[srv] : 0);
	if (cls < 0)
		return;
	S.nsres = sim_grow(S.nsres, &S.capnsres, S.nnsres, sizeof(*S.nsres));
	S.nsres[S.nnsres] = (struct ns_residue){ k, lo, hi, (enum residue_class)cls, srv,
	    { 0 }, { false } };
	memcpy(S.nsres[S.nnsres].read_us, d->ns_read_us, sizeof(d->ns_read_us));
	for (unsigned p = 0; p < S.nsrv; p++)
		if (p != srv && !d->ns_read[p] && d->ns_sent_unread[srv][p] == SIM_NS_RETIRED)
			S.nsres[S.nnsres].read_us[p] = vclock_now_us();	/* judged now */
	memcpy(S.nsres[S.nnsres].unheld, unheld, sizeof(unheld));
	S.nnsres++;
}

/* A namespace ticket sent: what the taker knew then (ticket.c's flight.known_end). */
static void
sim_hook_ns_sent(unsigned owner, unsigned srv)
{
	struct idserver *d = sim_owner(owner);

	if (d == NULL || srv >= S.nsrv)
		return;
	d->ns_sent_end[srv] = d->t.srv[srv].flight.known_end;
	d->ns_sent_unasked[srv] = false;
	for (unsigned p = 0; p < S.nsrv; p++) {
		if (p == srv)
			continue;
		/*
		 * Refused as retired (12.5, 13.6): its namespace marks are read
		 * before the refusal (ticket_retired), so a refusal without that
		 * read excuses nothing.
		 */
		d->ns_sent_unread[srv][p] = d->t.srv[p].state == TICKET_REFUSED &&
		    server_retired(p) ? SIM_NS_RETIRED : d->t.srv[p].state == TICKET_REFUSED ||
		    d->t.srv[p].state == TICKET_REGRESSED ? RES_ABSENT :
		    (uint64_t)clk_mono_ms() >= d->check_ms[p] + S.cfg.partner_wait_ms ?
		    RES_SILENT : -1;
		d->ns_sent_unasked[srv] |= (ticket_up(&d->t.srv[p]) ||
		    d->t.srv[p].state == TICKET_CONNECTING) &&
		    d->ns_read_us[p] <= d->ns_conn_us[srv];
	}
}

/*
 * owner's tier connection to srv connected, or its namespace check of srv
 * was read (after the idserver took it): what srv's rows held then; at a
 * connection's first check, the copies of the others' marks it is due to
 * write there (the witness point, whether or not the witness is sent).
 */
static void
sim_hook_ns_seen(unsigned owner, unsigned srv, bool connect)
{
	struct idserver *d = sim_owner(owner);
	const struct tserver *s = &S.srv[srv];

	if (d == NULL || srv >= S.nsrv)
		return;
	if (connect) {
		d->ns_conn_us[srv] = vclock_now_us();
		d->ns_fresh[srv] = true;
		d->ns_due_set[srv] = false;
		return;
	}
	d->ns_read_us[srv] = vclock_now_us();
	d->ns_read[srv] = true;
	for (unsigned k = 0; k < TSERVER_NS; k++)
		for (unsigned j = 0; j < S.nsrv; j++) {
			const struct tserver_ns *n = &s->st.ns[k];
			const char *name = tserver_ns_name(k);

			/* Every mark read of a namespace it knows is kept in its file. */
			if (n->state != TS_NS_NONE && n->state != TS_NS_DROPPED && n->hw[j] != 0 &&
			    nss_find(&d->t.nss, name, strlen(name)) != NULL &&
			    tserver_ns_end(n->hw[j], n->hb[j], n->b) > d->ns_handed[k][j])
				d->ns_handed[k][j] = tserver_ns_end(n->hw[j], n->hb[j], n->b);
			d->ns_read_row[srv][k][j] = s->st.ns[k].state == TS_NS_NONE ? 0 :
			    tserver_ns_end(s->st.ns[k].hw[j], s->st.ns[k].hb[j], s->st.ns[k].b);
			d->ns_read_ever[srv][k][j] = s->ns_copy_ever[k][j];
			d->ns_read_hand[srv][k][j] = s->ns_hand_lost[k][j];
			d->ns_read_due[srv][k][j] = s->ns_due_ever[k][j];
		}
	if (!d->ns_fresh[srv])
		return;
	d->ns_fresh[srv] = false;
	/*
	 * A server refused as retired: this was its namespace marks' read
	 * before the refusal (ticket_retired, 12.5), not a new connection's
	 * first check; no witness is sent there and no copy is due.
	 */
	if (server_retired(srv) && d->t.srv[srv].state == TICKET_REFUSED)
		return;
	d->ns_due_set[srv] = true;
	memset(d->ns_due[srv], 0, sizeof(d->ns_due[srv]));
	for (unsigned k = 0; k < TSERVER_NS; k++) {
		const char *name = tserver_ns_name(k);
		const struct nsrv *ns = nss_find(&d->t.nss, name, strlen(name));

		if (ns == NULL || !ns->v[srv].ready || ns->v[srv].b == 0 ||
		    ns->seen[srv] != d->t.nss.last_check[srv])
			continue;
		for (unsigned j = 0; j < S.nsrv; j++) {
			const struct state_ns_mark *m = state_ns_get(&d->sf.ns, name, j);

			if (j != srv)
				d->ns_due[srv][k][j] = ns_known_end(ns, j,
				    m != NULL ? m->high_water : 0, m != NULL ? m->block_size : 0);
		}
	}
}

/*
 * A namespace check's answer reaches owner: read from now on, so a namespace
 * ticket the idserver sends on another server while taking it (partner
 * first met by this very read) counts it (sim_hook_ns_sent).
 */
static void
sim_hook_ns_answered(unsigned owner, unsigned srv)
{
	struct idserver *d = sim_owner(owner);

	if (d != NULL && srv < S.nsrv)
		d->ns_read_us[srv] = vclock_now_us();
}

/*
 * A query of owner's tier connection to srv ran: the witness point passed
 * on it (the copies were due from the first query after the first check,
 * the witness itself or whatever came next).
 */
static void
sim_hook_ns_ran(unsigned owner, unsigned srv)
{
	struct idserver *d = sim_owner(owner);

	if (d == NULL || srv >= S.nsrv || !d->ns_due_set[srv])
		return;
	d->ns_due_set[srv] = false;
	for (unsigned k = 0; k < TSERVER_NS; k++)
		for (unsigned j = 0; j < S.nsrv; j++)
			tserver_ns_due(&S.srv[srv], k, j, d->ns_due[srv][k][j]);
}

/*
 * The simulated machine's identity (statefile_whoami_fn): one machine, one
 * boot, one pid namespace for every idserver, the same on every host that
 * runs the simulation, since the owner line is part of the state file's
 * record and its length moves the disks' draws (as the lease holder's did,
 * sim_ids_start). Each incarnation's pid and start are set after the open.
 */
static void
sim_whoami(struct state_owner *me)
{
	memset(me, 0, sizeof(*me));
	snprintf(me->machine, sizeof(me->machine), "%s", "5151515151515151515151515151515a");
	snprintf(me->boot, sizeof(me->boot), "%s", "b0075151-5151-4151-8151-515151515151");
	me->pidns = UINT64_C(4026531836);
	me->pid = SIM_PID_BASE;
}

/*
 * The lease's home and holder (lease_whoami_fn): none here, since
 * sim_ids_start and regions_ids_start set both after lease_init (a draw of
 * the home, a holder of one length), where the real host, pid and random
 * nonce cost three system calls per start and were overwritten.
 */
static void
sim_lease_whoami(struct lease *l)
{
	(void)l;
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

/* The lease uses a server only while the ticket tier vouches for it (source_trust). */
static enum lease_trust
sim_trust(void *arg, int server)
{
	const struct idserver *d = arg;

	return source_trust(&d->t, server);
}

/*
 * The owner rule's process table (statefile.h's running): every idserver of
 * the simulation is one process, so each incarnation is stamped as a process
 * of its own (pid SIM_PID_BASE + who, start time who), running while it is on.
 */
static bool
sim_running(uint64_t pid, uint64_t start)
{
	return pid == SIM_PID_BASE + start && sim_owner((unsigned)start) != NULL;
}

static void
sim_released(void *arg)
{
	((struct idserver *)arg)->released = true;
}

/* The servers' NOW(3): the true wall clock, unix ms. */
static uint64_t
sim_now_ms(void)
{
	return (uint64_t)(vclock_unix_us() / 1000);
}

/*
 * A state file found locked at a start: what holds its lock, said for the
 * next run that meets it (tests/sim.sh ran once into one it could not
 * repeat, design 14): this process's descriptors of the same file, with the
 * idserver each belongs to, and /proc/locks' holder of its inode.
 */
static void
sim_lock_holders(const char *path)
{
	struct stat st, fst;
	char line[256];
	FILE *fp;

	if (stat(path, &st) != 0)
		return;
	for (int fd = 0; fd < 1024; fd++) {
		unsigned who = 0, slot = SIM_IDSERVERS;

		if (fstat(fd, &fst) != 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino)
			continue;
		for (unsigned k = 0; k < SIM_IDSERVERS; k++)
			if (S.ids[k].sf.fd == fd) {
				slot = k;
				who = S.ids[k].who;
			}
		if (slot < SIM_IDSERVERS)
			printf("idsim:   held here by fd %d, slot %u's (i%u, %s)\n", fd, slot, who,
			    S.ids[slot].on ? "on" : "off");
		else
			printf("idsim:   held here by fd %d, no idserver's\n", fd);
	}
	fp = fopen("/proc/locks", "re");
	while (fp != NULL && fgets(line, sizeof(line), fp) != NULL) {
		unsigned long long ino = 0;
		unsigned pid = 0;
		char kind[16];

		if (sscanf(line, "%*u: %15s %*s %*s %u %*x:%*x:%llu", kind, &pid, &ino) == 3 &&
		    ino == (unsigned long long)st.st_ino)
			printf("idsim:   /proc/locks: %s held by pid %u%s\n", kind, pid,
			    pid == (unsigned)getpid() ? " (this process)" : "");
	}
	if (fp != NULL)
		fclose(fp);
}

/*
 * This process's directory of state files (empty: none yet): made by the
 * first schedule, emptied at each schedule's start and end, and removed at
 * exit or on a fatal signal, whatever the outcome, so a failed or killed run
 * leaves nothing in /dev/shm (a kill -9 still does: nothing runs).
 */
static char sim_dir_live[sizeof(S.dir)];
static bool sim_dir_used;	/* a schedule began in it and did not empty it at its end */

/*
 * The state files' directory (statefile_mkdir_fn): this process's exists
 * from its first schedule on, so every open of a file in it was a failed
 * mkdir(2); any other is made as statefile_open makes it.
 */
static int
sim_mkdir(const char *dir, mode_t mode)
{
	if (sim_dir_live[0] != '\0' && strcmp(dir, sim_dir_live) == 0) {
		errno = EEXIST;
		return -1;
	}
	return mkdir(dir, mode);
}

/*
 * A first write's directory sync (statefile_sync_dir_fn): every state file
 * is in this process's directory (on /dev/shm, else /tmp), which exists
 * from the first schedule to exit, so the open, fsync and close it took
 * succeeded and changed nothing the model keeps: a name made durable is not
 * simulated (only the files' sectors are, sim/disk.h).
 */
static bool
sim_sync_dir(const char *path)
{
	(void)path;
	return true;
}

/* Every entry of dir: system calls only, so a signal handler may. */
static void
sim_dir_empty(const char *dir)
{
	struct ent {
		uint64_t	ino;
		int64_t		off;
		unsigned short	reclen;
		unsigned char	type;
		char		name[];
	};
	char buf[4096];
	long n;
	int fd;

	if (dir[0] == '\0')
		return;
	for (unsigned pass = 0; pass < 8; pass++) {
		bool any = false;

		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			break;
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
			for (long at = 0; at < n; at += ((struct ent *)(void *)(buf + at))->reclen) {
				const char *name = ((struct ent *)(void *)(buf + at))->name;

				if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
					(void)unlinkat(fd, name, 0);
					any = true;
				}
			}
		close(fd);
		if (!any)
			break;
	}
}

/* Every entry of dir, then dir: system calls only, so a signal handler may. */
static void
sim_dir_remove(char *dir)
{
	if (dir[0] == '\0')
		return;
	sim_dir_empty(dir);
	(void)rmdir(dir);
	dir[0] = '\0';
}

static void
sim_dir_atexit(void)
{
	sim_dir_remove(sim_dir_live);
}

static void
sim_dir_signal(int sig)
{
	sim_dir_remove(sim_dir_live);
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);	/* pid 1 of a pid namespace (unshare -p) ignores its own */
}

/*
 * Starts idserver d as main.c does: its state file (kept, or none), a tier,
 * the generator and the lease (resumed from the file when lease_resume says
 * so), the file stamped with this incarnation, the probes and the first claim.
 */
static bool
sim_ids_start(struct idserver *d, bool file)
{
	char err[256], why[512];
	unsigned slot = (unsigned)(d - S.ids);
	struct snowflake_config sc = { S.cfg.backstep_tolerance_ms, S.cfg.clock_wait_ms };
	bool resumed;

	/*
	 * lease_resume writes why only when it refuses: a resumed lease left
	 * it as the stack had it, and the trace's cut below scanned that
	 * (valgrind: a jump on uninitialised bytes; past why's end it would
	 * write there).
	 */
	why[0] = '\0';
	/*
	 * Started twice without a stop between, its open file would be left
	 * open (statefile_open forgets it) and found locked by that descriptor:
	 * said as what it is, not as a lock.
	 */
	if (d->on) {
		printf("idsim: seed %" PRIu64 ": i%u (slot %u) started again while it runs\n",
		    S.seed, d->who, slot);
		return false;
	}
	d->who = S.next_who++;
	d->file = file;
	snprintf(d->path, sizeof(d->path), "%s/state%u", S.dir, slot);
	memset(d->read_due, 0, sizeof(d->read_due));
	memset(d->read, 0, sizeof(d->read));
	for (unsigned k = 0; k < S.nsrv; k++)
		d->check_ms[k] = clk_mono_ms();
	if (!file) {
		unlink(d->path);
		memset(d->file_must, 0, sizeof(d->file_must));
	}
	if (!statefile_open(&d->sf, file ? d->path : NULL, err, sizeof(err))) {
		printf("idsim: state file %s: %s\n", d->path, err);
		sim_lock_holders(d->path);
		return false;
	}
	d->sf.datasync = sim_datasync;
	d->sf.pwrite = disk_pwrite;	/* a write moves the file's ctime (disk.h) */
	disk_fd(d->sf.fd, &d->sf.dev, &d->sf.ino);
	if (!file)
		disk_forget(&sim_disks[slot]);
	else if (disk_on()) {
		d->sf.datasync = disk_datasync;
		disk_attach(&sim_disks[slot], d->sf.fd, d->path);
	}
	d->sf.running = sim_running;
	d->sf.me.pid = SIM_PID_BASE + d->who;
	d->sf.me.start = d->who;
	snprintf(d->sf.rec.host, sizeof(d->sf.rec.host), "sim%u", slot);
	for (unsigned k = 0; k < SERVER_MAX; k++) {
		d->file_mark[k] = k < server_count() ?
		    state_mark_ticket(&d->sf.rec.mark[k], S.b) : 0;
		if (d->file_must[k] > d->file_mark[k]) {
			sim_trace("e%" PRIu64 " i%u's file holds %s's mark %" PRIu64 ", below %" PRIu64
			    ", banked on it", S.ev, d->who, server_role(k), d->file_mark[k],
			    d->file_must[k]);
			d->file_mark[k] = d->file_must[k];
		}
	}
	for (unsigned k = 0; k < TSERVER_NS; k++)
		for (unsigned j = 0; j < S.nsrv; j++) {
			const struct state_ns_mark *m = state_ns_get(&d->sf.ns, tserver_ns_name(k), j);

			d->ns_file_end[k][j] = m != NULL ? state_ns_end(m) : 0;
		}
	if (d->sf.origin != STATEFILE_LOADED)
		memset(d->ns_handed, 0, sizeof(d->ns_handed));
	memcpy(d->ns_should, d->ns_handed, sizeof(d->ns_should));
	memset(d->ns_conn_us, 0, sizeof(d->ns_conn_us));
	memset(d->ns_fresh, 0, sizeof(d->ns_fresh));
	memset(d->ns_read, 0, sizeof(d->ns_read));
	memset(d->ns_read_us, 0, sizeof(d->ns_read_us));
	memset(d->ns_due_set, 0, sizeof(d->ns_due_set));
	memset(d->ns_sent_end, 0, sizeof(d->ns_sent_end));
	memset(d->ns_sent_unasked, 0, sizeof(d->ns_sent_unasked));
	memset(d->ns_sent_unread, 0, sizeof(d->ns_sent_unread));
	simdb_owner(d->who);
	if (!tier_init(&d->t, S.base, &S.cfg, &d->sf, &simdb_ops, sim_on_change, d)) {
		printf("idsim: tier_init failed\n");
		statefile_close(&d->sf);
		return false;
	}
	snowflake_init(&d->gen, &sc);
	if (!lease_init(&d->lease, S.base, &S.cfg, &d->gen, &d->sf, &simdb_ops,
	    sim_clock_ms[slot], sim_on_change, sim_trust, d)) {
		printf("idsim: lease_init failed\n");
		tier_free(&d->t);
		statefile_close(&d->sf);
		return false;
	}
	d->lease.home = (unsigned)rng_below(SERVER_PAIR);	/* not the real pid's parity */
	/*
	 * Not the real host, pid and random nonce either: the holder is written
	 * into the state file's lease line, so its length moved the record's
	 * sectors (the disks' draws) with the pid's digits, and a seed replayed
	 * another trace in another process (seed 19602 under unshare -p). One
	 * holder per incarnation, of one length: pid SIM_PID_BASE + who.
	 */
	snprintf(d->lease.holder, sizeof(d->lease.holder), "sim:%u:%016" PRIx64 ":%s",
	    SIM_PID_BASE + d->who, rng_mix(SIM_PID_BASE + d->who), LEASE_KIND_IDSERVER);
	resumed = lease_resume(&d->lease, SIM_SERVERS, why, sizeof(why));
	/* The trace keeps the reason's words, not its inode numbers and real times. */
	why[strcspn(why, "(0123456789")] = '\0';
	if (d->sf.origin == STATEFILE_LOADED && d->sf.rec.lease.held)
		sim_trace("e%" PRIu64 " i%u lease of worker %u %s%s", S.ev, d->who,
		    d->sf.rec.lease.worker, resumed ? "resumed" : "not resumed: ",
		    resumed ? "" : why);
	if (!resumed)
		d->sf.rec.lease.held = false;
	snprintf(d->sf.rec.servers, sizeof(d->sf.rec.servers), "%s", SIM_SERVERS);
	d->sf.rec.owner = d->sf.me;
	if (!statefile_save(&d->sf)) {
		if (!disk_on())
			printf("idsim: state file %s: %s\n", d->path, d->sf.last_error);
		lease_free(&d->lease);
		tier_free(&d->t);
		statefile_close(&d->sf);
		disk_detach(&sim_disks[slot]);
		if (!disk_on())
			return false;
		/* Its disk failed the start-up save: it exits, started again at the next event. */
		sim_trace("e%" PRIu64 " i%u exits: its first save failed", S.ev, d->who);
		d->start_again = true;
		return true;
	}
	d->start_again = false;
	source_init(&d->src, &d->t, &d->gen, &d->lease, sim_clock_us[slot], S.cfg.refill_wait_ms);
	d->on = true;
	d->released = false;
	tier_start(&d->t);
	lease_start(&d->lease);
	return true;
}

/*
 * Stops idserver d: clean (its lease released, waited for in virtual time,
 * at most two seconds) or as a crash (nothing more is written anywhere).
 */
static void
sim_ids_stop(struct idserver *d, bool clean)
{
	if (!d->on)
		return;
	if (clean && d->lease.state == LEASE_HELD) {
		d->released = false;
		lease_release(&d->lease, sim_released, d);
		sim_stopping++;
		for (unsigned k = 0; k < 100 && !d->released && d->on; k++)
			sim_run(20000);
		sim_stopping--;
		sim_trace("e%" PRIu64 " i%u lease %s", S.ev, d->who, d->released ?
		    "released" : "release still in flight");
	}
	S.fb_claims += d->lease.stats.claims;
	S.fb_resumed += d->lease.stats.resumed;
	S.fb_adopted += d->lease.stats.adopted;
	S.fb_lost += d->lease.stats.lost;
	S.fb_releases += d->lease.stats.releases;
	S.fb_refused += d->lease.stats.skew_refusals + d->lease.stats.extend_skew_refusals;
	lease_free(&d->lease);
	tier_free(&d->t);
	statefile_close(&d->sf);
	disk_detach(&sim_disks[d - S.ids]);
	d->on = false;
}

/* Stops and starts d again (on its file or without one). */
static void
sim_restart(struct idserver *d, bool file, bool clean)
{
	sim_ids_stop(d, clean);
	if (file && !clean && disk_power_drawn())
		sim_power_loss(d);
	if (!sim_ids_start(d, file))
		S.failed = true;
}

/* d's host lost its power (d is stopped): its file is what its disk kept. */
static void
sim_power_loss(struct idserver *d)
{
	char what[96];

	if (!disk_power_loss(&sim_disks[d - S.ids], d->path, what, sizeof(what)))
		S.failed = true;
	sim_trace("e%" PRIu64 " i%u's host lost its power: %s", S.ev, d->who, what);
}

/*
 * With disk faults, at this event an idserver's host may lose its power
 * (drawn from the disks' own generator, disk.h): it restarts on its file,
 * which holds what its disk kept. An event left out of a replay draws it
 * and does nothing.
 */
static void
sim_power_event(void)
{
	int slot = disk_power_event(S.nids);
	struct idserver *d;

	if (slot < 0 || (S.replay && S.ev < SIM_EVENTS_MAX && S.ev_off[S.ev]))
		return;
	d = &S.ids[slot];
	if (!d->on || !d->file)
		return;
	if (!S.replay && S.ev < SIM_EVENTS_MAX && S.did[S.ev] == EV_NONE)
		S.did[S.ev] = EV_POWER;
	sim_trace("e%" PRIu64 " i%u crashed, its host without power; restarts on its file", S.ev,
	    d->who);
	sim_ids_stop(d, false);
	sim_power_loss(d);
	if (!sim_ids_start(d, true))
		S.failed = true;
}

/*
 * An idserver whose fdatasync was its host's last act (disk.h) crashes at
 * once, its host without power, and restarts on its file; its queries since
 * that sync were lost (sim_hook_cut). Not inside a clean stop's wait.
 */
static void
sim_doomed(void)
{
	if (sim_stopping > 0 || !disk_on())
		return;
	for (unsigned i = 0; i < S.nids; i++) {
		struct idserver *d = &S.ids[i];

		if (!d->on || !sim_disks[i].doomed)
			continue;
		sim_trace("e%" PRIu64 " i%u crashed right after an fdatasync, restarts on its file",
		    S.ev, d->who);
		sim_ids_stop(d, false);
		sim_power_loss(d);
		if (!sim_ids_start(d, true))
			S.failed = true;
	}
}

/* cp from to: a new file (a new inode) renamed over to, as cp to a temporary name does. */
static bool
sim_file_copy(const char *from, const char *to)
{
	static unsigned char buf[DISK_BYTES];
	char tmp[200];
	int in = open(from, O_RDONLY);
	struct stat st;
	ssize_t n;

	if (in < 0)
		return false;
	if (fstat(in, &st) != 0 || st.st_size > (off_t)sizeof(buf)) {
		close(in);
		return false;	/* larger than statefile.c writes: not the model's */
	}
	n = disk_pread(in, buf, sizeof(buf), 0);
	close(in);
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	if (n < 0 || !disk_write_file(tmp, buf, (size_t)n) || rename(tmp, to) != 0)
		return false;
	disk_changed(to);	/* a new inode, its ctime now */
	return true;
}

/*
 * Puts d's older contents back into its file, in place (cp old state_file:
 * the same inode, its ctime moved to now). The contents were taken at least
 * SIM_OLD_MIN_US of virtual time ago, past the stamp's 200 ms slack: the
 * stamp, on the virtual clock as the file's ctime is (disk.h), sees their
 * age.
 */
static bool
sim_file_back(struct idserver *d)
{
	uint64_t age = vclock_now_us() - d->old_us;
	bool ok;

	if (d->old == NULL || age < SIM_OLD_MIN_US || access(d->path, F_OK) != 0)
		return false;
	ok = disk_write_file(d->path, d->old, d->oldlen);
	disk_changed(d->path);
	free(d->old);
	d->old = NULL;
	memcpy(d->ns_handed, d->ns_old_handed, sizeof(d->ns_handed));
	memcpy(d->file_must, d->old_must, sizeof(d->file_must));
	return ok;
}

/*
 * Takes a copy of d's whole file as it is now, to be put back later (its
 * slot 1 lies past 260 KiB: a copy cut short would put back an older record
 * than the file held, docs/design.md sections 6.10 and 14).
 * Nothing is kept unless the whole file was read.
 */
static void
sim_file_keep(struct idserver *d)
{
	int fd = open(d->path, O_RDONLY);
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 || (buf = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return;
	}
	n = disk_pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return;
	}
	free(d->old);
	d->old = buf;
	d->oldlen = (size_t)n;
	d->old_us = vclock_now_us();
	memcpy(d->ns_old_handed, d->ns_handed, sizeof(d->ns_handed));
	memcpy(d->old_must, d->file_must, sizeof(d->file_must));
}

/*
 * Advances virtual time by us in steps of 500 us, letting every timer that
 * falls due run at the end of the step it falls in. One non-blocking loop
 * runs until nothing is active (libevent goes round again while callbacks
 * ran, so a timer a callback adds already due runs in the same call): a
 * second call at the same time, or a call before the next timer's deadline,
 * would run nothing, and is left out (docs/design.md section 14: speed).
 */
static void
sim_run(uint64_t us)
{
	uint64_t step = 500;
	int64_t due = INT64_MIN;

	while (us > 0) {
		uint64_t d = us < step ? us : step;
		int64_t now = vclock_unix_us();

		/* Whole steps that all end before the next deadline pass at once. */
		if (now + (int64_t)step < due && us >= step) {
			uint64_t n = (uint64_t)(due - now - 1) / step;

			n = n < us / step ? n : us / step;
			vclock_advance_us(n * step);
			us -= n * step;
			continue;
		}
		vclock_advance_us(d);
		us -= d;
		if (now + (int64_t)d < due)
			continue;
		event_base_loop(S.base, EVLOOP_NONBLOCK);
		sim_doomed();
		live_step();	/* reads only (live.c), but under --stall */
		due = vclock_next_due(S.base);
		due = regions_run(due);	/* the other regions' loops (regions.c) */
	}
	for (unsigned i = 0; i < S.nsrv; i++)
		if (S.down_until[i] != 0 && vclock_now_us() >= S.down_until[i]) {
			S.down_until[i] = 0;
			S.srv[i].up = true;
			sim_trace("e%" PRIu64 " %s up", S.ev, server_role(i));
		}
	sim_ro_end();
	live_step();
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
	if (lo >= (UINT64_C(1) << 53))
		S.fb_ids += hi - lo;
	if (o == NULL)
		return 0;
	id = lo > o->lo ? lo : o->lo;
	/* A Snowflake ID (2^53 and up): no residue is documented for the fallback. */
	if (id >= (UINT64_C(1) << 53)) {
		sim_trace("e%" PRIu64 " DUPLICATE Snowflake ID %" PRIu64 " (worker %u, ts %" PRIu64
		    ") by i%u at e%" PRIu64 " and by i%u at e%" PRIu64, S.ev, id,
		    (unsigned)((id >> LAYOUT_SEQ_BITS) & LAYOUT_WORKER_MAX),
		    id >> (LAYOUT_SEQ_BITS + LAYOUT_WORKER_BITS), o->who, o->ev, d->who, S.ev);
		return 1;
	}
	t = layout_ticket_of(id, S.b);
	/*
	 * Its ticket t alone names the re-draw: not whose residue modulo the
	 * view's increment t is now, since a raise moves the view to M = 4 while
	 * a pair's ticket drawn under M = 2 is handed out (seed 10622, --tiers all).
	 */
	for (size_t k = 0; k < S.nresidue; k++)
		if (S.residue[k].t == t)
			cls = (int)S.residue[k].cls;
	/* Regions under different M (regions.c): 12.3's residue, exactly its condition. */
	if (cls < 0 && regions_residue(o->who, d->who, t))
		cls = RES_REGIONS_M;
	sim_trace("e%" PRIu64 " %s%s: ID %" PRIu64 " (ticket %" PRIu64 ") by i%u at e%" PRIu64
	    " and by i%u at e%" PRIu64, S.ev, cls >= 0 ? "RESIDUE " : "DUPLICATE",
	    cls >= 0 ? residue_names[cls] : "", id, t, o->who, o->ev, d->who, S.ev);
	if (cls >= 0)
		S.classes[cls]++;
	return cls >= 0 ? 2 : 1;
}

/* Records [lo, hi) handed out by another region's idserver who (regions.c), with region 0's. */
static int
sim_region_record(unsigned who, uint64_t lo, uint64_t hi)
{
	static struct idserver d;	/* sim_record reads its number only */

	d.who = who;
	return sim_record(&d, lo, hi);
}

static const struct regions_io sim_regions_io = { sim_trace, sim_region_record };

/*
 * Namespace IDs taken: Snowflake IDs (the fallback) go with every other
 * Snowflake ID; ticket IDs into the namespace's own set, over every
 * incarnation of its name (docs/design.md 13.1: unique within a namespace).
 */
static int
sim_record_ns(struct idserver *d, unsigned k, uint64_t lo, uint64_t hi)
{
	const struct range *o;
	int cls = -1;

	if (lo >= (UINT64_C(1) << 53))
		return sim_record(d, lo, hi);
	S.ns_ids += hi - lo;
	o = ranges_add(&S.nsr[k], lo, hi, d->who, S.ev);
	if (o == NULL) {
		const char *name = tserver_ns_name(k);
		const struct nsrv *ns = nss_find(&d->t.nss, name, strlen(name));
		uint64_t b = ns != NULL ? ns->b : 0;

		/* Each block it handed IDs of: its file holds the block's mark. */
		for (uint64_t t = b ? lo / b : 1, last = b ? (hi - 1) / b : 0; t <= last; t++)
			for (unsigned j = 0; j < S.nsrv; j++)
				if (server_owns_ticket(j, t) && (t + 1) * b > d->ns_handed[k][j])
					d->ns_handed[k][j] = (t + 1) * b;
		return 0;
	}
	lo = lo > o->lo ? lo : o->lo;
	for (size_t r = 0; r < S.nnsres; r++)
		if (S.nsres[r].ns == k && S.nsres[r].lo <= lo && lo < S.nsres[r].hi)
			cls = S.nsres[r].cls == RES_NS_UNHELD ? sim_ns_copy_class(&S.nsres[r], lo) :
			    (int)S.nsres[r].cls;
	sim_trace("e%" PRIu64 " %s%s: namespace %s ID %" PRIu64 " by i%u at e%" PRIu64
	    " and by i%u at e%" PRIu64, S.ev, cls >= 0 ? "RESIDUE " : "DUPLICATE",
	    cls >= 0 ? residue_names[cls] : "", tserver_ns_name(k), lo, o->who, o->ev, d->who,
	    S.ev);
	if (cls >= 0)
		S.classes[cls]++;
	return cls >= 0 ? 2 : 1;
}

/* A taker of namespace k on idserver d (source.c's source_take); -1: not served there. */
static int
sim_take_ns(struct idserver *d, unsigned k)
{
	const char *name = tserver_ns_name(k), *why = "";
	struct nsrv *ns = source_ns_find(&d->src, name, strlen(name));
	uint64_t out[SIM_TAKE_MAX], b;
	unsigned n, wait_us = 0;
	bool block = rng_permille(500), may_fallback = rng_permille(300);
	enum source_status st;
	int r = 0;

	if (ns == NULL || ns->b == 0)
		return -1;
	b = ns->b;
	n = 1 + (unsigned)rng_below(block ? (b < SNOWFLAKE_TAKE_MAX ? b : SNOWFLAKE_TAKE_MAX) :
	    (56 * b < SIM_TAKE_MAX ? 56 * b : SIM_TAKE_MAX));
	st = source_take(&d->src, ns, block, n, out, may_fallback, &wait_us, &why);
	if (st != SOURCE_OK) {
		sim_trace("e%" PRIu64 " i%u %s %s %u: none (%d)", S.ev, d->who, name,
		    block ? "block" : "ids", n, (int)st);
		return 0;
	}
	sim_trace("e%" PRIu64 " i%u %s %s %u: %" PRIu64, S.ev, d->who, name, block ? "block" :
	    "ids", n, out[0]);
	if (block)
		return sim_record_ns(d, k, out[0], out[0] + n);
	for (unsigned i = 0, start = 0; i < n && r == 0; i++)
		if (i + 1 == n || out[i + 1] != out[i] + 1) {
			r = sim_record_ns(d, k, out[start], out[i] + 1);
			start = i + 1;
		}
	return r;
}

/*
 * The operator's namespace procedures on namespace k, as idgenctl ns does
 * them (docs/design.md 13.3), applied to the servers' tables directly (the
 * simulation does not run ctl/ns.c): create in two phases (phase 1 writes
 * every server's catalogue row 'creating', its table and its marks; each
 * later step flips one server's row to 'ready'), drop (every row
 * 'dropped', tables and marks kept), and create again over a dropped name:
 * every marks row raised to t0 - 1 in the new B, t0 above every mark the
 * name left in ID space, each counter set to its first ticket at or above
 * t0. A backup taken before a phase 1 or a drop is not restored after it
 * (the operator's rule; section 14). whole: both phases at once.
 */
static void
sim_ns_op(unsigned k, bool whole)
{
	static const uint64_t bs[] = { 1, 4, 16, 64, 4096 };
	unsigned creating = 0, ready = 0, dropped = 0, none = 0;
	uint64_t b, end = 0, t0, m = server_increment();
	bool refuse;

	if (!ctl_driver) {
		sim_ns_run(k, whole);
		return;
	}

	for (unsigned i = 0; i < S.nsrv; i++) {
		enum tserver_ns_state st = S.srv[i].st.ns[k].state;

		creating += st == TS_NS_CREATING;
		ready += st == TS_NS_READY;
		dropped += st == TS_NS_DROPPED;
		none += st == TS_NS_NONE;
	}
	if (creating > 0) {
		unsigned pick = (unsigned)rng_below(creating);

		for (unsigned i = 0; i < S.nsrv; i++)
			if (S.srv[i].st.ns[k].state == TS_NS_CREATING && (whole || pick-- == 0)) {
				S.srv[i].st.ns[k].state = TS_NS_READY;
				sim_trace("e%" PRIu64 " ns %s ready on %s", S.ev, tserver_ns_name(k),
				    server_role(i));
			}
		S.ns_ops++;
		return;
	}
	if (ready == S.nsrv) {
		if (!rng_permille(200))
			return;
		for (unsigned i = 0; i < S.nsrv; i++) {
			S.srv[i].st.ns[k].state = TS_NS_DROPPED;
			S.srv[i].have_backup = false;
		}
		sim_trace("e%" PRIu64 " ns %s dropped", S.ev, tserver_ns_name(k));
		S.ns_ops++;
		return;
	}
	if (none + dropped != S.nsrv)
		return;
	b = bs[rng_below(sizeof(bs) / sizeof(bs[0]))];
	refuse = rng_permille(500);
	for (unsigned i = 0; i < S.nsrv; i++)
		for (unsigned j = 0; j < S.nsrv; j++) {
			const struct tserver_ns *n = &S.srv[i].st.ns[k];
			uint64_t e = n->state == TS_NS_NONE || (n->hw[j] == 0 && n->hb[j] == 0) ? 0 :
			    tserver_ns_end(n->hw[j], n->hb[j], n->b);

			end = e > end ? e : end;
		}
	t0 = (end + b - 1) / b;
	t0 = t0 > 1 ? t0 : 1;
	for (unsigned i = 0; i < S.nsrv; i++) {
		struct tserver_ns *n = &S.srv[i].st.ns[k];
		uint64_t o = server_offset(i) % m;

		if (n->state == TS_NS_NONE)
			memset(n, 0, sizeof(*n));
		n->state = TS_NS_CREATING;
		n->b = b;
		n->refuse = refuse;
		n->start_above = 0;
		for (unsigned j = 0; j < S.nsrv; j++)
			if (t0 > 1 && tserver_ns_end(n->hw[j], n->hb[j], b) < t0 * b) {
				n->hw[j] = t0 - 1;
				n->hb[j] = b;
			}
		n->counter = t0 + (o + m - t0 % m) % m;
		S.srv[i].have_backup = false;
	}
	for (unsigned i = 0; i < S.nsrv; i++)
		for (unsigned j = 0; j < S.nsrv; j++)
			if (S.ns_drawn_end[k][j] > S.ns_drawn_end[k][i])
				S.ns_drawn_end[k][i] = S.ns_drawn_end[k][j];
	sim_trace("e%" PRIu64 " ns %s %s: B=%" PRIu64 " %s, first ticket %" PRIu64, S.ev,
	    tserver_ns_name(k), dropped ? "created again" : "created", b,
	    refuse ? "refuse" : "snowflake", t0);
	S.ns_ops++;
	if (whole)
		sim_ns_op(k, true);
}

/*
 * The operator's namespace procedures on namespace k run for real (--ctl
 * real): `idgenctl ns create` (ctl/ns.c: both phases in one run) again while
 * a create is unfinished, with the B and policy its rows name; `ns drop
 * --force` of a name ready everywhere in one op in five (the 600 s refusal
 * reads a time the model lacks); a create over a name absent or dropped
 * everywhere, of a B and policy drawn. Killed in half the runs at a
 * statement drawn from the seed (whole: never; the schedule's first create),
 * run again at a later op. A backup taken before a create's run or a drop
 * is not restored after it (the operator's rule; section 14).
 */
static void
sim_ns_run(unsigned k, bool whole)
{
	static const uint64_t bs[] = { 1, 4, 16, 64, 4096 };
	unsigned creating = 0, ready = 0, dropped = 0, none = 0, kill, how, sent = 0;
	char bbuf[24], name[8], verb[8], opt1[16], opt2[16], val2[16], opt3[16];
	char *argv[8] = { verb, name, opt1, bbuf, opt2, val2, opt3, NULL };
	int argc = 6, rc;
	bool refuse = false;
	uint64_t b = 0;

	for (unsigned i = 0; i < S.nsrv; i++) {
		const struct tserver_ns *n = &S.srv[i].st.ns[k];

		creating += n->state == TS_NS_CREATING;
		ready += n->state == TS_NS_READY;
		dropped += n->state == TS_NS_DROPPED;
		none += n->state == TS_NS_NONE;
		if (n->state == TS_NS_CREATING) {
			b = n->b;
			refuse = n->refuse;
		}
	}
	snprintf(name, sizeof(name), "%s", tserver_ns_name(k));
	snprintf(verb, sizeof(verb), "create");
	snprintf(opt1, sizeof(opt1), "--block-size");
	snprintf(opt2, sizeof(opt2), "--fallback");
	if ((ctl_ops_on & CTLOP_NS_RAISE) && !S.ns_dropping[k] && creating == 0 &&
	    ready == S.nsrv && sim_ns_raise(k))
		return;
	S.ns_raise_above[k] = 0;	/* a killed raise of a name no longer ready: not again */
	if (S.ns_dropping[k] || (creating == 0 && ready == S.nsrv)) {
		if (!S.ns_dropping[k] && !rng_permille(200))
			return;
		snprintf(verb, sizeof(verb), "drop");
		snprintf(opt1, sizeof(opt1), "--force");
		argc = 3;
	} else if (creating == 0 && none + dropped == S.nsrv) {
		b = bs[rng_below(sizeof(bs) / sizeof(bs[0]))];
		refuse = rng_permille(500);
	} else if (creating == 0) {
		return;
	}
	snprintf(bbuf, sizeof(bbuf), "%" PRIu64, b);
	snprintf(val2, sizeof(val2), "%s", refuse ? "refuse" : "snowflake");
	opt3[0] = '\0';
	kill = 0;
	how = whole ? 0 : (unsigned)rng_below(4);
	if (how == 1)
		kill = 1 + (unsigned)rng_below(60);
	else if (how == 2 && argc > 3 && S.nsrv > 1)
		ctlrun_kill_after("UPDATE idgen_namespaces SET state = 'ready'",
		    1 + (unsigned)rng_below(S.nsrv - 1));
	else if (how == 2 && argc == 3 && S.nsrv > 1 && rng_permille(500))
		ctlrun_kill_after("UPDATE idgen_namespaces SET state = 'creating' WHERE",
		    1 + (unsigned)rng_below(S.nsrv));
	else if (how == 2 && argc == 3 && S.nsrv > 1)
		ctlrun_kill_after("UPDATE idgen_namespaces SET state = 'dropped'",
		    1 + (unsigned)rng_below(S.nsrv - 1));
	for (unsigned i = 0; i < S.nsrv; i++)
		S.srv[i].have_backup = false;
	ctlrun_setup(S.srv, S.nsrv);
	rc = ctlrun_ns(argc, argv, kill, whole ? NULL : sim_ctl_between, &sent);
	S.ns_ops++;
	sim_trace("e%" PRIu64 " ns: idgenctl ns %s %s%s%s %s after %u statements, exit %d", S.ev,
	    verb, name, argc > 3 ? " B=" : "", argc > 3 ? bbuf : "", ctlrun_was_killed() ?
	    "killed" : "ran", sent, rc);
	if (rc == 3) {
		sim_trace("e%" PRIu64 " ns: %s", S.ev, ctlrun_unmodelled());
		S.failed = true;
		return;
	}
	if (argc == 3)
		S.ns_dropping[k] = rc != 0;
	for (unsigned i = 0; i < S.nsrv; i++)
		for (unsigned j = 0; j < S.nsrv; j++)
			if (S.ns_drawn_end[k][j] > S.ns_drawn_end[k][i])
				S.ns_drawn_end[k][i] = S.ns_drawn_end[k][j];
}

/*
 * One taker: IDs or a block from a random idserver, through source.c as a
 * request gets them (tickets, else the Snowflake fallback once it may).
 */
static int
sim_take(void)
{
	struct idserver *d = &S.ids[rng_below(S.nids)];
	uint64_t out[SIM_TAKE_MAX], first;
	unsigned n, wait_us = 0;
	bool may_fallback = rng_permille(300);
	const char *why = "";
	enum source_status st;
	int r = 0;

	if (!d->on)
		return 0;
	/* --namespaces all hunts the namespace rules: most takes are of namespaces. */
	if (S.ns_on && rng_permille(ns_mode == 1 ? 850 : 600) &&
	    (r = sim_take_ns(d, (unsigned)rng_below(TSERVER_NS))) >= 0)
		return r;
	r = 0;
	if (rng_permille(700)) {
		n = 1 + (unsigned)rng_below(S.b < SNOWFLAKE_TAKE_MAX ? S.b : SNOWFLAKE_TAKE_MAX);
		st = source_take(&d->src, NULL, true, n, &first, may_fallback, &wait_us, &why);
		live_take((unsigned)(d - S.ids), (int)st, may_fallback);
		if (st != SOURCE_OK) {
			sim_trace("e%" PRIu64 " i%u block %u: none (%d)", S.ev, d->who, n, (int)st);
			return 0;
		}
		sim_trace("e%" PRIu64 " i%u block %u: %" PRIu64, S.ev, d->who, n, first);
		return sim_record(d, first, first + n);
	}
	n = 1 + (unsigned)rng_below(SIM_TAKE_MAX);
	st = source_take(&d->src, NULL, false, n, out, may_fallback, &wait_us, &why);
	live_take((unsigned)(d - S.ids), (int)st, may_fallback);
	if (st != SOURCE_OK) {
		sim_trace("e%" PRIu64 " i%u ids %u: none (%d)", S.ev, d->who, n, (int)st);
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

/*
 * The fault file-copy's own draw at this event (docs/design.md section 14):
 * a value from the schedule's seed and the event's index, not from the
 * generator, so a schedule whose copies are all of a running idserver keeps
 * the trace it had, and a replay that leaves events or kinds out draws at
 * each event what the first run drew (nothing to save per event).
 */
static uint64_t
sim_copy_draw(void)
{
	return rng_mix(rng_mix(S.seed ^ UINT64_C(0x66696c652d636f70)) + S.ev);	/* "file-cop" */
}

/*
 * In half the copies (sim_copy_draw) the copy is of a dead idserver's file,
 * as an operator copies a crashed machine's disk (6.8, the outside run's
 * path 1): d crashes, after a while in half of them (up to 3 s of virtual
 * time) its file is copied to to's path (to crashed), and both start: to on
 * the copy and d on its own file (three in four) or without one, in either
 * order. The owner rule lets such a copy pass (its writer is dead): only the
 * stamp (a new inode) refuses its lease. False: a copy of a running one.
 */
static bool
sim_copy_dead(struct idserver *d, struct idserver *to)
{
	uint64_t v = sim_copy_draw(), gap = (v >> 4 & 1) ? 20000 + (v >> 8) % 3000000 : 0;
	bool own = (v >> 1 & 3) != 0, to_first = v >> 3 & 1;
	unsigned was = d->who;

	if (!(v & 1))
		return false;
	sim_trace("e%" PRIu64 " i%u crashed, its state file to be copied", S.ev, was);
	sim_ids_stop(d, false);
	if (gap != 0)
		sim_run(gap);
	sim_trace("e%" PRIu64 " i%u crashed; i%u's state file copied to its path%s", S.ev,
	    to->who, was, gap != 0 ? " later" : "");
	sim_ids_stop(to, false);
	disk_forget(&sim_disks[to - S.ids]);
	memcpy(to->ns_handed, d->ns_handed, sizeof(d->ns_handed));
	memcpy(to->file_must, d->file_must, sizeof(d->file_must));
	if (!sim_file_copy(d->path, to->path) ||
	    (to_first && !sim_ids_start(to, true)) ||
	    !sim_ids_start(d, own) ||
	    (!to_first && !sim_ids_start(to, true))) {
		S.failed = true;
		return true;
	}
	sim_trace("e%" PRIu64 " i%u on the copy, i%u on %s", S.ev, to->who, d->who,
	    own ? "its own file" : "no file");
	return true;
}

/* One fault of a kind this schedule enabled (connection faults are weather). */
static void
sim_fault(void)
{
	unsigned kinds[F_COUNT], n = 0, kind, srv = (unsigned)rng_below(S.nsrv);
	struct tserver *s = &S.srv[srv];
	struct idserver *d = &S.ids[rng_below(S.nids)];

	for (unsigned k = 0; k < F_COUNT; k++)
		if (S.fault_on[k] && k != F_LOST_REPLY)
			kinds[n++] = k;
	if (n == 0)
		return;
	kind = kinds[rng_below(n)];
	if (!S.replay && S.ev < SIM_EVENTS_MAX)
		S.did[S.ev] = EV_FAULT + kind;
	if (S.replay && S.kind_off[kind])
		return;
	switch (kind) {
	case F_CRASH:
		sim_trace("e%" PRIu64 " %s crash", S.ev, server_role(srv));
		sim_srv_restart(srv);
		break;
	case F_DOWN:
		if (!s->up)
			break;
		s->up = false;
		S.down_until[srv] = vclock_now_us() + 20000 + rng_below(2000000);
		sim_trace("e%" PRIu64 " %s down", S.ev, server_role(srv));
		sim_srv_restart(srv);
		break;
	case F_DROP:
		sim_trace("e%" PRIu64 " drop %d", S.ev, simdb_drop_one());
		break;
	case F_RESTORE:
		if (!s->have_backup || rng_permille(400)) {
			tserver_backup(s);
			S.backup_absent[srv] = sim_others_down(srv);
			sim_trace("e%" PRIu64 " %s backup at %" PRIu64, S.ev, server_role(srv),
			    s->st.counter);
			break;
		}
		/*
		 * With namespaces, half the restores put back one namespace's
		 * tables alone (tickets_N and its idgen_ns_marks rows, 13.2), the
		 * server running on: the default sequence and the lease rows keep.
		 */
		if (S.ns_on && rng_permille(500)) {
			unsigned k = (unsigned)rng_below(TSERVER_NS);

			if (s->backup.ns[k].state != s->st.ns[k].state)
				break;
			s->st.ns[k] = s->backup.ns[k];
			sim_trace("e%" PRIu64 " %s tickets_%s restored to %" PRIu64, S.ev,
			    server_role(srv), tserver_ns_name(k), s->st.ns[k].counter);
		} else {
			(void)tserver_restore(s);
			live_regressed(srv);
			S.restore_absent[srv] = S.backup_absent[srv];
			/*
			 * Its idgen_leases rows went back too; the operator's repair of 6.5
			 * ends every earlier window before it serves again.
			 */
			{
				uint64_t now = 0;

				(void)layout_ts_from_unix_ms((int64_t)sim_now_ms(), &now);
				tserver_lease_repair(s, now + S.cfg.lease_window_ms +
				    S.cfg.max_clock_skew_ms);
			}
			sim_trace("e%" PRIu64 " %s restored to %" PRIu64 " (lease rows repaired)",
			    S.ev, server_role(srv), s->st.counter);
			sim_srv_restart(srv);
		}
		/*
		 * With namespaces, half the restores come with an idserver
		 * crashed in the same outage, back on its file or without one:
		 * what it remembered of the restored server's namespace tickets
		 * is then only what its file and the partner's copies hold.
		 */
		if (S.ns_on && d->on && rng_permille(500)) {
			bool file = d->file && rng_permille(500);

			sim_trace("e%" PRIu64 " i%u crashed with it, restarts %s", S.ev, d->who,
			    file ? "on its file" : "without a file");
			sim_restart(d, file, false);
		}
		break;
	case F_LOWER:
		if (S.ns_on && rng_permille(500)) {
			unsigned k = (unsigned)rng_below(TSERVER_NS);

			tserver_ns_lower(s, k, 1 + rng_below(6));
			sim_trace("e%" PRIu64 " %s tickets_%s lowered to %" PRIu64, S.ev,
			    server_role(srv), tserver_ns_name(k), s->st.ns[k].counter);
			break;
		}
		tserver_lower(s, 1 + rng_below(6));
		live_regressed(srv);
		sim_trace("e%" PRIu64 " %s counter lowered to %" PRIu64, S.ev, server_role(srv),
		    s->st.counter);
		break;
	case F_RESTART:
	case F_FRESH:
		if (!d->on)
			break;
		{
			bool file = S.fault_on[F_RESTART] && d->file && rng_permille(700);
			bool clean = rng_permille(300);

			sim_trace("e%" PRIu64 " i%u %s %s", S.ev, d->who, clean ? "stopped" :
			    "crashed", file ? "restarts on its file" : "restarts without a file");
			sim_restart(d, file, clean);
		}
		break;
	case F_BOTH_DOWN:
		for (unsigned k = 0; k < S.nsrv; k++) {
			S.srv[k].up = false;
			S.down_until[k] = vclock_now_us() + 200000 + rng_below(4000000);
			sim_srv_restart(k);
		}
		sim_trace("e%" PRIu64 " %s servers down", S.ev, S.nsrv > 2 ? "all" : "both");
		break;
	case F_CLOCK:
		{
			int64_t skew = (int64_t)S.cfg.max_clock_skew_ms * 1000, was = d->skew_us;

			switch (rng_below(3)) {
			case 0:		/* drift within twice the bound either way */
				d->skew_us = (int64_t)rng_below((uint64_t)(4 * skew + 1)) - 2 * skew;
				break;
			case 1:		/* a step back past the tolerance, up to a few seconds */
				d->skew_us -= (int64_t)(1000 * S.cfg.backstep_tolerance_ms +
				    rng_below(3000000));
				break;
			default:	/* a step forward, up to a few seconds */
				d->skew_us += (int64_t)rng_below(3000000);
				break;
			}
			sim_trace("e%" PRIu64 " i%u clock %+" PRId64 " us (skew %+" PRId64 " us)",
			    S.ev, d->who, d->skew_us - was, d->skew_us);
		}
		break;
	case F_FILE_COPY:
		{
			struct idserver *to = &S.ids[rng_below(S.nids)];

			if (!d->on || !d->file || to == d || !to->on)
				break;
			if (sim_copy_dead(d, to))
				break;
			sim_trace("e%" PRIu64 " i%u crashed; i%u's state file copied to its path",
			    S.ev, to->who, d->who);
			sim_ids_stop(to, false);
			disk_forget(&sim_disks[to - S.ids]);
			memcpy(to->ns_handed, d->ns_handed, sizeof(d->ns_handed));
			memcpy(to->file_must, d->file_must, sizeof(d->file_must));
			if (!sim_file_copy(d->path, to->path))
				S.failed = true;
			else if (!sim_ids_start(to, true))
				S.failed = true;
		}
		break;
	case F_CUT:
		if (!d->on)
			break;
		{
			unsigned which = (unsigned)rng_below(S.nsrv + 1);	/* MAX: both */
			uint64_t until = vclock_now_us() + 100000 +
			    rng_below(2 * (uint64_t)S.cfg.lease_window_ms * 1000);

			for (unsigned k = 0; k < S.nsrv; k++)
				if (which == S.nsrv || which == k) {
					d->cut_until[k] = until;
					simdb_drop_owner(d->who, k);
				}
			sim_trace("e%" PRIu64 " i%u cut off from %s", S.ev, d->who,
			    which == S.nsrv ? (S.nsrv > 2 ? "all servers" : "both servers") :
			    server_role(which));
		}
		break;
	case F_READ_ONLY:
		sim_read_only(srv);
		break;
	case F_TIMEOUT:
		if (!s->up)
			break;
		{
			uint64_t ms = 100 + rng_below(3000);

			simdb_stall(srv, vclock_now_us() + 1000 * ms);
			sim_trace("e%" PRIu64 " %s stalls for %" PRIu64 " ms: its queries time out",
			    S.ev, server_role(srv), ms);
		}
		break;
	case F_FILE_BACK:
		if (!d->on || !d->file)
			break;
		if (d->old == NULL || rng_permille(400)) {
			sim_file_keep(d);
			sim_trace("e%" PRIu64 " i%u's state file kept", S.ev, d->who);
			break;
		}
		if (vclock_now_us() - d->old_us < SIM_OLD_MIN_US)
			break;
		sim_trace("e%" PRIu64 " i%u crashed; its older state file put back", S.ev, d->who);
		sim_ids_stop(d, false);
		disk_forget(&sim_disks[d - S.ids]);
		if (!sim_file_back(d))
			S.failed = true;
		else if (!sim_ids_start(d, true))
			S.failed = true;
		break;
	}
}

/*
 * The fault lease-freed (docs/design.md section 14): at this event, with the
 * fault on, the operator may edit a held idgen_leases row by hand (a kind of
 * leasefree.h), drawn from the fault's own generator, so no other draw of
 * the schedule moves. The triggers refuse it while lease-guard is on: the
 * servers are then as they were, and the line is a note, not hashed, so a
 * schedule keeps its trace. An edit applied is traced and hashed. An event
 * left out of a replay draws its edit and sends nothing.
 */
static void
sim_lease_freed(void)
{
	enum lease_edit kind;
	unsigned srv;
	uint64_t pick;
	char line[120];
	int err;

	if (!lease_freed_draw(&LF, S.nsrv, &kind, &srv, &pick))
		return;
	LF.drawn += !S.mute;
	if (S.replay && S.ev < SIM_EVENTS_MAX && S.ev_off[S.ev])
		return;
	err = lease_freed_apply(&S.srv[srv], kind, pick, line, sizeof(line));
	if (err < 0 || err == 2003)
		return;		/* no held row, or the server down: nothing sent */
	/* An edit applied acted (a shrink may leave it out); one refused changed nothing. */
	if (err == 0 && !S.replay && S.ev < SIM_EVENTS_MAX && S.did[S.ev] == EV_NONE)
		S.did[S.ev] = EV_LEASE_EDIT;
	if (!S.mute) {
		LF.sent++;
		LF.applied += err == 0;
		LF.applied_kind[kind] += err == 0;
		LF.refused += err == 1644;
		LF.failed += err != 0 && err != 1644;
	}
	if (err == 0)
		sim_trace("e%" PRIu64 " %s: lease row freed by hand (%s): %s", S.ev,
		    server_role(srv), lease_edit_names[kind], line);
	else
		sim_note("e%" PRIu64 " %s: lease row freed by hand (%s): %s", S.ev,
		    server_role(srv), lease_edit_names[kind], line);
}

/*
 * The fault mark-edits (docs/design.md section 14): the operator's hand edits
 * of marks rows (leasefree.h's kinds), as sim_lease_freed's, from a
 * generator of its own; off unless --mark-edits, so a schedule without it is
 * as it was. An edit that changed a table is traced and hashed; one the
 * triggers refused changed nothing and is a note.
 */
static void
sim_mark_edits(void)
{
	enum mark_edit kind;
	unsigned srv;
	uint64_t pick;
	char line[600];
	int err;
	bool changed;

	if (!mark_edits_draw(&ME, S.nsrv, &kind, &srv, &pick))
		return;
	ME.drawn += !S.mute;
	if (S.replay && S.ev < SIM_EVENTS_MAX && S.ev_off[S.ev])
		return;
	err = mark_edits_apply(S.srv, S.nsrv, srv, kind, pick, line, sizeof(line));
	if (err < 0)
		return;		/* nothing to edit, or the server down: nothing sent */
	/*
	 * A reset's counter moves whatever the triggers say of its rows: the
	 * server may then be refused as regressed, as after the fault lower.
	 */
	changed = err == 0 || kind == ME_RESET;
	if (kind == ME_RESET)
		live_regressed(srv);
	if (changed && !S.replay && S.ev < SIM_EVENTS_MAX && S.did[S.ev] == EV_NONE)
		S.did[S.ev] = EV_LEASE_EDIT;
	if (!S.mute) {
		ME.sent++;
		ME.sent_kind[kind]++;
		ME.applied += err == 0;
		ME.applied_kind[kind] += err == 0;
		ME.refused += err == 1644;
		ME.failed += err != 0 && err != 1644;
	}
	if (changed)
		sim_trace("e%" PRIu64 " %s: marks edited by hand (%s): %s", S.ev, server_role(srv),
		    mark_edit_names[kind], line);
	else
		sim_note("e%" PRIu64 " %s: marks edited by hand (%s): %s", S.ev, server_role(srv),
		    mark_edit_names[kind], line);
}

/* The replay's --lease-freed and --mark-edits, when not the default. */
static void
sim_lease_freed_args(void)
{
	if (LF.mode != LF_HALF)
		printf(" --lease-freed %s", LF.mode == LF_ALL ? "all" : "none");
	if (ME.mode != MEM_NONE)
		printf(" --mark-edits %s", ME.mode == MEM_ALL ? "all" : "half");
}

/* The steps of a raise (sim_raise_step). */
enum { RAISE_PLAN, RAISE_SEAL, RAISE_FLOOR, RAISE_OPEN, RAISE_ADD, RAISE_RESTART, RAISE_DONE };

/*
 * One step of the operator's change of the pair's increment to M = 4 and the
 * growth into a tier (docs/design.md 12.4, 12.2), applied to the servers'
 * tables in ctl/raise.c's and ctl/add.c's steps (not by running them): plan
 * (every server up; older backups are never restored after it), seal each
 * server's own row, one a step; the floor F once all are sealed (every mark
 * row and every counter minus one, in tickets of B); open each server, one a
 * step (SET GLOBAL: open sessions keep M = 2; the counter above F; every
 * marks row at F; meta and own row in generation 1); add the new servers
 * above every floor and mark (add-server); then every idserver restarted
 * with tier_increment = 4 and more_servers listing them. A step whose
 * server is down waits (the command is run again).
 */
static void
sim_raise_step(void)
{
	bool moved;

	if (S.raise_phase == RAISE_PLAN && S.ev < 40)
		return;		/* tickets drawn first */

	/*
	 * The command runs its steps one after the other (a few ms apart, the
	 * idservers running between them), and add-server follows at once in
	 * half the raises: until a step must wait for a server, or the next
	 * event for the restart.
	 */
	do {
		moved = sim_raise_one();
		if (moved && S.raise_phase < RAISE_RESTART)
			sim_run(1000 + rng_below(20000));
	} while (!S.failed && moved && (S.raise_phase < RAISE_ADD ||
	    (S.raise_phase == RAISE_ADD && rng_permille(500))));
}

/*
 * The floor is computed from the tables (12.4): a ticket of generation 0
 * above it was lost by every row that held it (a restore), and only a state
 * file may still know it (the operator repaired what running idservers
 * know). Its server would be refused by that file; a server added at its
 * residue under M = 4 draws it as a first ticket, which no idserver can
 * refuse. Such a ticket is the pair's residue carried into the new server's
 * residue, classified now as the pair's re-draw would be, without a taker:
 * partner-absent when its block was banked with no other server up,
 * both-restored when a copy on the other server held it once; else none (a
 * duplicate of it fails the run).
 */
static void
sim_raise_carried(void)
{
	for (size_t k = 0; k < S.ndraws; k++) {
		const struct draw *w = &S.draws[k];
		unsigned to = TSERVER_MAX;
		int cls = -1;

		if (w->t <= S.raise_floor)
			continue;
		for (unsigned j = 0; j < S.raise_n; j++)
			if (w->t % 4 == S.raise_offsets[j] % 4)
				to = SERVER_PAIR + j;
		if (to == TSERVER_MAX)
			continue;	/* its own server's residue still: a re-draw there */
		for (size_t a = 0; a < S.nalone && cls < 0; a++)
			if (S.alone[a].srv == w->srv && S.alone[a].t == w->t)
				cls = RES_ABSENT;
		if (cls < 0 && S.srv[1 - w->srv].copy_ever[w->srv] >= w->t)
			cls = RES_BOTH;
		sim_trace("e%" PRIu64 " raise: %s's ticket %" PRIu64 " above the floor, o%u's now: %s",
		    S.ev, server_role(w->srv), w->t, S.raise_offsets[to - SERVER_PAIR],
		    cls < 0 ? "no residue condition" : residue_names[cls]);
		if (cls < 0)
			continue;
		S.residue = sim_grow(S.residue, &S.capresidue, S.nresidue, sizeof(*S.residue));
		S.residue[S.nresidue++] = (struct residue){ to, w->t, (enum residue_class)cls };
	}
}

/*
 * Server srv restarts (a crash, an outage, a restore): every connection is
 * lost, and with the real command (--ctl real) its global increment is its
 * config file's again, as MariaDB's is (SET GLOBAL does not outlive a
 * restart); --ctl driver keeps the old model, where it did.
 */
static void
sim_srv_restart(unsigned srv)
{
	simdb_crash(srv);
	if (!ctl_driver)
		S.srv[srv].m = S.srv[srv].cnf_m;
}

/* The operator's command waits ms: the idservers run meanwhile. */
static void
sim_ctl_pause(unsigned ms)
{
	sim_run((uint64_t)ms * 1000);
}

/* Between two statements of the operator's command: a round trip's time, the idservers running. */
static void
sim_ctl_between(void)
{
	sim_run(200 + rng_below(3000));
}

/*
 * One run of the real `idgenctl tier raise-increment 4` (ctl/raise.c over
 * sim/ctlrun.c; docs/design.md section 14), killed in half the runs at a
 * statement drawn from the seed (the operator runs it again at the raise's
 * next event). True once a run completes: the floor is then the least any
 * server was opened above (a resumed change opens the rest at or above it).
 */
static bool
sim_raise_run(void)
{
	unsigned kill = rng_permille(500) ? 1 + rng_below(40) : 0, sent = 0;
	uint64_t f = UINT64_MAX;
	int rc;

	ctlrun_setup(S.srv, S.nsrv);
	rc = ctlrun_raise(4, kill, sim_ctl_between, &sent);
	S.ctl_runs++;
	S.ctl_killed += kill != 0 && sent >= kill;
	sim_trace("e%" PRIu64 " raise: idgenctl tier raise-increment 4 %s after %u statements, "
	    "exit %d", S.ev, kill != 0 && sent >= kill ? "killed" : "ran", sent, rc);
	if (rc == 3) {
		sim_trace("e%" PRIu64 " raise: %s", S.ev, ctlrun_unmodelled());
		S.failed = true;
		return false;
	}
	if (rc != 0)
		return false;
	for (unsigned i = 0; i < S.nsrv; i++) {
		uint64_t fi = S.srv[i].st.floor / S.b;

		if (S.srv[i].st.gen == 0) {
			sim_trace("e%" PRIu64 " raise: %s not opened by a complete run", S.ev,
			    server_role(i));
			S.failed = true;
			return false;
		}
		f = fi > 0 && fi - 1 < f ? fi - 1 : f;
	}
	S.raise_floor = f == UINT64_MAX ? 0 : f;
	sim_trace("e%" PRIu64 " raise: floor %" PRIu64, S.ev, S.raise_floor);
	/*
	 * As at the plan (sim_raise_one): a backup taken before the change
	 * completed is never restored after it. Such a server is back in
	 * generation 0 (refused, 12.4), and the driver's add-server step reads
	 * the tables as they are.
	 */
	for (unsigned i = 0; i < S.nsrv; i++)
		S.srv[i].have_backup = false;
	/*
	 * The operator then does as it prints: auto_increment_increment = 4 in
	 * each server's config file, and a server restarted since its SET GLOBAL
	 * (refused meanwhile: its increment is not its meta row's) restarted again.
	 */
	for (unsigned i = 0; i < S.nsrv; i++) {
		S.srv[i].cnf_m = 4;
		if (S.srv[i].m != 4) {
			sim_trace("e%" PRIu64 " raise: %s restarted on its config's increment 4 (its "
			    "SET GLOBAL lost to a restart)", S.ev, server_role(i));
			sim_srv_restart(i);
		}
	}
	sim_raise_carried();
	sim_raise_ns_carried();
	S.raise_phase = RAISE_ADD;
	return true;
}

/*
 * The namespaces' part of the plan (docs/design.md 13.8, section 14): as
 * for the default (sim_raise_one), the operator repairs every namespace
 * regression the idservers report (the ALTER TABLE tickets_N their refusal
 * names) before the change, so each floor F_N, computed from the tables,
 * covers every block a running idserver's state file knows. And idgenctl's
 * counters set since are forgotten: sim_raise_ns_carried reads the floors
 * the change sets.
 */
static void
sim_raise_ns_repair(void)
{
	for (unsigned i = 0; i < S.nsrv; i++)
		memset(S.srv[i].ns_ctl_set, 0, sizeof(S.srv[i].ns_ctl_set));
	for (unsigned d = 0; S.ns_on && d < S.nids; d++)
		for (unsigned k = 0; S.ids[d].on && k < TSERVER_NS; k++)
			for (unsigned i = 0; i < S.nsrv; i++) {
				struct tserver_ns *n = &S.srv[i].st.ns[k];
				const struct state_ns_mark *m = state_ns_get(&S.ids[d].sf.ns,
				    tserver_ns_name(k), i);
				uint64_t t;

				if (m == NULL || n->state == TS_NS_NONE || n->counter == 0 || n->b == 0)
					continue;
				t = (state_ns_end(m) + n->b - 1) / n->b;
				if (t <= n->counter)
					continue;
				n->counter = t;
				sim_trace("e%" PRIu64 " %s repaired: tickets_%s AUTO_INCREMENT = %" PRIu64
				    " (i%u's mark)", S.ev, server_role(i), tserver_ns_name(k), t,
				    S.ids[d].who);
			}
}

/*
 * sim_raise_carried's for namespaces: a block of namespace k banked in
 * generation 0 with no other server up (partner-absent, 6.5) and above the
 * floor F_N (the least AUTO_INCREMENT the change set on tickets_N, minus
 * one: its rows lost it to a restore, and no running idserver's file held
 * it at the plan) lies in a new server's residue, which draws it as a first
 * ticket no idserver can refuse: residue of its class, without a taker. A
 * name the change did not floor on every server (not ready) is left out.
 */
static void
sim_raise_ns_carried(void)
{
	for (unsigned k = 0; S.ns_on && k < TSERVER_NS; k++) {
		uint64_t f = UINT64_MAX, end;

		for (unsigned i = 0; i < S.nsrv && f != 0; i++)
			f = S.srv[i].ns_ctl_set[k] < f ? S.srv[i].ns_ctl_set[k] : f;
		if (f == 0 || f == UINT64_MAX || S.srv[0].st.ns[k].b == 0)
			continue;
		end = f * S.srv[0].st.ns[k].b;	/* (F_N + 1) * B_N */
		for (size_t a = 0; a < S.nnsalone; a++) {
			const struct ns_alone *w = &S.nsalone[a];

			if (w->ns != k || w->hi <= end)
				continue;
			sim_trace("e%" PRIu64 " raise: %s's block %" PRIu64 "..%" PRIu64 " above the "
			    "floor, banked alone: %s", S.ev, tserver_ns_name(k), w->lo, w->hi - 1,
			    residue_names[RES_ABSENT]);
			S.nsres = sim_grow(S.nsres, &S.capnsres, S.nnsres, sizeof(*S.nsres));
			S.nsres[S.nnsres++] = (struct ns_residue){ k, w->lo, w->hi, RES_ABSENT,
			    SERVER_PAIR, { 0 }, { false } };
		}
	}
}

/*
 * One run of the real `idgenctl tier add-server` (ctl/add.c over
 * sim/ctlrun.c) for the first new server not added yet, a fresh MariaDB
 * with the schema loaded at its offset under M = 4; killed as the raise's
 * runs are, and run again at the raise's next event. True once every new
 * server is added.
 */
static bool
sim_add_run(void)
{
	unsigned kill = rng_permille(500) ? 1 + rng_below(40) : 0, sent = 0, k = 0;
	int rc;

	while (k < S.raise_n && S.added[k])
		k++;
	if (k == S.raise_n) {
		S.raise_phase = RAISE_RESTART;
		return true;
	}
	if (!S.add_made[k]) {
		struct tserver *s = &S.srv[SERVER_PAIR + k];

		tserver_init(s, SERVER_PAIR + k, S.b);
		s->now_ms = sim_now_ms;
		tserver_fresh(s, S.raise_offsets[k], 4);
		S.add_made[k] = true;
	}
	ctlrun_setup(S.srv, SERVER_PAIR + S.raise_n);
	rc = ctlrun_add(S.raise_offsets[k], SERVER_PAIR + k, kill, sim_ctl_between, &sent);
	S.add_runs++;
	S.add_killed += kill != 0 && sent >= kill;
	sim_trace("e%" PRIu64 " raise: idgenctl tier add-server %u %s after %u statements, exit "
	    "%d", S.ev, S.raise_offsets[k], kill != 0 && sent >= kill ? "killed" : "ran", sent, rc);
	if (rc == 3) {
		sim_trace("e%" PRIu64 " raise: %s", S.ev, ctlrun_unmodelled()[0] ? ctlrun_unmodelled() :
		    "the tier's view could not be set for idgenctl");
		S.failed = true;
		return false;
	}
	if (rc != 0)
		return false;
	S.added[k] = true;
	sim_trace("e%" PRIu64 " raise: o%u added, counter %" PRIu64, S.ev, S.raise_offsets[k],
	    S.srv[SERVER_PAIR + k].st.counter);
	if (k + 1 == S.raise_n)
		S.raise_phase = RAISE_RESTART;
	return true;
}

/* The steps of a retirement (sim_retire_step). */
enum { RETIRE_RUN, RETIRE_RESTART, RETIRE_REUSE, RETIRE_DONE };

/*
 * An operator's step of the schedule (events 67..69 of a hundred): the
 * raise's while one is under way, then a retirement's (--ctl-ops retire).
 */
static void
sim_ctl_step(void)
{
	if (S.raise_on && S.raise_phase != RAISE_DONE)
		sim_raise_step();
	else if (S.retire_on)
		sim_retire_step();
	else if (S.bchange_on && !regions_active())
		sim_bchange_step();
}

/*
 * --ctl-ops retire (docs/design.md 12.5, section 14): in a tier (after its
 * raise and growth, if a raise schedule), from event 60, the operator
 * retires the tier's last server beyond the pair, as docs/operations.md has
 * it. The real `idgenctl tier retire-server OFFSET` (ctl/add.c over
 * sim/ctlrun.c), killed in half its runs at a statement drawn from the seed
 * or right after the nth server's flag, run again at the next step until it
 * completes; the idservers run between its statements and refuse the server
 * at their next check. Then every idserver restarted without it in
 * more_servers (the config is one for the process here, so all at once, as
 * the raise's restart). Then, in half the schedules, the "never" of 12.5:
 * the retired server's machine replaced by a fresh MariaDB at its offset
 * and address, and `tier add-server OFFSET` run on it: it must be refused
 * (exit 1); a completed run fails the schedule.
 */
static void
sim_retire_step(void)
{
	unsigned kill = 0, sent = 0, idx = S.retire_idx;
	int rc;

	if (S.ev < 60 || S.retire_phase == RETIRE_DONE)
		return;
	if (S.retire_phase == RETIRE_RUN) {
		S.ctlop[CO_RETIRE_RUNS]++;
		if (S.retire_off == 0) {
			S.retire_idx = idx = S.nsrv - 1;
			S.retire_off = server_offset(idx);
			S.ctlop[CO_RETIRES]++;
		}
		if (rng_permille(250))
			ctlrun_kill_after("INSERT INTO idgen_marks (role, retired)",
			    1 + (unsigned)rng_below(S.nsrv - 1));
		else if (rng_permille(333))
			kill = 1 + (unsigned)rng_below(60);
		ctlrun_setup(S.srv, S.nsrv);
		rc = ctlrun_retire(S.retire_off, S.cfg.recheck_ms, kill, sim_ctl_between,
		    sim_ctl_pause, &sent);
		S.ctlop[CO_RETIRE_KILLED] += ctlrun_was_killed();
		sim_trace("e%" PRIu64 " retire: idgenctl tier retire-server %u %s after %u statements, "
		    "exit %d", S.ev, S.retire_off, ctlrun_was_killed() ? "killed" : "ran", sent, rc);
		if (rc == 3) {
			sim_trace("e%" PRIu64 " retire: %s", S.ev, ctlrun_unmodelled());
			S.failed = true;
			return;
		}
		if (rc != 0)
			return;		/* a server down, or killed: run again */
		/* Every server of the region but the retired one answered: each holds the flag. */
		for (unsigned i = 0; i < S.nsrv; i++)
			if (i != idx && !(S.srv[i].st.retired >> idx & 1)) {
				sim_trace("e%" PRIu64 " retire: %s holds no flag for o%u after a complete "
				    "run", S.ev, server_role(i), S.retire_off);
				S.failed = true;
				return;
			}
		/*
		 * The operator restores no backup taken before the retirement (12.5):
		 * every server of the region restored so would hold no flag, and the
		 * offset could be given again.
		 */
		for (unsigned i = 0; i < S.nsrv; i++)
			S.srv[i].have_backup = false;
		S.ctlop[CO_RETIRED]++;
		S.retire_phase = RETIRE_RESTART;
		return;
	}
	if (S.retire_phase == RETIRE_RESTART) {
		bool on[SIM_IDSERVERS], file[SIM_IDSERVERS];
		unsigned offs[TSERVER_MAX], n = 0;

		for (unsigned i = SERVER_PAIR; i < idx; i++)
			offs[n++] = server_offset(i);
		for (unsigned i = 0; i < S.nids; i++) {
			on[i] = S.ids[i].on;
			file[i] = S.ids[i].file;
			sim_ids_stop(&S.ids[i], true);
		}
		if (!server_shape_set(server_increment(), 0, 0) || !server_extras_set(offs, n)) {
			S.failed = true;
			return;
		}
		tserver_role_set(idx, S.retire_off);	/* its rows keep their name */
		/* Its mark leaves the state files with it (12.3: a line of a server not configured). */
		for (unsigned i = 0; i < SIM_IDSERVERS; i++) {
			S.ids[i].file_must[idx] = 0;
			S.ids[i].old_must[idx] = 0;
		}
		S.nsrv = idx;
		simdb_servers(S.nsrv);
		S.cfg.extras = n;
		sim_trace("e%" PRIu64 " retire: every idserver restarted without o%u in "
		    "more_servers", S.ev, S.retire_off);
		for (unsigned i = 0; i < S.nids; i++)
			if (on[i] && !sim_ids_start(&S.ids[i], file[i]))
				S.failed = true;
		S.retire_phase = rng_permille(500) ? RETIRE_REUSE : RETIRE_DONE;
		return;
	}
	/* RETIRE_REUSE: a new server at the retired offset; add-server must refuse it. */
	if (S.srv[idx].offset != S.retire_off || S.srv[idx].st.meta_row) {
		struct tserver *t = &S.srv[idx];

		tserver_init(t, idx, S.b);
		t->now_ms = sim_now_ms;
		tserver_fresh(t, S.retire_off, server_increment());
	}
	kill = rng_permille(500) ? 1 + (unsigned)rng_below(40) : 0;
	ctlrun_setup(S.srv, idx + 1);
	rc = ctlrun_add(S.retire_off, idx, kill, sim_ctl_between, &sent);
	S.ctlop[CO_REUSE_RUNS]++;
	sim_trace("e%" PRIu64 " retire: idgenctl tier add-server %u (a new server at the retired "
	    "offset) %s after %u statements, exit %d", S.ev, S.retire_off, ctlrun_was_killed() ?
	    "killed" : "ran", sent, rc);
	if (rc == 0 || rc == 3) {
		sim_trace("e%" PRIu64 " retire: %s", S.ev, rc == 3 ? ctlrun_unmodelled() :
		    "the retired offset was given again");
		S.failed = true;
		return;
	}
	if (rc == 1 && !ctlrun_was_killed()) {
		S.ctlop[CO_REUSE_REFUSED]++;
		S.retire_phase = RETIRE_DONE;
	}
}

/* The end, in ID space, of server t's marks row of role j (a block_size of 0: its B). */
static uint64_t
tserver_mark_end(const struct tserver *t, unsigned j)
{
	return (t->st.mark[j] + 1) * (t->st.mark_b[j] != 0 ? t->st.mark_b[j] : t->b);
}

/* A ticket count of the old B in tickets of the new, half as large: the last it covers. */
static uint64_t
sim_halve(uint64_t t)
{
	return t == 0 ? 0 : 2 * t + 1;
}

/*
 * --ctl-ops b-change (docs/design.md 6.2.1, section 14): in a pair of B =
 * 8192, from event 80, the operator halves B, as operations.md's "Marks
 * carry their B" describes it. In half the schedules first the "never":
 * idgen_meta.block_size changed on both servers while the idservers run
 * (each refuses both at its next check: its B was agreed, 2.4; blocks
 * banked keep the B they were checked under). Then the procedure, at a step
 * with both servers up: every idserver stopped; block_size = 4096 in both
 * meta rows; every marks row of both raised, in ID space, to the end of
 * every mark the rows and the running idservers' files hold, under 4096,
 * and each counter above it (operations.md: a mark of another B binds every
 * server of the region, 6.2.1, so each server's own row must hold the
 * others' old blocks, or a counter lowered later is not refused: seed 1124);
 * no backup from before restored after; block_size = 4096 in the config;
 * every idserver started again on its file. At every later step the operator
 * repairs what they report (the ALTER TABLE their refusal names: each
 * counter above each running idserver's known mark of it). The simulation's
 * bookkeeping of tickets (the highest drawn, copies due and held, landed,
 * files' marks, first draws, blocks banked alone, classified re-draws) is
 * converted to the new B: each old ticket of a server is two new ones. A
 * new ticket of one server over another's old block is not classified (a
 * duplicate of it fails the run: stricter, never more lenient).
 */
static void
sim_bchange_step(void)
{
	static struct residue *carried;	/* the partner's new tickets over them */
	static size_t capcarried;
	size_t ncarried = 0;
	uint64_t nb = S.b / 2, end = 0;
	bool on[SIM_IDSERVERS], file[SIM_IDSERVERS];

	if (S.ev < 80)
		return;
	if (S.bchange_phase == 0) {
		S.ctlop[CO_BC]++;
		S.bchange_phase = 2;
		if (rng_permille(500)) {
			for (unsigned i = 0; i < S.nsrv; i++)
				S.srv[i].b = nb;
			S.ctlop[CO_BC_LIVE]++;
			S.bchange_phase = 1;
			sim_trace("e%" PRIu64 " bchange: idgen_meta.block_size = %" PRIu64 " on both "
			    "servers while idservers run (never do this)", S.ev, nb);
		}
		return;
	}
	if (S.bchange_phase == 3) {
		/* The repair of what the running idservers report (their known marks). */
		for (unsigned k = 0; k < S.nids; k++)
			for (unsigned i = 0; S.ids[k].on && i < S.nsrv; i++) {
				uint64_t m = state_mark_ticket(&S.ids[k].sf.rec.mark[i], S.b);

				if (S.srv[i].up && m + 1 > S.srv[i].st.counter) {
					S.srv[i].st.counter = m + 1;
					S.ctlop[CO_BC_REPAIRS]++;
					sim_trace("e%" PRIu64 " bchange: %s repaired: AUTO_INCREMENT = %"
					    PRIu64 " (i%u's mark)", S.ev, server_role(i), m + 1,
					    S.ids[k].who);
				}
			}
		return;
	}
	for (unsigned i = 0; i < S.nsrv; i++)
		if (!S.srv[i].up)
			return;		/* the operator waits for both */
	/* The end, in ID space, of every mark of the region: rows and running idservers' files. */
	for (unsigned i = 0; i < S.nsrv; i++)
		for (unsigned j = 0; j < S.nsrv; j++)
			if (S.srv[i].st.mark[j] != 0 && tserver_mark_end(&S.srv[i], j) > end)
				end = tserver_mark_end(&S.srv[i], j);
	for (unsigned k = 0; k < S.nids; k++)
		for (unsigned j = 0; S.ids[k].on && j < S.nsrv; j++) {
			const struct state_mark *m = &S.ids[k].sf.rec.mark[j];

			if (m->high_water != 0 && state_mark_end(m, S.b) > end)
				end = state_mark_end(m, S.b);
		}
	for (unsigned i = 0; i < S.nids; i++) {
		on[i] = S.ids[i].on;
		file[i] = S.ids[i].file;
		sim_ids_stop(&S.ids[i], true);
	}
	for (unsigned i = 0; i < S.nsrv; i++) {
		struct tserver *t = &S.srv[i];

		t->b = nb;
		t->have_backup = false;
		t->drawn_max = sim_halve(t->drawn_max);
		/* Every marks row raised to the region's end in the new B, the counter above it. */
		for (unsigned j = 0; end > 0 && j < TSERVER_MAX; j++)
			if ((t->st.rows >> j & 1) && tserver_mark_end(t, j) < end) {
				t->st.mark[j] = (end + nb - 1) / nb - 1;
				t->st.mark_b[j] = nb;
			}
		if (t->st.counter * nb < end) {
			t->st.counter = (end + nb - 1) / nb;
			S.ctlop[CO_BC_REPAIRS]++;
		}
		for (unsigned j = 0; j < TSERVER_MAX; j++) {
			t->copy_ever[j] = sim_halve(t->copy_ever[j]);
			t->due_ever[j] = sim_halve(t->due_ever[j]);
			t->st.due[j] = sim_halve(t->st.due[j]);
		}
		for (size_t k = 0; k < t->nlanded; k++)
			t->landed[k].value = sim_halve(t->landed[k].value);
		S.drawn_max[i] = sim_halve(S.drawn_max[i]);
	}
	for (unsigned k = 0; k < SIM_IDSERVERS; k++)
		for (unsigned j = 0; j < SERVER_MAX; j++) {
			S.ids[k].file_must[j] = sim_halve(S.ids[k].file_must[j]);
			S.ids[k].old_must[j] = sim_halve(S.ids[k].old_must[j]);
		}
	/*
	 * An old ticket above the end every layer left (a block banked alone, or
	 * its copy restored away, whose idserver's file is gone) may be drawn
	 * again as the partner's new ticket: the pair's residue carried across the
	 * change, classified now as its re-draw would be (sim_raise_carried's way).
	 */
	for (size_t k = 0; k < S.ndraws; k++) {
		const struct draw *w = &S.draws[k];
		unsigned h = 1 - w->srv;
		int cls = -1;

		if ((w->t + 1) * S.b <= end)
			continue;
		for (size_t a = 0; a < S.nalone && cls < 0; a++)
			if (S.alone[a].srv == w->srv && S.alone[a].t == w->t)
				cls = RES_ABSENT;
		/* copy_ever is in the new B already: c >= t under the old is 2c + 1 >= 2t + 1. */
		if (cls < 0 && S.srv[h].copy_ever[w->srv] >= 2 * w->t + 1)
			cls = RES_BOTH;
		sim_trace("e%" PRIu64 " bchange: %s's ticket %" PRIu64 " above every mark left, %s's "
		    "now: %s", S.ev, server_role(w->srv), w->t, server_role(h), cls < 0 ?
		    "no residue condition" : residue_names[cls]);
		for (uint64_t n = 2 * w->t; cls >= 0 && n <= 2 * w->t + 1; n++) {
			carried = sim_grow(carried, &capcarried, ncarried, sizeof(*carried));
			carried[ncarried++] = (struct residue){ h, n, (enum residue_class)cls };
		}
	}
	/* Each old ticket of a server is its two new ones (only one of its residue). */
	for (size_t k = 0, n = S.ndraws; k < n; k++) {
		S.draws = sim_grow(S.draws, &S.capdraws, S.ndraws, sizeof(*S.draws));
		S.draws[k].t *= 2;
		S.draws[S.ndraws] = S.draws[k];
		S.draws[S.ndraws++].t++;
	}
	for (size_t k = 0, n = S.nalone; k < n; k++) {
		S.alone = sim_grow(S.alone, &S.capalone, S.nalone, sizeof(*S.alone));
		S.alone[k].t *= 2;
		S.alone[S.nalone] = S.alone[k];
		S.alone[S.nalone++].t++;
	}
	for (size_t k = 0, n = S.nresidue; k < n; k++) {
		S.residue = sim_grow(S.residue, &S.capresidue, S.nresidue, sizeof(*S.residue));
		S.residue[k].t *= 2;
		S.residue[S.nresidue] = S.residue[k];
		S.residue[S.nresidue++].t++;
	}
	for (size_t k = 0; k < ncarried; k++) {
		S.residue = sim_grow(S.residue, &S.capresidue, S.nresidue, sizeof(*S.residue));
		S.residue[S.nresidue++] = carried[k];
	}
	S.b = nb;
	S.cfg.block_size = (unsigned)nb;
	sim_trace("e%" PRIu64 " bchange: B = %" PRIu64 ": idservers stopped, both meta rows, every "
	    "marks row at least at ID %" PRIu64 " (counters %" PRIu64 " and %" PRIu64 "), "
	    "block_size in the config, idservers started", S.ev, nb, end, S.srv[0].st.counter,
	    S.srv[1].st.counter);
	for (unsigned i = 0; i < S.nids; i++)
		if (on[i] && !sim_ids_start(&S.ids[i], file[i]))
			S.failed = true;
	S.ctlop[CO_BC_DONE]++;
	S.bchange_phase = 3;
}

/* The end of namespace k's marks and counters on every server, in ID space (as ns raise reads). */
static uint64_t
sim_ns_end(unsigned k)
{
	uint64_t end = 0;

	for (unsigned i = 0; i < S.nsrv; i++) {
		const struct tserver_ns *n = &S.srv[i].st.ns[k];

		end = n->counter * n->b > end ? n->counter * n->b : end;
		for (unsigned j = 0; j < S.nsrv; j++)
			if (n->hw[j] != 0 || n->hb[j] != 0)
				end = tserver_ns_end(n->hw[j], n->hb[j], n->b) > end ?
				    tserver_ns_end(n->hw[j], n->hb[j], n->b) : end;
	}
	return end;
}

/*
 * --ctl-ops ns-raise (docs/design.md 13.3, section 14): namespace k, ready
 * on every server, raised by the real `idgenctl ns raise NAME --above X`
 * (ctl/ns.c) in one namespace step of four, or run again as typed after a
 * kill: X drawn at or above what the marks and counters cover (forward), or
 * in one of five below it (must be refused, exit 1; a completed run fails
 * the schedule). Killed in half the runs, at a statement drawn from the
 * seed or right after the nth server's marks, counter or start_above.
 * False when no raise was drawn (the step goes on as before).
 */
static bool
sim_ns_raise(unsigned k)
{
	static const char *const steps[] = { "UPDATE idgen_ns_marks SET high_water",
	    "ALTER TABLE tickets_", "UPDATE idgen_namespaces SET start_above" };
	char verb[8] = "raise", name[8], opt[8] = "--above", val[24];
	char *argv[5] = { verb, name, opt, val, NULL };
	uint64_t end = sim_ns_end(k), b = S.srv[0].st.ns[k].b, x = S.ns_raise_above[k];
	bool again = x != 0, back = false;
	unsigned kill = 0, how, sent = 0;
	int rc;

	if (!again && !rng_permille(250))
		return false;
	if (!again && end >= 3 && rng_permille(200)) {
		x = end / 2;
		back = true;
	} else if (!again) {
		x = end + rng_below(4 * b + 1);
	}
	how = (unsigned)rng_below(4);
	if (how == 1)
		kill = 1 + (unsigned)rng_below(60);
	else if (how == 2)
		ctlrun_kill_after(steps[rng_below(3)], 1 + (unsigned)rng_below(S.nsrv));
	snprintf(name, sizeof(name), "%s", tserver_ns_name(k));
	snprintf(val, sizeof(val), "%" PRIu64, x);
	ctlrun_setup(S.srv, S.nsrv);
	rc = ctlrun_ns(4, argv, kill, sim_ctl_between, &sent);
	S.ns_ops++;
	S.ctlop[CO_NSR_RUNS]++;
	S.ctlop[CO_NSR_KILLED] += ctlrun_was_killed();
	sim_trace("e%" PRIu64 " ns: idgenctl ns raise %s --above %" PRIu64 " (%s, the marks and "
	    "counters end at %" PRIu64 ") %s after %u statements, exit %d", S.ev, name, x, again ?
	    "run again" : back ? "below" : "above", end, ctlrun_was_killed() ? "killed" : "ran",
	    sent, rc);
	if (rc == 3 || (rc == 0 && back)) {
		sim_trace("e%" PRIu64 " ns: %s", S.ev, rc == 3 ? ctlrun_unmodelled() :
		    "ns raise moved a namespace back");
		S.failed = true;
		return true;
	}
	/* Complete: every server's marks and counter above X, its start_above at X - 1 (13.3). */
	for (unsigned i = 0; rc == 0 && i < S.nsrv; i++) {
		const struct tserver_ns *n = &S.srv[i].st.ns[k];

		for (unsigned j = 0; j < S.nsrv && !S.failed; j++)
			S.failed = n->start_above + 1 < x || n->counter * b <= x ||
			    tserver_ns_end(n->hw[j], n->hb[j], b) <= x;
		if (S.failed) {
			sim_trace("e%" PRIu64 " ns: %s on %s after a complete raise: start_above %"
			    PRIu64 ", counter %" PRIu64 ", marks not all above %" PRIu64, S.ev, name,
			    server_role(i), n->start_above, n->counter, x);
			return true;
		}
	}
	S.ns_raise_above[k] = ctlrun_was_killed() || rc == 2 ? x : 0;
	S.ctlop[CO_NSR_DONE] += rc == 0;
	S.ctlop[CO_NSR_BACK] += rc == 1 && back;
	S.ctlop[CO_NSR_AGAIN] += rc == 1 && again;	/* a killed raise refused as typed */
	S.ctlop[CO_NSR_MOVED] += rc == 1 && !back && !again;
	return true;
}

/* One step of sim_raise_step's; false when it waits (a server down) or none is left. */
static bool
sim_raise_one(void)
{
	unsigned i;

	switch (S.raise_phase) {
	case RAISE_PLAN:
		for (i = 0; i < S.nsrv; i++)
			if (!S.srv[i].up)
				return false;
		/*
		 * The operator repairs every regression the idservers report (the
		 * ALTER TABLE their refusal names) before a raise: the floor is
		 * computed from the tables, and a ticket only a state file knows
		 * would be above it, drawn again by a server added at its residue
		 * (docs/design.md 12.4, section 14).
		 */
		for (unsigned k = 0; k < S.nids; k++)
			for (i = 0; S.ids[k].on && i < S.nsrv; i++) {
				uint64_t m = state_mark_ticket(&S.ids[k].sf.rec.mark[i], S.b);

				if (m + 1 > S.srv[i].st.counter) {
					S.srv[i].st.counter = m + 1;
					sim_trace("e%" PRIu64 " %s repaired: AUTO_INCREMENT = %" PRIu64
					    " (i%u's mark)", S.ev, server_role(i), m + 1, S.ids[k].who);
				}
			}
		sim_raise_ns_repair();
		for (i = 0; i < S.nsrv; i++)
			S.srv[i].have_backup = false;
		sim_trace("e%" PRIu64 " raise planned", S.ev);
		S.raise_phase = RAISE_SEAL;
		return true;
	case RAISE_SEAL:
		if (!ctl_driver)
			return sim_raise_run();
		for (i = 0; i < S.nsrv; i++)
			if (!S.srv[i].st.sealed && S.srv[i].st.gen == 0) {
				if (!S.srv[i].up)
					return false;
				tserver_seal(&S.srv[i]);
				sim_trace("e%" PRIu64 " raise: %s sealed", S.ev, server_role(i));
				return true;
			}
		S.raise_phase = RAISE_FLOOR;
		return true;
	case RAISE_FLOOR:
		{
			uint64_t end = 0;

			for (i = 0; i < S.nsrv; i++) {
				const struct tserver *s = &S.srv[i];

				if (!s->up)
					return false;
				for (unsigned j = 0; j < S.nsrv; j++) {
					uint64_t e = (s->st.mark[j] + 1) * (s->st.mark_b[j] ?
					    s->st.mark_b[j] : S.b);

					if ((s->st.mark[j] != 0 || s->st.mark_b[j] != 0) && e > end)
						end = e;
				}
				if (s->st.counter * S.b > end)
					end = s->st.counter * S.b;
			}
			S.raise_floor = end == 0 ? 0 : (end + S.b - 1) / S.b - 1;
			sim_trace("e%" PRIu64 " raise: floor %" PRIu64, S.ev, S.raise_floor);
			sim_raise_carried();
			S.raise_phase = RAISE_OPEN;
		}
		return true;
	case RAISE_OPEN:
		for (i = 0; i < S.nsrv; i++)
			if (S.srv[i].st.gen == 0) {
				if (!S.srv[i].up)
					return false;
				if (!S.srv[i].st.sealed)
					tserver_seal(&S.srv[i]);	/* put back by a restore */
				tserver_open(&S.srv[i], 4, S.raise_floor);
				sim_trace("e%" PRIu64 " raise: %s opened in generation 1, counter %"
				    PRIu64, S.ev, server_role(i), S.srv[i].st.counter);
				return true;
			}
		S.raise_phase = RAISE_ADD;
		return true;
	case RAISE_ADD:
		if (!ctl_driver)
			return sim_add_run();
		{
			uint64_t end = 0, t;

			for (i = 0; i < S.nsrv; i++) {
				const struct tserver *s = &S.srv[i];

				if (!s->up)
					return false;
				if (s->st.floor > end)
					end = s->st.floor;
				for (unsigned j = 0; j < S.nsrv; j++) {
					uint64_t e = (s->st.mark[j] + 1) * (s->st.mark_b[j] ?
					    s->st.mark_b[j] : S.b);

					if ((s->st.mark[j] != 0 || s->st.mark_b[j] != 0) && e > end)
						end = e;
				}
			}
			t = (end + S.b - 1) / S.b;
			for (unsigned k = 0; k < S.raise_n; k++) {
				struct tserver *s = &S.srv[SERVER_PAIR + k];

				tserver_init(s, SERVER_PAIR + k, S.b);
				s->now_ms = sim_now_ms;
				tserver_add(s, S.raise_offsets[k], 4, 1, S.srv[0].st.floor, t);
				sim_trace("e%" PRIu64 " raise: o%u added, counter %" PRIu64, S.ev,
				    S.raise_offsets[k], s->st.counter);
			}
			S.raise_phase = RAISE_RESTART;
		}
		return true;
	case RAISE_RESTART:
		{
			bool on[SIM_IDSERVERS], file[SIM_IDSERVERS];

			for (i = 0; i < S.nids; i++) {
				on[i] = S.ids[i].on;
				file[i] = S.ids[i].file;
				sim_ids_stop(&S.ids[i], true);
			}
			if (!server_shape_set(4, 0, 0) ||
			    !server_extras_set(S.raise_offsets, S.raise_n)) {
				S.failed = true;
				return false;
			}
			S.nsrv = SERVER_PAIR + S.raise_n;
			simdb_servers(S.nsrv);
			S.cfg.tier_increment = 4;
			S.cfg.extras = S.raise_n;
			for (unsigned k = 0; k < S.raise_n; k++) {
				S.cfg.extra[k].offset = server_offset(SERVER_PAIR + k);
				snprintf(S.cfg.extra[k].host, sizeof(S.cfg.extra[k].host), "%s",
				    "127.0.0.1");
				S.cfg.extra[k].port = 3309 + k;
			}
			sim_trace("e%" PRIu64 " raise: every idserver restarted with tier_increment "
			    "= 4 and %u more servers", S.ev, S.raise_n);
			for (i = 0; i < S.nids; i++)
				if (on[i] && !sim_ids_start(&S.ids[i], file[i]))
					S.failed = true;
			S.raise_phase = RAISE_DONE;
			S.raises_done++;
		}
		return true;
	default:
		return false;
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
	if (!S.replay)
		S.rec_ev = S.rec_run = 0;
	S.nresidue = 0;
	S.nnsres = 0;
	memset(S.ns_drawn_end, 0, sizeof(S.ns_drawn_end));
	memset(S.ns_dropping, 0, sizeof(S.ns_dropping));
	for (k = 0; k < TSERVER_NS; k++)
		ranges_reset(&S.nsr[k]);
	S.ndraws = 0;
	S.nalone = 0;
	S.nnsalone = 0;
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
	/*
	 * A tier of more than two servers in every third schedule (those whose
	 * seed is one above a multiple of 3; --tiers: in all, or none), with
	 * namespaces only when both are forced (--namespaces all --tiers all,
	 * and not in a raise's schedule): chosen by the seed and drawing
	 * nothing from the generator for a pair, so a pair's schedule is the one it was before
	 * tiers came in. A tier has M = 4 and the pair (offsets 1, 2) and o3
	 * and o4, or one of them (more_servers, docs/design.md 12.2).
	 */
	S.tier_on = tier_mode == 1 || tier_mode == 3 ||
	    (tier_mode == 0 && ns_mode != 1 && seed % 3 == 1);
	S.nsrv = SERVER_PAIR;
	S.raise_on = false;
	S.raise_phase = 0;
	S.raise_floor = 0;
	memset(S.added, 0, sizeof(S.added));
	memset(S.add_made, 0, sizeof(S.add_made));
	S.retire_on = false;
	S.retire_phase = RETIRE_RUN;
	S.bchange_on = false;
	S.bchange_phase = 0;
	S.retire_off = 0;
	memset(S.ns_raise_above, 0, sizeof(S.ns_raise_above));
	for (k = SERVER_PAIR; k < TSERVER_MAX; k++)
		tserver_role_set(k, 0);
	if (S.tier_on) {
		unsigned offsets[2] = { 3, 4 }, n = 1 + (unsigned)rng_below(2);

		if (n == 1)
			offsets[0] = 3 + (unsigned)rng_below(2);
		/*
		 * One tier in three begins as the pair (M = 2) and grows into
		 * it: raise-increment, add-server, idservers restarted (12.4).
		 */
		S.raise_on = tier_mode == 3 || rng_permille(333);
		memcpy(S.raise_offsets, offsets, sizeof(offsets));
		S.raise_n = n;
		if (!server_shape_set(S.raise_on ? 2 : 4, 0, 0) ||
		    (!S.raise_on && !server_extras_set(offsets, n)))
			return 3;
		S.nsrv = SERVER_PAIR + (S.raise_on ? 0 : n);
		for (k = 0; S.raise_on && k < n; k++)
			tserver_role_set(SERVER_PAIR + k, offsets[k]);
		S.tiers++;
		S.raises += S.raise_on;
		S.retire_on = (ctl_ops_on & CTLOP_RETIRE) != 0;	/* no draw */
	} else if (!server_shape_set(2, 0, 0)) {
		return 3;
	}
	S.b = UINT64_C(4096) << rng_below(2);	/* the smallest B check.c takes */
	/* B halved by the operator (--ctl-ops b-change): pairs of B = 8192; no draw. */
	S.bchange_on = (ctl_ops_on & CTLOP_B_CHANGE) && !S.tier_on && S.b == 8192;
	for (k = 0; k < S.nsrv; k++)
		tserver_init(&S.srv[k], k, S.b);
	for (k = 0; k < S.nsrv; k++)
		S.srv[k].now_ms = sim_now_ms;
	/*
	 * Two to four regions (regions.c, docs/design.md section 14) in the
	 * pair's schedules whose seed is 5 modulo 12 (--regions: all, none, or
	 * every schedule with one kind of mistake); others draw nothing more.
	 */
	(void)regions_begin(seed, !S.tier_on && ns_mode != 1, S.srv, S.nsrv, &S.b,
	    &sim_regions_io);
	/* Swarm: each kind on with even odds. */
	for (k = 0; k < F_COUNT; k++)
		S.fault_on[k] = k == F_READ_ONLY ? sim_ro_drawn(seed) :
		    k == F_TIMEOUT ? sim_to_drawn(seed) : rng_permille(500);
	{
		struct simdb_weather w = {
			(unsigned)(100 + rng_below(3000)),
			S.fault_on[F_DROP] ? (unsigned)(1 + rng_below(30)) : 0,
			S.fault_on[F_LOST_REPLY] ? (unsigned)(1 + rng_below(100)) : 0,
			0,
		};
		struct simdb_hooks h = { sim_hook_drew, sim_hook_copy_want, sim_hook_checked,
		    sim_hook_cut, sim_hook_ns_drew, sim_hook_ns_sent, sim_hook_ns_seen,
		    sim_hook_ns_ran, sim_hook_ns_answered, sim_hook_unmodelled };

		/*
		 * Namespaces in every third schedule (--namespaces: in all, or
		 * none), chosen by the seed and drawing nothing from the generator
		 * when off: a schedule without namespaces is the one it was before
		 * they came in. With them, one server may be far (its answers ten
		 * times slower), so a new connection's partner answers late. In a
		 * tier only with --namespaces all (and --tiers all, or no tier is
		 * drawn), so every schedule of the default mix,
		 * of --tiers all alone and of --namespaces all alone is the one it
		 * was before namespaces came into tiers; never in a schedule that
		 * raises the pair (12.4: raise-increment's plan and the idservers'
		 * restart model no namespace floors).
		 */
		S.ns_on = (ns_mode == 1 && (!S.raise_on || !ctl_driver)) ||
		    (ns_mode == 0 && !S.tier_on && seed % 3 == 0);
		if (S.ns_on || S.tier_on)
			w.far = (unsigned)rng_below(S.nsrv + 1);
		/* A replay without drops or lost replies: drawn as first run, then off. */
		if (S.replay && S.kind_off[F_DROP])
			w.drop_pm = 0;
		if (S.replay && S.kind_off[F_LOST_REPLY])
			w.lost_reply_pm = 0;
		simdb_setup(S.srv, S.nsrv, &w, &h);
		/* Query timeouts: their own generator; a replay without them keeps stalls off. */
		simdb_timeouts(seed, S.fault_on[F_TIMEOUT], !(S.replay && S.kind_off[F_TIMEOUT]));
		live_weather(w.max_delay_us, w.far != 0, S.fault_on[F_TIMEOUT]);
		tier_banked_hook = sim_hook_banked;
	}
	memset(&S.cfg, 0, sizeof(S.cfg));
	S.cfg.tier_increment = server_increment();
	S.cfg.extras = S.nsrv - SERVER_PAIR;
	for (k = 0; k < S.cfg.extras; k++) {
		S.cfg.extra[k].offset = server_offset(SERVER_PAIR + k);
		snprintf(S.cfg.extra[k].host, sizeof(S.cfg.extra[k].host), "%s", host);
		S.cfg.extra[k].port = 3309 + k;
	}
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
	S.cfg.max_namespaces = S.ns_on ? 4 : 0;
	if (S.ns_on)
		S.cfg.ns_idle_ms = (unsigned)(200 + rng_below(3000));
	/* The fallback: short windows, so they end, are extended and are claimed again. */
	S.cfg.lease_window_ms = (unsigned)(800 + rng_below(4000));
	S.cfg.lease_extend_ms = S.cfg.lease_window_ms / (unsigned)(2 + rng_below(4));
	S.cfg.max_clock_skew_ms = (unsigned)(50 + rng_below(1000));
	S.cfg.backstep_tolerance_ms = (unsigned)rng_below(100);
	S.cfg.clock_wait_ms = (unsigned)(50 + rng_below(1000));
	S.cfg.fallback_reserve_ms = (unsigned)(5 + rng_below(100));
	S.cfg.fallback_reserve_lead_max_ms = 400;	/* the default; no draw (seeds keep their schedules) */
	S.cfg.refill_wait_ms = (unsigned)(1 + rng_below(50));
	for (k = 0; k < SIM_IDSERVERS; k++) {
		S.ids[k].skew_us = 0;
		S.ids[k].start_again = false;
		memset(S.ids[k].file_must, 0, sizeof(S.ids[k].file_must));
		memset(S.ids[k].cut_until, 0, sizeof(S.ids[k].cut_until));
		free(S.ids[k].old);
		S.ids[k].old = NULL;
	}
	/*
	 * One directory per process, made by its first schedule (a mkdtemp and
	 * an rmdir per schedule were waste) and emptied here when a schedule
	 * that ended early left its files.
	 */
	if (sim_dir_live[0] != '\0') {
		if (sim_dir_used)
			sim_dir_empty(sim_dir_live);
		memcpy(S.dir, sim_dir_live, sizeof(S.dir));
	} else {
		snprintf(S.dir, sizeof(S.dir), "/dev/shm/idsim-%d-XXXXXX", (int)getpid());
		if (mkdtemp(S.dir) == NULL) {
			snprintf(S.dir, sizeof(S.dir), "/tmp/idsim-%d-XXXXXX", (int)getpid());
			if (mkdtemp(S.dir) == NULL)
				return 3;
		}
		memcpy(sim_dir_live, S.dir, sizeof(sim_dir_live));
	}
	sim_dir_used = true;
	S.base = vclock_base_new();
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
		if (S.raise_on)
			sim_trace("schedule seed %" PRIu64 ": the pair raised to M=4 and grown to %u "
			    "servers, B=%" PRIu64 ", %u idservers, %u events, faults:%s", seed,
			    SERVER_PAIR + S.raise_n, S.b, S.nids, nev, len ? kinds : " none");
		else if (S.tier_on)
			sim_trace("schedule seed %" PRIu64 ": a tier of %u servers (M=4, odd, even, "
			    "%s%s%s), B=%" PRIu64 ", %u idservers, %u events, faults:%s", seed, S.nsrv,
			    server_role(SERVER_PAIR), S.nsrv > 3 ? ", " : "", S.nsrv > 3 ?
			    server_role(3) : "", S.b, S.nids, nev, len ? kinds : " none");
		else
			sim_trace("schedule seed %" PRIu64 ": B=%" PRIu64 ", %u idservers, %u events, "
			    "faults:%s", seed, S.b, S.nids, nev, len ? kinds : " none");
	}
	/* Hand edits of lease rows: on or off from the fault's own generator. */
	lease_freed_schedule(&LF, seed);
	lease_guard_count = !S.mute;
	if (LF.on) {
		sim_note("schedule seed %" PRIu64 ": lease-freed on", seed);
		LF.schedules += !S.mute;
	}
	/* Hand edits of marks rows: the same, off by default. */
	mark_edits_schedule(&ME, seed);
	mark_guard_count = !S.mute;
	if (ME.on) {
		sim_note("schedule seed %" PRIu64 ": mark-edits on", seed);
		ME.schedules += !S.mute;
	}
	/*
	 * Simulated disks under the state files: on or off by the seed's own
	 * mix, their weather from their own generator (disk.h); a schedule
	 * without them draws nothing more.
	 */
	for (k = 0; k < SIM_IDSERVERS; k++) {
		sim_disks[k].valid = false;
		sim_disks[k].doomed = false;
	}
	if (disk_schedule(seed, disk_mode))
		sim_note("schedule seed %" PRIu64 ": disk faults on", seed);
	/* Namespace n0 ready from the start; n1 created by the schedule's events. */
	if (S.ns_on)
		sim_ns_op(0, true);
	/* Liveness (live.c): (T) outside a raise and regions; it reads the idservers. */
	live_schedule(seed, &S.cfg, S.srv, S.nsrv, !S.raise_on && !S.retire_on &&
	    !S.bchange_on && !regions_active(), !S.mute);
	for (k = 0; k < S.nids; k++) {
		struct live_view v = { &S.ids[k].on, &S.ids[k].who, &S.ids[k].t, &S.ids[k].lease,
		    &S.ids[k].gen, S.ids[k].cut_until, sim_clock_ms[k] };

		live_idserver(k, &v, S.nids);
	}
	for (k = 0; k < S.nids; k++)
		if (!sim_ids_start(&S.ids[k], rng_permille(800)))
			r = 3;
	if (regions_active() && !regions_start(&S.cfg, S.dir))
		r = 3;
	for (S.ev = 0; S.ev < nev && r == 0 && live_failed() == NULL; S.ev++) {
		unsigned pick;

		live_event(S.ev);
		/*
		 * A replay past the events the first run recorded (it ended at
		 * its duplicate) goes on from where it is: those states would be
		 * an earlier schedule's, whatever ran before in the process.
		 */
		if (!S.replay) {
			rng_save(&S.at_ev[S.ev]);
			S.rec_ev = S.ev + 1;
			regions_stream_at(S.ev, false, false);
		} else if (S.ev < S.rec_ev) {
			rng_load(&S.at_ev[S.ev]);
			regions_stream_at(S.ev, false, true);
		}
		for (k = 0; k < S.nids; k++)
			if (S.ids[k].start_again && !S.ids[k].on && !sim_ids_start(&S.ids[k], true))
				r = 3;
		pick = (unsigned)rng_below(100);
		if (!S.replay)
			S.did[S.ev] = pick < 55 ? EV_TAKE : pick < 65 ? EV_FAULT :
			    pick < 67 && S.ns_on ? EV_NS_OP : pick < 70 && (S.raise_on ||
			    S.retire_on || S.bchange_on) ? EV_NS_OP :
			    EV_NONE;	/* sim_fault: its kind; a raise's step acts too */
		if (!S.replay && pick >= 65 && regions_active())
			S.did[S.ev] = EV_TAKE;	/* another region's event (no namespaces, no raise) */
		if (S.replay && S.ev_off[S.ev])
			pick = 100;	/* left out: its time passes, nothing happens */
		if (pick < 55)
			r = sim_take();
		else if (pick < 65)
			sim_fault();
		else if (pick < 67 && S.ns_on)
			sim_ns_op((unsigned)rng_below(TSERVER_NS), false);
		else if (pick < 70 && (S.raise_on || S.retire_on || S.bchange_on))
			sim_ctl_step();
		else if (pick < 100 && regions_active())
			r = regions_event();
		if (r == 0)
			sim_lease_freed();
		if (r == 0)
			sim_mark_edits();
		if (r == 0)
			sim_power_event();
		if (S.failed)
			r = 3;
		if (r == 1)
			S.dup_ev = S.ev;
		if (r == 0) {
			if (!S.replay) {
				rng_save(&S.at_run[S.ev]);
				S.rec_run = S.ev + 1;
				regions_stream_at(S.ev, true, false);
			} else if (S.ev < S.rec_run) {
				rng_load(&S.at_run[S.ev]);
				regions_stream_at(S.ev, true, true);
			}
			sim_run(rng_permille(50) ? 20000 + rng_below(400000) : rng_below(4000));
		}
		if (disk_untracked())
			sim_hook_unmodelled("a state file changed outside the simulated disk");
		if (r == 0 && S.unmodelled[0] != '\0') {
			if (!S.mute)
				printf("idsim: seed %" PRIu64 ": a query the model does not answer: "
				    "%s\n", seed, S.unmodelled);
			r = 3;
		}
	}
	*events = (unsigned)S.ev;
	for (k = 0; k < S.nids; k++)
		sim_ids_stop(&S.ids[k], false);
	regions_end();
	/* Every file of the schedule (a .foreign set aside too, which kept it before); S.dir stays. */
	sim_dir_empty(sim_dir_live);
	sim_dir_used = false;
	simdb_timeouts_end();
	event_base_free(S.base);
	S.base = NULL;
	sim_trace("end seed %" PRIu64 ": %u events, %" PRIu64 " IDs, result %d", seed, *events,
	    S.ids_taken, r);
	return r;
}

/*
 * A server read-only (docs/design.md section 14) in half the schedules
 * (--read-only: all, none), chosen by the seed through its own mix, not
 * drawn from the generator: a schedule without it is the schedule it was
 * before read-only servers came in.
 */
static bool
sim_to_drawn(uint64_t seed)
{
	return to_mode == 1 || (to_mode == 0 && (rng_mix(seed ^ UINT64_C(0x74696d656f757473)) & 1));
}

static bool
sim_ro_drawn(uint64_t seed)
{
	return ro_mode == 1 || (ro_mode == 0 && (rng_mix(seed ^ UINT64_C(0x726561646f6e6c79)) & 1));
}

/*
 * read_only = ON on server srv (SET GLOBAL read_only, or the server back
 * with it in its my.cnf): writes, EXPLAIN of writes and locking reads answer
 * 1290 (tserver_ro_refuses), reads go on, its connections stay. In half the
 * faults on a server up it goes down first and comes back read-only (issue
 * 30's partner: the witness of a returning server cannot land); read-write
 * again after a while (sim_ro_end), or at the next such fault on it.
 */
static void
sim_read_only(unsigned srv)
{
	struct tserver *s = &S.srv[srv];
	uint64_t now = vclock_now_us(), away = 0;

	if (s->read_only) {
		s->read_only = false;
		sim_trace("e%" PRIu64 " %s read-write", S.ev, server_role(srv));
		return;
	}
	if (s->up && rng_permille(500)) {
		away = 20000 + rng_below(2000000);
		s->up = false;
		S.down_until[srv] = now + away;
		sim_srv_restart(srv);
	}
	s->read_only = true;
	s->ro_until = now + away + 100000 + rng_below(4000000);
	sim_trace("e%" PRIu64 " %s %s", S.ev, server_role(srv), away != 0 ?
	    "down, back read-only" : "read-only");
}

/* Servers whose read-only time is over are read-write again (sim_run). */
static void
sim_ro_end(void)
{
	for (unsigned i = 0; i < S.nsrv; i++)
		if (S.srv[i].read_only && vclock_now_us() >= S.srv[i].ro_until) {
			S.srv[i].read_only = false;
			sim_trace("e%" PRIu64 " %s read-write", S.ev, server_role(i));
		}
}

/* --disk-faults and --timeouts for a replay's command line, when not the default. */
static void
sim_disk_args(void)
{
	if (disk_mode != 0)
		printf(" --disk-faults %s", disk_mode == 1 ? "all" : "none");
	if (to_mode != 0)
		printf(" --timeouts %s", to_mode == 1 ? "all" : "none");
}

/* --read-only for a replay's command line, when not the default. */
static void
sim_ro_args(void)
{
	if (ro_mode != 0)
		printf(" --read-only %s", ro_mode == 1 ? "all" : "none");
}

/* Takes the counters over all schedules aside (put_back false), or puts them back. */
static void
sim_counts(struct sim_counts *c, bool put_back)
{
	struct sim_counts now;

	memcpy(now.classes, S.classes, sizeof(now.classes));
	memcpy(now.ctlop, S.ctlop, sizeof(now.ctlop));
	now.ns_ids = S.ns_ids;
	now.ns_ops = S.ns_ops;
	now.ns_redraws = S.ns_redraws;
	now.ns_tier_draws = S.ns_tier_draws;
	now.ns_tier_redraws = S.ns_tier_redraws;
	now.fb_ids = S.fb_ids;
	now.fb_claims = S.fb_claims;
	now.fb_resumed = S.fb_resumed;
	now.fb_adopted = S.fb_adopted;
	now.fb_lost = S.fb_lost;
	now.fb_releases = S.fb_releases;
	now.fb_refused = S.fb_refused;
	now.tiers = S.tiers;
	now.raises = S.raises;
	now.raises_done = S.raises_done;
	now.ctl_runs = S.ctl_runs;
	now.ctl_killed = S.ctl_killed;
	now.add_runs = S.add_runs;
	now.add_killed = S.add_killed;
	regions_tally(now.regions, false);
	now.disks = disk_counts;
	now.timeouts = simdb_timeout_counts;
	if (!put_back) {
		*c = now;
		return;
	}
	memcpy(S.classes, c->classes, sizeof(S.classes));
	memcpy(S.ctlop, c->ctlop, sizeof(S.ctlop));
	S.ns_ids = c->ns_ids;
	S.ns_ops = c->ns_ops;
	S.ns_redraws = c->ns_redraws;
	S.ns_tier_draws = c->ns_tier_draws;
	S.ns_tier_redraws = c->ns_tier_redraws;
	S.fb_ids = c->fb_ids;
	S.fb_claims = c->fb_claims;
	S.fb_resumed = c->fb_resumed;
	S.fb_adopted = c->fb_adopted;
	S.fb_lost = c->fb_lost;
	S.fb_releases = c->fb_releases;
	S.fb_refused = c->fb_refused;
	S.tiers = c->tiers;
	S.raises = c->raises;
	S.raises_done = c->raises_done;
	S.ctl_runs = c->ctl_runs;
	S.ctl_killed = c->ctl_killed;
	S.add_runs = c->add_runs;
	S.add_killed = c->add_killed;
	regions_tally(c->regions, true);
	disk_counts = c->disks;
	simdb_timeout_counts = c->timeouts;
}

/*
 * Schedule seed with the events and fault kinds left out that ev_off and
 * kind_off name: first run as drawn, muted (its generator states kept),
 * then replayed from those states; only the replay is hashed and counted.
 */
static int
sim_replay(uint64_t seed, unsigned *events)
{
	struct sim_counts c;
	bool mute = S.mute;
	int r;

	sim_counts(&c, false);
	S.mute = true;
	S.replay = false;
	(void)sim_schedule(seed, events);
	sim_counts(&c, true);
	S.mute = mute;
	S.replay = true;
	r = sim_schedule(seed, events);
	S.replay = false;
	return r;
}

/* One replay of a shrink (muted; the first run's states are kept): a duplicate still? */
static bool
sim_shrink_try(uint64_t seed, unsigned *runs)
{
	unsigned ev = 0;

	(*runs)++;
	S.replay = true;
	return sim_schedule(seed, &ev) == 1;
}

/*
 * Event e of a shrink's replay up to its duplicate acts: kept, and it did
 * something in the first run (as drawn) or lies past what that run recorded
 * (it ended at an earlier duplicate of its own; a masked run's, --faults or
 * --events, may be found later), where did[] is an earlier schedule's.
 */
static bool
sim_shrink_acts(unsigned e)
{
	return e <= S.dup_ev && !S.ev_off[e] && (e >= S.rec_ev || (S.did[e] != EV_NONE &&
	    !(S.did[e] >= EV_FAULT && S.kind_off[S.did[e] - EV_FAULT])));
}

/*
 * Delta debugging (ddmin, by complements) over the events that did
 * something before the duplicate: a chunk of them is left out for good when
 * a duplicate is still found without it; chunks halve until single events.
 */
static void
sim_shrink_events(uint64_t seed, unsigned *runs)
{
	unsigned c[SIM_EVENTS_MAX], nc = 0, n = 2;

	for (unsigned e = 0; e < SIM_EVENTS_MAX; e++)
		if (sim_shrink_acts(e))
			c[nc++] = e;
		else
			S.ev_off[e] = true;
	while (nc >= 2 && *runs < SIM_SHRINK_RUNS) {
		unsigned chunk = (nc + n - 1) / n;
		bool cut = false;

		for (unsigned lo = 0; lo < nc && !cut && *runs < SIM_SHRINK_RUNS; lo += chunk) {
			unsigned hi = lo + chunk < nc ? lo + chunk : nc;

			for (unsigned i = lo; i < hi; i++)
				S.ev_off[c[i]] = true;
			if (sim_shrink_try(seed, runs)) {
				memmove(c + lo, c + hi, (nc - hi) * sizeof(c[0]));
				nc -= hi - lo;
				n = n > 2 ? n - 1 : 2;
				cut = true;
			} else {
				for (unsigned i = lo; i < hi; i++)
					S.ev_off[c[i]] = false;
			}
		}
		if (!cut) {
			if (n >= nc)
				break;
			n = 2 * n < nc ? 2 * n : nc;
		}
	}
}

/*
 * Everything of a replay's command line after --seed S --schedules 1 (D6):
 * each option that makes a schedule what it was and is not at its default
 * (modes, rules off, --lease-freed, --stall), then, with masked (a shrink,
 * or a run given --faults or --events), the fault kinds the schedule drew
 * and kept (--faults) and, when some are left out, the events kept up to
 * event last (--events).
 */
static void
sim_replay_args(bool masked, uint64_t last)
{
	const char *sep = "";
	unsigned n = 0;
	bool evmask = false;

	if (ns_mode != 0)
		printf(" --namespaces %s", ns_mode == 1 ? "all" : "none");
	if (tier_mode != 0)
		printf(" --tiers %s", tier_mode == 1 ? "all" : tier_mode == 2 ? "none" : "raise");
	sim_ro_args();
	sim_disk_args();
	if (ctl_driver)
		printf(" --ctl driver");
	sim_ctlops_args();
	if (regions_mode != REGIONS_SOME)
		printf(" --regions %s", regions_mode_name());
	for (unsigned k = 0; k < RULE_COUNT; k++)
		if (!RULE_ON(k))
			printf(" --disable %s", rules[k].name);
	sim_lease_freed_args();
	if (live_stall != LIVE_NONE)
		printf(" --stall %s", live_stall == LIVE_RETRY ? "retry" : "extend");
	if (!masked)
		return;
	printf(" --faults ");
	for (unsigned k = 0; k < F_COUNT; k++)
		if (S.fault_on[k] && !S.kind_off[k]) {
			printf("%s%s", sep, fault_names[k]);
			sep = ",";
			n++;
		}
	printf("%s", n == 0 ? "none" : "");
	for (unsigned e = 0; e <= last && e < SIM_EVENTS_MAX; e++)
		evmask = evmask || S.ev_off[e];
	if (!evmask)
		return;
	printf(" --events ");
	sep = "";
	n = 0;
	for (unsigned e = 0; e <= last && e < SIM_EVENTS_MAX; e++)
		if (!S.ev_off[e]) {
			printf("%s%u", sep, e);
			sep = ",";
			n++;
		}
	printf("%s", n == 0 ? "none" : "");
}

/*
 * Shrinks schedule seed, which found a duplicate (docs/design.md section
 * 14): run again as drawn (its generator states kept), then replayed
 * leaving out each fault kind it drew in turn, for good when a duplicate is
 * still found, then its events by delta debugging; prints the shortest
 * trace found and the command line that replays it. Deterministic, muted:
 * the run's hash and counters are as without it. A masked run's schedule
 * (--faults, --events: masked) starts from its masks, as its replay does:
 * run as drawn, then replayed with them, and shrunk from there.
 */
static void
sim_shrink(uint64_t seed, bool masked)
{
	struct sim_counts c;
	unsigned ev = 0, runs = 0, acted = 0, kinds = 0, lines, dup_ev;
	bool ev_off[SIM_EVENTS_MAX], kind_off[F_COUNT];
	int r;

	memcpy(ev_off, S.ev_off, sizeof(ev_off));
	memcpy(kind_off, S.kind_off, sizeof(kind_off));
	sim_counts(&c, false);
	S.mute = true;
	S.replay = false;
	memset(S.ev_off, 0, sizeof(S.ev_off));
	memset(S.kind_off, 0, sizeof(S.kind_off));
	r = sim_schedule(seed, &ev);
	if (masked) {
		memcpy(S.ev_off, ev_off, sizeof(ev_off));
		memcpy(S.kind_off, kind_off, sizeof(kind_off));
		r = sim_shrink_try(seed, &runs) ? 1 : 0;
	}
	if (r != 1) {
		printf("idsim: shrink: seed %" PRIu64 " found no duplicate when run again\n", seed);
		goto out;
	}
	lines = S.ntrace;
	dup_ev = (unsigned)S.dup_ev;
	for (unsigned e = 0; e <= dup_ev && e < SIM_EVENTS_MAX; e++)
		acted += sim_shrink_acts(e);
	for (unsigned k = 0; k < F_COUNT; k++)
		kinds += S.fault_on[k] && !S.kind_off[k];
	/* Fault kinds first: one left out drops all its events at once. */
	for (unsigned k = 0; k < F_COUNT; k++) {
		if (!S.fault_on[k] || S.kind_off[k])
			continue;
		S.kind_off[k] = true;
		if (!sim_shrink_try(seed, &runs))
			S.kind_off[k] = false;
	}
	/* The duplicate's event as the kinds left find it. */
	if (!sim_shrink_try(seed, &runs)) {
		printf("idsim: shrink: the replay lost its duplicate\n");
		goto out;
	}
	sim_shrink_events(seed, &runs);
	/* A kind whose events are all gone may still be weather (drops, lost replies). */
	for (unsigned k = 0; k < F_COUNT; k++) {
		if (!S.fault_on[k] || S.kind_off[k])
			continue;
		S.kind_off[k] = true;
		if (!sim_shrink_try(seed, &runs))
			S.kind_off[k] = false;
	}
	/* The shortest: replayed once more, every line printed. */
	printf("idsim: shrunk seed %" PRIu64 " in %u replays; replay: build/idsim --seed %" PRIu64
	    " --schedules 1", seed, runs, seed);
	sim_replay_args(true, S.dup_ev);
	printf("; its trace:\n");
	S.echo = true;
	if (!sim_shrink_try(seed, &runs))
		printf("idsim: shrink: the last replay found no duplicate\n");
	S.echo = false;
	{
		unsigned kept = 0, kk = 0;

		for (unsigned e = 0; e < SIM_EVENTS_MAX; e++)
			kept += !S.ev_off[e] && e <= S.dup_ev;
		for (unsigned k = 0; k < F_COUNT; k++)
			kk += S.fault_on[k] && !S.kind_off[k];
		printf("idsim: shrunk from %u events that acted (its duplicate at e%u), %u fault "
		    "kinds, %u trace lines to %u events (its duplicate at e%" PRIu64 "), %u fault "
		    "kinds, %u trace lines\n", acted, dup_ev, kinds, lines, kept, S.dup_ev, kk,
		    S.ntrace);
	}
out:
	S.replay = false;
	S.mute = false;
	sim_counts(&c, true);
}

/* --ctl-ops LIST: none, all, or a comma list of retire, ns-raise, b-change. */
static bool
sim_ctlops_parse(const char *v)
{
	char list[64], *save = NULL;

	ctl_ops_on = 0;
	if (strcmp(v, "none") == 0)
		return true;
	if (strcmp(v, "all") == 0) {
		ctl_ops_on = CTLOP_RETIRE | CTLOP_NS_RAISE | CTLOP_B_CHANGE;
		return true;
	}
	snprintf(list, sizeof(list), "%s", v);
	for (char *w = strtok_r(list, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save))
		if (strcmp(w, "retire") == 0)
			ctl_ops_on |= CTLOP_RETIRE;
		else if (strcmp(w, "ns-raise") == 0)
			ctl_ops_on |= CTLOP_NS_RAISE;
		else if (strcmp(w, "b-change") == 0)
			ctl_ops_on |= CTLOP_B_CHANGE;
		else
			return false;
	return true;
}

/* The replay's --ctl-ops. */
static void
sim_ctlops_args(void)
{
	const char *sep = " --ctl-ops ";

	if (ctl_ops_on & CTLOP_RETIRE) {
		printf("%sretire", sep);
		sep = ",";
	}
	if (ctl_ops_on & CTLOP_NS_RAISE) {
		printf("%sns-raise", sep);
		sep = ",";
	}
	if (ctl_ops_on & CTLOP_B_CHANGE)
		printf("%sb-change", sep);
}

/* What --ctl-ops ran, over all schedules (a line only when on). */
static void
sim_ctlops_report(void)
{
	const uint64_t *c = S.ctlop;

	if (ctl_ops_on & CTLOP_RETIRE)
		printf("retire: %" PRIu64 " tiers retired a server; idgenctl tier retire-server run %"
		    PRIu64 " times, %" PRIu64 " of them killed, %" PRIu64 " complete; add-server of "
		    "the retired offset run %" PRIu64 " times, refused %" PRIu64 "\n",
		    c[CO_RETIRES], c[CO_RETIRE_RUNS], c[CO_RETIRE_KILLED], c[CO_RETIRED],
		    c[CO_REUSE_RUNS], c[CO_REUSE_REFUSED]);
	if (ctl_ops_on & CTLOP_NS_RAISE)
		printf("ns raise: idgenctl ns raise run %" PRIu64 " times, %" PRIu64 " of them "
		    "killed, %" PRIu64 " complete; refused: %" PRIu64 " below the marks, %" PRIu64
		    " run again as typed after a kill, %" PRIu64 " passed meanwhile\n",
		    c[CO_NSR_RUNS], c[CO_NSR_KILLED], c[CO_NSR_DONE], c[CO_NSR_BACK],
		    c[CO_NSR_AGAIN], c[CO_NSR_MOVED]);
	if (ctl_ops_on & CTLOP_B_CHANGE)
		printf("b change: %" PRIu64 " pairs of B = 8192 began halving it, %" PRIu64 " of them "
		    "first on the servers while idservers ran; %" PRIu64 " halved, %" PRIu64
		    " counters repaired\n", c[CO_BC], c[CO_BC_LIVE], c[CO_BC_DONE], c[CO_BC_REPAIRS]);
}

static void
usage(void)
{
	fprintf(stdout, "usage: idsim [--seed S] [--schedules K | --seconds T] [--disable RULE]... "
	    "[--namespaces third|all|none] [--tiers third|all|none|raise] [--shrink] "
	    "[--faults KIND,...|none] [--events E,...|none] [--list-rules] [--verbose] "
	    "[--lease-freed half|all|none] [--read-only half|all|none]\n"
	    "       [--mark-edits none|half|all]\n"
	    "       [--regions some|all|none|b|r|m] [--disk-faults half|all|none] "
	    "[--timeouts half|all|none] [--ctl real|driver] [--stall retry|extend] "
	    "[--hashes]\n"
	    "       [--ctl-ops none|all|retire,ns-raise,b-change]\n");
}

int
main(int argc, char **argv)
{
	uint64_t seed = 1, schedules = 100, seconds = 0, done = 0, events = 0, dups = 0, res = 0;
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned hl = 0;
	time_t start = time(NULL);
	bool shrink = false, masked = false;
	uint64_t lives = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--list-rules") == 0) {
			for (unsigned k = 0; k < RULE_COUNT; k++)
				printf("%-14s %s\n", rules[k].name, rules[k].what);
			return 0;
		} else if (v != NULL && strcmp(a, "--namespaces") == 0) {
			ns_mode = strcmp(v, "all") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 : 0;
			if (ns_mode == 0 && strcmp(v, "third") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--tiers") == 0) {
			tier_mode = strcmp(v, "all") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 :
			    strcmp(v, "raise") == 0 ? 3 : 0;
			if (tier_mode == 0 && strcmp(v, "third") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--ctl") == 0) {
			ctl_driver = strcmp(v, "driver") == 0;
			if (!ctl_driver && strcmp(v, "real") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--ctl-ops") == 0) {
			if (!sim_ctlops_parse(v)) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--mark-edits") == 0) {
			ME.mode = strcmp(v, "all") == 0 ? MEM_ALL : strcmp(v, "half") == 0 ? MEM_HALF :
			    MEM_NONE;
			if (ME.mode == MEM_NONE && strcmp(v, "none") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--lease-freed") == 0) {
			LF.mode = strcmp(v, "all") == 0 ? LF_ALL : strcmp(v, "none") == 0 ? LF_NONE :
			    LF_HALF;
			if (LF.mode == LF_HALF && strcmp(v, "half") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--timeouts") == 0) {
			to_mode = strcmp(v, "all") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 : 0;
			if (to_mode == 0 && strcmp(v, "half") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--disk-faults") == 0) {
			disk_mode = strcmp(v, "all") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 : 0;
			if (disk_mode == 0 && strcmp(v, "half") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--read-only") == 0) {
			ro_mode = strcmp(v, "all") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 : 0;
			if (ro_mode == 0 && strcmp(v, "half") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && strcmp(a, "--regions") == 0) {
			regions_mode = strcmp(v, "all") == 0 ? REGIONS_ALL : strcmp(v, "none") == 0 ?
			    REGIONS_NONE : strcmp(v, "b") == 0 ? REGIONS_B : strcmp(v, "r") == 0 ?
			    REGIONS_R : strcmp(v, "m") == 0 ? REGIONS_M : REGIONS_SOME;
			if (regions_mode == REGIONS_SOME && strcmp(v, "some") != 0) {
				usage();
				return 2;
			}
			i++;
		} else if (strcmp(a, "--shrink") == 0) {
			shrink = true;
		} else if (v != NULL && strcmp(a, "--stall") == 0) {
			/* live.c's injected defects */
			live_stall = strcmp(v, "retry") == 0 ? LIVE_RETRY :
			    strcmp(v, "extend") == 0 ? LIVE_EXTEND : LIVE_NONE;
			if (live_stall == LIVE_NONE) {
				usage();
				return 2;
			}
			i++;
		} else if (v != NULL && (strcmp(a, "--faults") == 0 || strcmp(a, "--events") == 0)) {
			/* A replay of a shrink: only these fault kinds, only these events act. */
			bool faults = strcmp(a, "--faults") == 0;
			char list[4096], *tok, *save = NULL;

			snprintf(list, sizeof(list), "%s", v);
			if (!masked) {
				memset(S.ev_off, 0, sizeof(S.ev_off));
				memset(S.kind_off, 0, sizeof(S.kind_off));
			}
			masked = true;
			if (faults)
				memset(S.kind_off, 1, sizeof(S.kind_off));
			else
				memset(S.ev_off, 1, sizeof(S.ev_off));
			for (tok = strtok_r(list, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save)) {
				unsigned k = 0;
				char *end;
				unsigned long e = strtoul(tok, &end, 10);

				if (strcmp(tok, "none") == 0)
					continue;
				if (faults)
					for (k = 0; k < F_COUNT && strcmp(fault_names[k], tok) != 0; k++)
						;
				if (faults ? k == F_COUNT : *end != '\0' || e >= SIM_EVENTS_MAX) {
					printf("idsim: %s: no %s '%s'\n", a, faults ? "fault kind" :
					    "event", tok);
					return 2;
				}
				if (faults)
					S.kind_off[k] = false;
				else
					S.ev_off[e] = false;
			}
			i++;
		} else if (strcmp(a, "--verbose") == 0) {
			verbose = true;
		} else if (strcmp(a, "--hashes") == 0) {
			hashes = true;
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
	/* A schedule of regions is a pair's: no tier, no namespaces (regions.c). */
	if (regions_mode != REGIONS_SOME && regions_mode != REGIONS_NONE) {
		tier_mode = 2;
		ns_mode = 2;
	}
	/* idserver's log lines are the trace's business, not the terminal's. */
	if (!verbose && freopen("/dev/null", "w", stderr) == NULL)
		return 2;
	/* ... nor formatted at all unless they are errors (nothing else reads them). */
	if (!verbose)
		log_set_level(LOG_LEVEL_ERROR);
	/* The state files' directory goes at exit and on a fatal signal too. */
	atexit(sim_dir_atexit);
	{
		static const int fatal[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGSEGV,
		    SIGBUS, SIGFPE, SIGPIPE, SIGXCPU, SIGXFSZ };

		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], sim_dir_signal);
	}
	statefile_whoami_fn = sim_whoami;
	statefile_mkdir_fn = sim_mkdir;
	statefile_sync_dir_fn = sim_sync_dir;
	lease_whoami_fn = sim_lease_whoami;
	statefile_now_fn = disk_now;
	statefile_ctime_fn = disk_ctime;
	statefile_pread_fn = disk_pread;
	/*
	 * Buffers of half a megabyte (a state file read at every start) from
	 * the heap, kept: not mapped, faulted in and unmapped each time (speed).
	 */
	(void)mallopt(M_MMAP_THRESHOLD, 4 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	S.md = EVP_MD_CTX_new();
	S.md1 = EVP_MD_CTX_new();
	if (S.md == NULL || !EVP_DigestInit_ex(S.md, EVP_sha256(), NULL) || S.md1 == NULL ||
	    !EVP_DigestInit_ex(S.md1, EVP_sha256(), NULL))
		return 2;
	while (done < schedules) {
		unsigned ev = 0;
		int r;

		/* Real time (the process's clock is virtual): time() is not interposed. */
		if (seconds > 0 && (uint64_t)(time(NULL) - start) >= seconds)
			break;
		r = masked ? sim_replay(seed + done, &ev) : sim_schedule(seed + done, &ev);
		done++;
		events += ev;
		if (r == 2)
			res++;
		/*
		 * Its own hash: the same whatever ran before it in the process
		 * (tests/sim.sh compares seeds of a batch with the seed alone).
		 */
		if (hashes) {
			EVP_DigestFinal_ex(S.md1, h, &hl);
			printf("schedule %" PRIu64 " trace ", seed + done - 1);
			for (unsigned k = 0; k < hl; k++)
				printf("%02x", h[k]);
			printf("\n");
			if (!EVP_DigestInit_ex(S.md1, EVP_sha256(), NULL))
				return 2;
		}
		/* A liveness failure (live.c): reported, counted, the run goes on. */
		if ((r == 0 || r == 2) && live_failed() != NULL && ++lives <= 3) {
			printf("idsim: seed %" PRIu64 " liveness failure: %s; replay: build/idsim "
			    "--seed %" PRIu64 " --schedules 1", seed + done - 1, live_failed(),
			    seed + done - 1);
			sim_replay_args(masked, S.ev);
			printf("; the trace's end:\n");
			for (unsigned k = S.ntrace > SIM_TRACE_KEEP ? S.ntrace - SIM_TRACE_KEEP : 0;
			    k < S.ntrace; k++)
				printf("  %s\n", S.trace[k % SIM_TRACE_KEEP]);
		}
		if (r == 1 || r == 3) {
			dups += r == 1;
			printf("idsim: seed %" PRIu64 " %s; replay: build/idsim --seed %" PRIu64
			    " --schedules 1", seed + done - 1,
			    r == 1 ? "issued an ID twice" : "failed", seed + done - 1);
			sim_replay_args(masked, r == 1 ? S.dup_ev : S.ev);
			printf("; the trace's end:\n");
			for (unsigned k = S.ntrace > SIM_TRACE_KEEP ? S.ntrace - SIM_TRACE_KEEP : 0;
			    k < S.ntrace; k++)
				printf("  %s\n", S.trace[k % SIM_TRACE_KEEP]);
			if (r == 3)
				dups++;
			if (r == 1 && shrink)
				sim_shrink(seed + done - 1, masked);
			break;
		}
	}
	EVP_DigestFinal_ex(S.md, h, &hl);
	EVP_MD_CTX_free(S.md);
	EVP_MD_CTX_free(S.md1);
	ranges_free(&S.ranges);
	free(S.residue);
	free(S.nsres);
	for (unsigned k = 0; k < TSERVER_NS; k++)
		ranges_free(&S.nsr[k]);
	free(S.draws);
	free(S.nsalone);
	regions_report();
	printf("fallback: %" PRIu64 " Snowflake IDs; leases %" PRIu64 " claimed, %" PRIu64
	    " resumed, %" PRIu64 " re-adopted, %" PRIu64 " lost, %" PRIu64 " released, %" PRIu64
	    " refused for skew\n", S.fb_ids, S.fb_claims, S.fb_resumed, S.fb_adopted, S.fb_lost,
	    S.fb_releases, S.fb_refused);
	printf("lease-freed: %" PRIu64 " schedules, %" PRIu64 " hand edits drawn, %" PRIu64
	    " sent, %" PRIu64 " applied (delete %" PRIu64 ", expire %" PRIu64 ", free %" PRIu64
	    ", renumber %" PRIu64 "), %" PRIu64 " refused by the triggers, %" PRIu64 " failed; "
	    "%" PRIu64 " idserver statements refused by the triggers\n",
	    LF.schedules, LF.drawn, LF.sent, LF.applied, LF.applied_kind[LE_DELETE],
	    LF.applied_kind[LE_EXPIRE], LF.applied_kind[LE_FREE], LF.applied_kind[LE_RENUMBER],
	    LF.refused, LF.failed, lease_guard_refused);
	if (ME.mode != MEM_NONE)
		printf("mark-edits: %" PRIu64 " schedules, %" PRIu64 " hand edits drawn, %" PRIu64
		    " sent (own %" PRIu64 ", copy %" PRIu64 ", delete %" PRIu64 ", reset %" PRIu64
		    ", truncate %" PRIu64 ", ns %" PRIu64 "), %" PRIu64 " applied (own %" PRIu64
		    ", copy %" PRIu64 ", delete %" PRIu64 ", reset %" PRIu64 ", truncate %" PRIu64
		    ", ns %" PRIu64 "), %" PRIu64 " refused by the triggers, %" PRIu64 " failed\n",
		    ME.schedules, ME.drawn, ME.sent, ME.sent_kind[ME_OWN], ME.sent_kind[ME_COPY],
		    ME.sent_kind[ME_DELETE], ME.sent_kind[ME_RESET], ME.sent_kind[ME_TRUNCATE],
		    ME.sent_kind[ME_NS], ME.applied, ME.applied_kind[ME_OWN],
		    ME.applied_kind[ME_COPY], ME.applied_kind[ME_DELETE], ME.applied_kind[ME_RESET],
		    ME.applied_kind[ME_TRUNCATE], ME.applied_kind[ME_NS], ME.refused, ME.failed);
	printf("marks: %" PRIu64 " idserver and idgenctl statements refused by the triggers\n",
	    mark_guard_refused);
	printf("disks: %" PRIu64 " schedules with disk faults, %" PRIu64 " fdatasyncs, %" PRIu64
	    " failed (EIO), %" PRIu64 " slow (%" PRIu64 " ms), %" PRIu64 " the host's last act, %"
	    PRIu64 " power losses (%" PRIu64 " unsynced sectors kept, %" PRIu64 " lost, %" PRIu64
	    " torn)\n", disk_counts.schedules, disk_counts.syncs, disk_counts.eio, disk_counts.slow,
	    disk_counts.slow_us / 1000, disk_counts.last_acts, disk_counts.power_losses,
	    disk_counts.kept, disk_counts.lost, disk_counts.torn);
	printf("timeouts: %" PRIu64 " schedules with query timeouts, %" PRIu64 " queries timed "
	    "out (%" PRIu64 " ran before, %" PRIu64 " never, %" PRIu64 " ran later, %" PRIu64
	    " of those refused)\n", simdb_timeout_counts.schedules, simdb_timeout_counts.timeouts,
	    simdb_timeout_counts.ran, simdb_timeout_counts.not_run, simdb_timeout_counts.late,
	    simdb_timeout_counts.late_err);
	printf("namespaces: %" PRIu64 " ticket IDs, %" PRIu64 " operator steps, %" PRIu64
	    " blocks drawn again; %" PRIu64 " blocks drawn on a tier's o3 and o4, %" PRIu64
	    " of them again\n", S.ns_ids, S.ns_ops, S.ns_redraws, S.ns_tier_draws,
	    S.ns_tier_redraws);
	printf("tiers: %" PRIu64 " schedules of 3 or 4 servers (M=4), %" PRIu64 " of them the pair "
	    "raised to M=4 (%" PRIu64 " raised and grown before their end); idgenctl tier "
	    "raise-increment run %" PRIu64 " times, %" PRIu64 " of them killed, add-server %" PRIu64
	    ", %" PRIu64 "\n", S.tiers, S.raises, S.raises_done, S.ctl_runs, S.ctl_killed,
	    S.add_runs, S.add_killed);
	sim_ctlops_report();
	printf("residue by class:");
	for (unsigned k = 0; k < RES_COUNT; k++)
		if (k != RES_NS_UNHELD && ((k != RES_REGIONS_M && k != RES_TRUNCATED) ||
		    S.classes[k] != 0))
			printf(" %s %" PRIu64, residue_names[k], S.classes[k]);
	printf("\n");
	live_report();
	printf("sim: %" PRIu64 " schedules, %" PRIu64 " events, %" PRIu64 " duplicates, %" PRIu64
	    " residue, trace ", done, events, dups, res);
	for (unsigned k = 0; k < hl; k++)
		printf("%02x", h[k]);
	printf("\n");
	return dups == 0 && live_failures() == 0 ? 0 : 1;
}
