/*
 * lease.h - the Snowflake worker-number lease: a window of ID time, claimed from
 * and extended on the ticket servers (docs/design.md section 3).
 *
 * Each worker number lives on the server of its residue (server.h: odd numbers
 * on the odd server, even ones on the even server). A
 * claim takes a row whose window_end is below our now (FOR UPDATE SKIP LOCKED)
 * after checking our clock against the server's; the window is then ours to
 * mint in. It is extended (compare-and-set on holder) every lease_extend_ms
 * while a server answers, so an outage of about lease_window_ms is served
 * without any database; on clean shutdown it is released. Uses its own
 * connections, so a lease operation never delays a ticket fetch.
 *
 * The lease and a write-ahead reservation of Snowflake time are kept in the
 * state file, so a restarted process resumes its window even with no database
 * reachable, and re-adopts the row (compare-and-set from the old holder name)
 * when a server answers (docs/design.md section 6).
 */
#ifndef IDGEN_LEASE_H
#define IDGEN_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "config.h"
#include "db.h"
#include "server.h"
#include "snowflake.h"
#include "statefile.h"

/* What the ticket tier knows of a server; the lease trusts only what it trusts. */
enum lease_trust {
	LEASE_TRUSTED,		/* passed the connect-time checks, up */
	LEASE_AWAY,		/* down or reconnecting */
	LEASE_DISTRUSTED,	/* refused or retired (bad settings, regressed counter) */
};

enum lease_state {
	LEASE_NONE,		/* no window: claiming when a server answers */
	LEASE_HELD,		/* a window is ours (it may still run out) */
	LEASE_REFUSED,		/* our clock is too far from the database's */
};

/* The operation in flight: one at a time, on one server (docs/design.md section 3.8). */
enum lease_op {
	LEASE_OP_IDLE,		/* none: waiting for the tick */
	LEASE_OP_CLAIM,		/* taking a free number on c_server */
	LEASE_OP_EXTEND,	/* compare-and-set on our holder name, window_end on */
	LEASE_OP_ADOPT,		/* ... on our previous incarnation's (a resumed window) */
	LEASE_OP_RELEASE,	/* writing back the last ts minted; then on_done */
};

/* Reservations whose landing times set the lead: 25 s at 100 ms (docs/design.md 6.7). */
#define LEASE_LANDINGS	256

struct lease_counters {
	uint64_t	claims;
	uint64_t	claim_failures;
	uint64_t	extends;
	uint64_t	extend_failures;
	uint64_t	skew_refusals;
	uint64_t	extend_skew_refusals;	/* extends refused for clock skew */
	uint64_t	lost;		/* an extend found another holder */
	uint64_t	releases;
	uint64_t	resumed;	/* windows resumed from the state file */
	uint64_t	adopted;	/* ... and re-adopted in the database */
	uint64_t	reservations;	/* write-ahead reservations of Snowflake time */
	uint64_t	reserve_waits;	/* ... a take waited for, the limit reached */
	uint64_t	reserve_ahead_failures;	/* reservations ahead whose write failed */
};

struct lease {
	struct event_base	*base;
	const struct config	*cfg;
	struct snowflake	*gen;
	struct statefile	*sf;		/* the lease's copy lives in sf->rec.lease */
	struct db_conn		*db[SERVER_PAIR];	/* by server index (server.h) */
	int64_t			(*clock_ms)(void);	/* unix ms; injectable */
	char			 holder[160];
	enum lease_state	 state;
	unsigned		 worker;
	int			 server;	/* owner of worker, by server index */
	unsigned		 home;		/* where claims start: our pid's parity (the
						 * simulation sets it per idserver) */
	uint64_t		 window_start;	/* layout ms, as stored */
	uint64_t		 window_end;
	int64_t			 skew_ms;	/* database minus local, at the last check */
	struct event		*tick;
	enum lease_op		 op;		/* in flight; reset by lease_end */
	/* Requests for the next operation, made while one may be in flight. */
	struct {
		bool		 fresh;		/* claim a new number (large clock step, owner lost) */
		bool		 now;		/* ... as soon as the operation in flight ends */
		bool		 release;	/* release, then nothing more (shutdown) */
	} want;
	/* One log line per episode. */
	struct {
		bool		 skew;		/* claims refused for clock skew */
		bool		 extend_skew;	/* extends or adoptions refused for it */
	} logged;
	char			 adopt_from[160];	/* resumed: the row still names it ("": adopted) */
	void			(*on_done)(void *);	/* release finished */
	void			*done_arg;
	void			(*on_change)(void *);
	enum lease_trust	(*trust)(void *, int server);	/* by server index */
	void			*arg;
	/* The operation in flight: a claim's server, tries, number; the new window end. */
	int			 c_server;
	int			 c_tries;
	unsigned		 c_worker;
	uint64_t		 c_now;
	int64_t			 c_t0;
	uint64_t		 c_end;
	/* The reservation ahead of minting (docs/design.md section 6.7). */
	struct {
		uint64_t	 epoch;		/* a new window or its end: older callbacks ignored */
		bool		 pending;	/* a save is posted, its callback not run yet */
		bool		 failed;	/* its write failed: none until a waited one lands */
		int64_t		 posted_us;	/* mono us of the pending post */
		uint64_t	 land_us[LEASE_LANDINGS];	/* the last landing times, a ring */
		unsigned	 nland;		/* landings timed so far (the ring's next is % N) */
		uint64_t	 land_max_us;	/* the longest in the ring */
	} ahead;
	struct lease_counters	 stats;
	char			 last_error[256];
};

/*
 * on_change is told of every lease change; trust says whether the ticket tier
 * vouches for a server: a lease is claimed or extended only on a server that
 * passed the uniqueness checks (a refused, non-durable or restored server's
 * lease rows are as suspect as its tickets). ops is the database (NULL:
 * MariaDB; a fake in unit tests).
 */
bool	lease_init(struct lease *l, struct event_base *base, const struct config *cfg,
	    struct snowflake *gen, struct statefile *sf, const struct db_ops *ops,
	    int64_t (*clock_ms)(void),
	    void (*on_change)(void *), enum lease_trust (*trust)(void *, int), void *arg)
	    __attribute__((warn_unused_result));

/* Sets l's home server and holder name from this process (host, pid, a random nonce). */
void	lease_whoami(struct lease *l);

/*
 * What lease_init takes the home and holder from: lease_whoami but in the
 * simulation, which starts thousands of leases in one process and names
 * each holder itself (docs/design.md section 14: speed).
 */
extern void	(*lease_whoami_fn)(struct lease *l);

/*
 * Resumes the lease of the state file when it is still valid and ours (same
 * host, same servers): minting goes on above its reservation at once. False
 * with the reason in why when it is not resumed.
 */
bool	lease_resume(struct lease *l, const char *servers, char *why, size_t whylen);

/*
 * Persists a reservation of Snowflake time covering ts (write-ahead of
 * minting), waiting for the disk: the generator's limit was reached. False
 * when the state file cannot be written: nothing is minted.
 */
bool	lease_reserve(struct lease *l, uint64_t ts) __attribute__((warn_unused_result));

/*
 * After minting at ts: when ts is within the lead of the limit, posts a higher
 * reservation to the state file's writer without waiting; the generator's
 * limit rises when that write is durable (docs/design.md 6.7).
 */
void	lease_reserve_ahead(struct lease *l, uint64_t ts);

/*
 * The lead in ms: twice fallback_reserve_ms, or twice the longest of the last
 * LEASE_LANDINGS reservation writes, up to fallback_reserve_lead_max_ms.
 */
uint64_t	lease_reserve_lead(const struct lease *l);
void	lease_free(struct lease *l);

/* The holder name's last field: who holds the number (docs/design.md 3.7, 11.8). */
#define LEASE_KIND_IDSERVER	"idserver"
#define LEASE_KIND_LIBIDGEN	"libidgen"

/* Names the holder's kind (safe characters only), after lease_init, before lease_start. */
void	lease_set_kind(struct lease *l, const char *kind);

/* Claims now and keeps the window ahead from then on. */
void	lease_start(struct lease *l);

/* The clock stepped back too far: claim a fresh worker number when possible. */
void	lease_clock_stepped(struct lease *l);

/* Releases the window (after the last ID is minted); done() is called either way. */
void	lease_release(struct lease *l, void (*done)(void *), void *arg);

/* The state for views at now (layout ms): "expired" for a held window now has passed. */
const char *lease_state_at(const struct lease *l, uint64_t now);


#endif
