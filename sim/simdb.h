/*
 * simdb.h - db.h's table of operations over simulated ticket servers
 * (tserver.h): each query is answered after a delay on a virtual-time timer,
 * in order per connection; faults are decided as answers fall due, from the
 * one seeded generator (rng.h): a connection dropped before the server ran
 * the query, a reply lost after the commit (both seen as 2013), a server
 * crash that closes every connection (idle ones through on_lost).
 */
#ifndef IDSIM_SIMDB_H
#define IDSIM_SIMDB_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "tserver.h"

/* How often faults strike, per query answered (per mille); the schedule's weather. */
struct simdb_weather {
	unsigned	max_delay_us;	/* a query's answer comes after 0 .. this */
	unsigned	drop_pm;	/* dropped before it ran */
	unsigned	lost_reply_pm;	/* a ticket transaction committed, its reply lost */
	unsigned	far;		/* 1 + the server far away (its delays x 10); 0: none */
};

/* What the driver learns from the servers. */
struct simdb_hooks {
	/* A ticket drawn for idserver owner on server srv (own: its own mark row before). */
	void		(*drew)(unsigned owner, unsigned srv, uint64_t ticket, uint64_t own);
	/* The copy of role's mark idserver owner would write to srv before it serves. */
	uint64_t	(*copy_want)(unsigned owner, unsigned srv, unsigned role);
	/* A check of srv answered owner: the copies it would read, were they as due. */
	void		(*checked)(unsigned owner, unsigned srv, const uint64_t *due);
	/* Whether idserver owner is cut off from server srv now (a network partition). */
	bool		(*cut)(unsigned owner, unsigned srv);
	/* A namespace ticket drawn (own_end: its own marks row before, in ID space). */
	void		(*ns_drew)(unsigned owner, unsigned srv, const struct tserver_answer *a);
	/* A namespace ticket transaction of owner to srv sent (before any answer). */
	void		(*ns_sent)(unsigned owner, unsigned srv);
	/* A connection of owner to srv connected (connect), or its namespace check was read. */
	void		(*ns_seen)(unsigned owner, unsigned srv, bool connect);
	/* A query of owner's tier connection to srv ran without error (before its answer). */
	void		(*ns_ran)(unsigned owner, unsigned srv);
	/*
	 * A namespace check of owner's to srv answered, before the idserver takes
	 * the answer: what it does with it (a namespace ticket sent on another
	 * server) comes after this read.
	 */
	void		(*ns_answered)(unsigned owner, unsigned srv);
	/* A query no model answers: the schedule fails. */
	void		(*unmodelled)(const char *why);
};

extern const struct db_ops simdb_ops;

/*
 * Told of every connection lost or closed by an error (a crash, a drop, a
 * lost reply, a partition); NULL: nobody (the liveness checker, live.c).
 */
extern void (*simdb_lost_hook)(unsigned owner, unsigned srv);

void	simdb_setup(struct tserver *srv, unsigned n, const struct simdb_weather *w,
	    const struct simdb_hooks *h);
/* Servers 0 .. n-1 may be connected to from now on (a server added to the tier). */
void	simdb_servers(unsigned n);
/*
 * A second region's servers: connections created from now on reach srv[0 ..
 * n-1] (their own indexes), with no hook but unmodelled; NULL: back to the
 * setup's servers and hooks (docs/design.md section 14).
 */
void	simdb_region(struct tserver *srv, unsigned n);
/* The idserver the connections created from now on belong to. */
void	simdb_owner(unsigned owner);
/* Server srv crashed: every connection to it is lost (a query in flight may have run). */
void	simdb_crash(unsigned srv);
/* Every connection of owner to srv is lost (a partition begins). */
void	simdb_drop_owner(unsigned owner, unsigned srv);
/* One connection, picked at random, is lost; false when none is open. */
bool	simdb_drop_one(void);
/* Open connections now. */
unsigned simdb_open(void);

/*
 * Query timeouts (docs/design.md section 14): a query whose answer takes past
 * its connection's query_timeout_ms fails at that deadline with 2013, as
 * db.c's deadline reports it, the connection closed; the server ran it
 * before (its reply lost), runs it up to two timeouts later (a statement
 * still running when its client gave up: applied, unless the server crashes
 * first), or never. On in a schedule or not; weather: a rate per query (off:
 * only stalls). Draws from a generator of their own, seeded from the seed.
 */
struct simdb_timeout_counts {
	uint64_t	schedules, timeouts, ran, not_run, late, late_err;
};

extern struct simdb_timeout_counts simdb_timeout_counts;

void	simdb_timeouts(uint64_t seed, bool on, bool weather);
/* Every query to srv until until_us (virtual) times out: a stalled server. */
void	simdb_stall(unsigned srv, uint64_t until_us);
/* Until when srv is stalled (virtual us; 0 or past: not), for the liveness checker. */
uint64_t simdb_stalled_until(unsigned srv);
/* Late statements dropped (before the schedule's loop is freed). */
void	simdb_timeouts_end(void);

#endif
