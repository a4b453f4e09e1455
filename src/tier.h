/*
 * tier.h - the ticket servers (the odd/even pair, and other regions' pairs
 * for when ours is down) and the buffered blocks they fill.
 *
 * Keeps the pool topped up ahead of demand (prefetch), takes servers in turn,
 * enforces that both servers agree on B and the layout, and keeps the
 * high-water mark of each server: merged from every layer at each check,
 * recorded in the state file before a ticket's IDs are handed out
 * (docs/design.md section 6).
 */
#ifndef IDGEN_TIER_H
#define IDGEN_TIER_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "config.h"
#include "ns.h"
#include "pool.h"
#include "seq.h"
#include "server.h"
#include "statefile.h"
#include "ticket.h"

struct tier;

/* conn_gen wraps here: a ticket waits through fewer ends of its connection. */
#define TIER_CONN_GEN_MASK	0xffffffu
/*
 * The sequence of namespace ns, the default's (sequence 0) when ns is NULL
 * (docs/design.md 13.7).
 */
#define TIER_SEQ(t, ns)	((ns) != NULL ? &(ns)->seq : &(t)->seq)

/* A plain copy UPDATE of a mark, for copy first (docs/design.md 6.5, 13.6). */
struct tier_copy_run {
	bool		 on;		/* it runs */
	uint32_t	 seq;		/* of this sequence's mark (nsrv.id; 0: the default) */
	unsigned	 role;		/* ... of this server */
	uint64_t	 val;		/* ... up to here: a ticket of B (the default), an
					 * end in ID space (a namespace) */
};

/*
 * Called as each ticket's block is banked, of namespace ns (NULL: the
 * default), alone: with no copy of its mark on another server, none being up;
 * NULL but in the simulation, which judges its residue by it (docs/design.md
 * 6.5, 13.6, 14).
 */
extern void	(*tier_banked_hook)(const struct tier *t, const struct nsrv *ns, unsigned srv,
		    uint64_t ticket, bool alone);

struct tier {
	struct ticket_server	 srv[SERVER_MAX];	/* by index (server.h) */
	uint64_t		 block_size;	/* agreed B; 0 until a server is checked */
	uint64_t		 expect_block;	/* block_size setting, 0 = any */
	struct seq_prefetch	 prefetch;	/* every sequence's target follows it */
	struct seq		 seq;		/* the default sequence, 0 (13.7) */
	struct event		*rate_tick;
	uint64_t		 ids_dropped;	/* buffered IDs abandoned (pool overflow) */
	uint64_t		 tickets_other_regions;	/* ... of those from other regions */
	unsigned		 ticket_region;	/* the region of the last ticket banked */
	struct statefile	*sf;		/* the marks live in sf->rec */
	uint64_t		 copy_seen[SERVER_MAX];	/* each server's mark as the
							 * others' copies held it (the most) */
	bool			 copy_read[SERVER_MAX];	/* ... read at least once */
	bool			 fresh[SERVER_MAX];	/* every other server of its region
							 * was checked since this connect */
	bool			 waiting[SERVER_MAX][SERVER_MAX];	/* [s][h]: s waits
							 * for a check of h */
	uint64_t		 wait_after[SERVER_MAX][SERVER_MAX];	/* ... sent after
							 * h's checks_sent of then */
	uint64_t		 wait_since[SERVER_MAX];	/* when s's waits began (mono ms) */
	unsigned		 wait_asked[SERVER_MAX];	/* ... asked again since (tier_waits_watch) */
	unsigned		 wait_limit_ms;	/* a wait longer than this is asked again */
	unsigned		 partner_wait_ms;	/* a server silent this long cannot
							 * answer (docs/design.md 6.4) */
	uint64_t		 silent_since[SERVER_MAX];	/* mono ms: answered no check
							 * since (0: it answers) */
	bool			 unasked[SERVER_MAX][SERVER_MAX];	/* [s][h]: s's connection
							 * serves without a check of h */
	uint64_t		 unasked_at[SERVER_MAX][SERVER_MAX];	/* ... since then
							 * (mono ms), h silent since silent_since */
	bool			 sf_failed;	/* one log line per failure episode */
	/*
	 * Copy first (docs/design.md 6.5, 13.6): the durable tickets of every
	 * sequence waiting for a copy elsewhere (at most SEQ_WAIT_MAX together).
	 */
	struct seq_waits	 await;
	struct tier_copy_run	 copy_run[SERVER_MAX];	/* the plain copy UPDATE
							 * running on each server */
	uint64_t		 copy_need[SERVER_MAX];	/* a ticket of server i drawn, its
							 * copy wanted (from its commit on,
							 * beside its state file write) */
	uint64_t		 copies_pushed;	/* copy UPDATEs run for copy first */
	uint64_t		 copy_wait_us_total;	/* blocks' waits for a copy, summed ... */
	uint64_t		 copy_waits;	/* ... over this many: part of a fetch's time */
	bool			 copy_due;	/* a copy is wanted or a block waits: every
						 * prefetch pushes (a server idle again) */
	bool			 pushing;	/* tier_copy_push runs: an answer
						 * inside it asks for another pass */
	bool			 push_again;
	uint64_t		 banked_alone;	/* tickets banked with no other server up */
	uint32_t		 conn_gen[SERVER_MAX];	/* each server's connections ended
							 * (lost or refused), mod 2^24: a ticket
							 * drawn on an earlier one is not banked
							 * (docs/design.md 6.5, copy-conn) */
	uint64_t		 conn_dropped;	/* tickets so dropped */
	uint64_t		 b_warned[SERVER_MAX];	/* a mark's old B, logged once */
	/* Namespaces (docs/design.md 13.6), on our region's servers. */
	struct nss		 nss;
	uint64_t		 ns_idle_ms;	/* ns_idle_ms */
	uint64_t		 ns_epoch;	/* orders connects and namespace checks */
	uint64_t		 ns_up_at[NS_SERVERS];	/* when each connected (ns_epoch) */
	uint64_t		 ns_at[NS_SERVERS];	/* when its last namespace check ended */
	bool			 ns_due[NS_SERVERS];	/* a namespace check is wanted */
	bool			 ns_due_some;	/* ... on some server */
	bool			 ns_warned[NS_SERVERS];	/* its schema lacks namespaces: logged */
	bool			 ns_bad_warned[NS_SERVERS];	/* rows not understood: logged */
	bool			 ns_witnessed[NS_SERVERS];	/* its copies brought up since
							 * it connected (6.5) */
	bool			 ns_full_warned;	/* the state file's marks full: logged */
	uint64_t		 ns_sent_at[NS_SERVERS];	/* its namespace check in flight
							 * was sent then (ns_epoch) */
	unsigned		 ns_next;	/* the namespace to refill first, taking turns */
	uint64_t		 ns_released;	/* namespaces' buffered IDs let go (idle, gone) */
	uint64_t		 ns_refusals;	/* namespaces refused on a server */
	uint64_t		 ns_copies_pushed;	/* plain namespace copy UPDATEs run */
	uint64_t		 ns_banked_alone;	/* namespace tickets banked with no
							 * other server up */
	void			(*on_change)(void *arg);	/* IDs arrived or health changed */
	void			*arg;
};

/* ops: the database (NULL: MariaDB; a fake in unit tests). */
bool		tier_init(struct tier *t, struct event_base *base, const struct config *cfg,
		    struct statefile *sf, const struct db_ops *ops, void (*on_change)(void *),
		    void *arg)
		    __attribute__((warn_unused_result));
void		tier_free(struct tier *t);

/* Probes every server now. */
void		tier_start(struct tier *t);

/*
 * Takes n IDs (ascending), or with block a dense block of n (its first in
 * *out), from sequence q's buffer (&t->seq: the default; a namespace's
 * nsrv.seq), and keeps refilling; a miss raises its demand (seq.idles).
 */
bool		tier_take(struct tier *t, struct seq *q, bool block, unsigned n, uint64_t *out)
		    __attribute__((warn_unused_result));

/* Starts fetches so enough IDs are buffered or on their way. */
void		tier_prefetch(struct tier *t);

/* True when a server is up (idle or fetching): a short wait may bring IDs. */
bool		tier_any_up(const struct tier *t);

/*
 * The servers whose check, sent after server i's new connection was checked,
 * i waits for before it serves (docs/design.md 6.4): "odd,o4", or "-" (buf:
 * at least 8 bytes per server).
 */
const char	*tier_waits_for(const struct tier *t, unsigned i, char *buf, size_t len);

/* True when every server has settled (up, refused, or failed once). */
bool		tier_settled(const struct tier *t);

/* How many namespaces are served now. */
unsigned	tier_ns_served(const struct tier *t);

/* True when a ticket of ns may come: in flight, or a server that may serve it is up. */
bool		tier_ns_can_fetch(struct tier *t, const struct nsrv *ns);

#endif
