/*
 * leasefree.h - the schema's guards in the simulated ticket servers: the
 * triggers on idgen_leases (schema/40-leases.sql, docs/design.md 6.5; rule
 * lease-guard) and on idgen_marks and idgen_ns_marks (schema/10-tables.sql;
 * rule mark-guard), and the operator who edits those rows by hand (faults
 * lease-freed and mark-edits, section 14), each drawn from a generator of
 * its own so that every other draw of a schedule stays as it was.
 */
#ifndef IDSIM_LEASEFREE_H
#define IDSIM_LEASEFREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "tserver.h"

#define LEASE_OPEN_MS		3600000	/* a window may be open until an hour past its end */
#define LEASE_EDIT_PM		15	/* an edit per event, per mille, where the fault is on */
#define LEASE_NO_ROW		UINT32_MAX	/* a slot whose row was deleted */

/* The operator's hand edits of a held row: each one 6.5 warns about. */
enum lease_edit {
	LE_DELETE,	/* DELETE the row and INSERT it again (a fresh, free row) */
	LE_EXPIRE,	/* window_end moved to just before the server's now, holder kept */
	LE_FREE,	/* holder emptied and window_end 0 in one UPDATE (6.5's example) */
	LE_RENUMBER,	/* the row and the server's other row swap numbers (three
			 * UPDATEs of worker, through a spare number) */
	/* Each kind's statements run in one transaction (lease_freed_apply). */
	LE_COUNT,
};

extern const char *const lease_edit_names[LE_COUNT];

/* --lease-freed: in half the schedules (drawn from the fault's generator), all, none. */
enum lease_freed_mode { LF_HALF, LF_ALL, LF_NONE };

/* The fault's generator and counts. */
struct lease_freed {
	enum lease_freed_mode	mode;
	bool			on;		/* in this schedule */
	struct rng_state	rng;		/* its own generator, from the seed */
	/* Over all schedules (not a shrink's replays). */
	uint64_t		schedules;	/* with the fault on */
	uint64_t		drawn;		/* edits drawn */
	uint64_t		sent;		/* ... sent: a held row, the server up */
	uint64_t		applied;	/* ... that changed the row */
	uint64_t		refused;	/* ... refused by the triggers (1644) */
	uint64_t		failed;		/* ... failed otherwise (a row locked) */
	uint64_t		applied_kind[LE_COUNT];
};

/*
 * One statement of the operator's on idgen_leases (the kinds above), run
 * on s as an autocommitted statement, through the triggers while lease-guard
 * is on; affected[0]: rows changed. 1644 refused, 1205 a row locked by an
 * open transaction, 1062 a number taken, 1064 not one of them.
 */
void	tserver_lease_edit(struct tserver *s, const char *sql, struct tserver_answer *a);

/* A new schedule of seed: the fault on or off, its generator seeded. */
void	lease_freed_schedule(struct lease_freed *lf, uint64_t seed);
/*
 * One event's draws (the same number whatever the servers hold): true when
 * the operator edits a row now, of kind on server srv (below nsrv), the held
 * row chosen by pick.
 */
bool	lease_freed_draw(struct lease_freed *lf, unsigned nsrv, enum lease_edit *kind,
	    unsigned *srv, uint64_t *pick);
/*
 * The edit on s of one row held now (a holder named, window_end not below
 * the server's now; chosen by pick), its statements in one
 * transaction, one after the other until one fails, which rolls back the
 * ones before: 0 every statement ran, else the error that stopped it (2003
 * the server down); -1 no held row, nothing sent. line: the row and the
 * error with its message, for the trace.
 */
int	lease_freed_apply(struct tserver *s, enum lease_edit kind, uint64_t pick, char *line,
	    size_t len);


/* The operator's hand edits of marks rows (fault mark-edits): each one 6.5 warns about. */
enum mark_edit {
	ME_OWN,		/* UPDATE lowering a server's own row */
	ME_COPY,	/* UPDATE lowering a copy row (another role's, on this server) */
	ME_DELETE,	/* DELETE a row and INSERT it again (at 0) */
	ME_RESET,	/* a role's sequence "reset": TRUNCATE tickets64 and ALTER its
			 * AUTO_INCREMENT lower on its server, then its row lowered as
			 * far on every server (one statement each, autocommitted) */
	ME_TRUNCATE,	/* TRUNCATE idgen_marks and its rows inserted again, at 0: no
			 * trigger fires (6.5's "what the triggers cannot guarantee") */
	ME_NS,		/* UPDATE lowering an idgen_ns_marks row (a namespace's) */
	ME_COUNT,
};

extern const char *const mark_edit_names[ME_COUNT];

#define MARK_EDIT_PM	10	/* an edit per event, per mille, where the fault is on */

/* --mark-edits: none (the default: every schedule as before), half, all. */
enum mark_edits_mode { MEM_NONE, MEM_HALF, MEM_ALL };

struct mark_edits {
	enum mark_edits_mode	mode;
	bool			on;		/* in this schedule */
	struct rng_state	rng;
	uint64_t		schedules, drawn, sent, applied, refused, failed;
	uint64_t		applied_kind[ME_COUNT];
	uint64_t		sent_kind[ME_COUNT];
};

void	mark_edits_schedule(struct mark_edits *me, uint64_t seed);
/* One event's draws: true when the operator edits now, of kind, server srv, values from pick. */
bool	mark_edits_draw(struct mark_edits *me, unsigned nsrv, enum mark_edit *kind, unsigned *srv,
	    uint64_t *pick);
/*
 * One statement of the operator's on the marks tables of s, autocommitted,
 * through the triggers while mark-guard is on: 0 it ran (affected: rows
 * changed), 1644 refused, 2003 down, 1064 not one of the edits.
 */
unsigned tserver_mark_edit(struct tserver *s, const char *sql, uint64_t *affected, char *why,
	    size_t len);
/*
 * The edit on the servers srv[0..nsrv) (kind ME_RESET touches each; every
 * other kind only srv[at]); role: the row edited (a server index), chosen
 * by pick among those above 0. Its statements on one server run in one
 * transaction, but a reset's are autocommitted one by one (the operator's
 * script). 0 every statement ran; else the first error (2003 down); -1
 * nothing to edit, nothing sent. line: what was sent, for the trace.
 */
int	mark_edits_apply(struct tserver *srv, unsigned nsrv, unsigned at, enum mark_edit kind,
	    uint64_t pick, char *line, size_t len);

#endif
