/*
 * tserver.h - a simulated ticket server: it computes its answers from the SQL
 * idserver sends (ticket.c's check, rights, witness and ticket transaction),
 * over the tables that matter to uniqueness: tickets64's AUTO_INCREMENT with
 * the tier's increment and the server's offset, and idgen_marks (a row per
 * role, with its B). A statement list is applied at once, as one committed
 * transaction; committed state survives a crash; a backup is a copy of the
 * tables, a restore puts them back.
 */
#ifndef IDSIM_TSERVER_H
#define IDSIM_TSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "server.h"

#define TSERVER_MAX	4	/* the pair, or a tier of M = 4: offsets 1..4 (docs/design.md 12.2) */
#define TSERVER_TEXT	48
#define TSERVER_WORKERS	2	/* idgen_leases rows per server: few, so numbers are reused */
#define TSERVER_TX_MAX	16	/* open lease transactions at once */
#define TSERVER_NS	2	/* namespaces a schedule may create: n0, n1 */
#define TSERVER_NS_TEXT	1024	/* the namespace check's one long field */

enum tserver_ns_state { TS_NS_NONE, TS_NS_CREATING, TS_NS_READY, TS_NS_DROPPED };

/*
 * One namespace on one server (docs/design.md 13.1): its idgen_namespaces
 * row, its tickets_N counter (0: no table) and its idgen_ns_marks rows.
 */
struct tserver_ns {
	enum tserver_ns_state	state;
	uint64_t		b;		/* block_size */
	bool			refuse;		/* fallback 'refuse', else 'snowflake' */
	uint64_t		counter;	/* tickets_N's next ticket; 0: no table */
	uint64_t		last;		/* its one row: the last ticket drawn, 0 none */
	bool			emptied;	/* DELETE FROM tickets_N since the last ALTER */
	uint64_t		start_above;
	uint64_t		hw[TSERVER_MAX];	/* idgen_ns_marks by role */
	uint64_t		hb[TSERVER_MAX];
	/* Not a table: copies idservers were due to write here (witness, tickets), in ID space. */
	uint64_t		due_end[TSERVER_MAX];
};

/* One idgen_leases row (schema/40-leases.sql); worker numbers of the server's parity. */
struct tserver_lease {
	unsigned	worker;
	char		holder[160];
	uint64_t	window_start;	/* layout ms */
	uint64_t	window_end;
};

/* What the tables hold (what a backup copies). */
struct tserver_state {
	uint64_t	counter;		/* tickets64's AUTO_INCREMENT: the next ticket is
						 * the first of the server's residue at or above it */
	uint64_t	last;			/* tickets64's row: the last ticket drawn */
	/* idgen_meta's shape and generation (docs/design.md 12.4), its own row's. */
	unsigned	meta_m;			/* tier_increment */
	unsigned	gen;			/* tier_generation */
	unsigned	plan;			/* tier_plan: the change in progress, 0 none */
	bool		meta_row;		/* idgen_meta's row exists (a new server: not yet) */
	unsigned	meta_offset;		/* ... its server_offset */
	unsigned	rows;			/* idgen_marks rows that exist, a bit per role */
	unsigned	retired;		/* ... flagged retired (12.5), a bit per role */
	uint64_t	floor;			/* tier_floor (an ID) */
	unsigned	own_gen;		/* its own marks row: generation */
	bool		sealed;			/* ... sealed */
	uint64_t	mark[TSERVER_MAX];	/* idgen_marks.high_water by role (server index) */
	uint64_t	mark_b[TSERVER_MAX];
	/*
	 * Not a table: the copy of each other role's mark that idservers were
	 * due to write here (every ticket transaction's copy, and each new
	 * connection's witness whether or not it was sent). A restore takes it
	 * back with the rows.
	 */
	uint64_t	due[TSERVER_MAX];
	struct tserver_lease lease[TSERVER_WORKERS];	/* idgen_leases: a backup copies them */
	struct tserver_ns ns[TSERVER_NS];	/* the namespace tables */
};

#define TSERVER_SESSIONS	1024	/* sessions remembered (by connection id, modulo) */

struct tserver {
	unsigned		m;		/* @@GLOBAL.auto_increment_increment */
	unsigned		cnf_m;		/* ... in its config file: what a restart
						 * takes (SET GLOBAL does not outlive one) */
	unsigned		offset;		/* auto_increment_offset */
	/* Each session's increment, taken from the global one at its connect. */
	struct {
		uint64_t	conn;
		unsigned	m;
	}			session[TSERVER_SESSIONS];
	unsigned		index;		/* the tier's srv[] index: 0 odd, 1 even, then o3, o4 */
	bool			up;
	uint64_t		b;		/* idgen_meta.block_size */
	struct tserver_state	st;
	struct tserver_state	backup;
	bool			have_backup;
	uint64_t		drawn_max;	/* the highest ticket ever drawn: no restore lowers it */
	uint64_t		copy_ever[TSERVER_MAX];	/* the highest copy of each role's mark
						 * its rows ever held: no restore lowers it */
	uint64_t		due_ever[TSERVER_MAX];	/* ... idservers were ever due to write */
	/* When copy_ever rose, and to what (mono ms), for copy first's window (6.5). */
	struct {
		unsigned	role;
		uint64_t	value;
		uint64_t	ms;
	}			*landed;
	size_t			nlanded, caplanded;
	uint64_t		draws;
	/* Per namespace and role, in ID space: the highest copy its rows ever held, and
	 * idservers were ever due to write (no restore lowers them). */
	uint64_t		ns_copy_ever[TSERVER_NS][TSERVER_MAX];
	uint64_t		ns_due_ever[TSERVER_NS][TSERVER_MAX];
	/*
	 * The highest mark an operator's hand edit (leasefree.h's mark-edits)
	 * took from each role's row here (a ticket), and each namespace's (an
	 * end in ID space): a row lowered so is no restore's residue (idsim.c).
	 * trunc_lost: the same taken by TRUNCATE idgen_marks, which no trigger
	 * sees (class marks-truncated, section 14.1).
	 */
	uint64_t		hand_lost[TSERVER_MAX];
	uint64_t		trunc_lost[TSERVER_MAX];
	uint64_t		ns_hand_lost[TSERVER_NS][TSERVER_MAX];
	/* The last AUTO_INCREMENT idgenctl set on tickets_N (not a table; 0 none). */
	uint64_t		ns_ctl_set[TSERVER_NS];
	/* When ns_copy_ever rose, and to what (virtual us): namespace copy first's window. */
	struct {
		unsigned	ns;
		unsigned	role;
		uint64_t	end;
		uint64_t	us;
	}			*ns_landed;
	size_t			nns_landed, capns_landed;
	/* Row locks of open lease transactions (FOR UPDATE): the connection's id, 0 none. */
	uint64_t		locked[TSERVER_WORKERS];
	struct tserver_lease	pending[TSERVER_WORKERS];	/* ... its uncommitted UPDATE */
	bool			pending_set[TSERVER_WORKERS];
	struct {
		uint64_t	conn;	/* a connection with a transaction open; 0: free */
	}			tx[TSERVER_TX_MAX];
	uint64_t		(*now_ms)(void);	/* NOW(3), unix ms */
	bool			read_only;	/* @@GLOBAL.read_only (tserver_ro_refuses) */
	uint64_t		ro_until;	/* virtual us: the driver sets it OFF again */
	unsigned		region;		/* idgen_meta.region, region_bits (0: one region) */
	unsigned		region_bits;
	/* idgenctl's open transaction (tserver_ctl): its connection, 0 none, and the
	 * tables as they were at its START TRANSACTION (put back if it ends uncommitted). */
	uint64_t		ctl_tx;
	struct tserver_state	ctl_before;
};

#define TSERVER_CTL_ROWS	8
#define TSERVER_CTL_FIELDS	18	/* idgenctl's check query: 17 */

/* One answer to idgenctl (tserver_ctl): an error, or a result set of text, or none. */
struct tserver_rows {
	unsigned	err;
	char		why[160];
	bool		result;		/* a SELECT's rows follow */
	unsigned	nrows;
	unsigned	nfields;
	char		cell[TSERVER_CTL_ROWS][TSERVER_CTL_FIELDS][32];
	bool		null[TSERVER_CTL_ROWS][TSERVER_CTL_FIELDS];
};

/* One answer, as db_result wants it. */
struct tserver_answer {
	unsigned	err;
	unsigned	nstmts;
	uint64_t	insert_id[DB_MAX_STMTS];
	uint64_t	affected[DB_MAX_STMTS];
	char		text[TSERVER_TEXT][32];
	bool		null[TSERVER_TEXT];
	unsigned	nfields;
	/* A ticket transaction: the ticket drawn and its own mark row before it. */
	bool		drew;
	uint64_t	ticket;
	uint64_t	own_before;
	char		why[160];	/* err: the message */
	/* A namespace ticket drawn: which namespace, and its own marks row before (ID space). */
	bool		ns_drew;
	bool		ns_ok;		/* ... its catalogue row as the idserver judged it */
	unsigned	ns;
	uint64_t	ns_b;
	uint64_t	ns_own_end;
	/* The namespace check's first field (too long for text[0]). */
	bool		big;
	char		bigtext[TSERVER_NS_TEXT];
};

/* The name of namespace k ("n0", "n1"); its index from a name, -1: none. */
const char *tserver_ns_name(unsigned k);
int	tserver_ns_index(const char *name, size_t len);
/* The end in ID space of a mark (hw, hb); hb 0 is b. */
uint64_t tserver_ns_end(uint64_t hw, uint64_t hb, uint64_t b);

void	tserver_init(struct tserver *s, unsigned index, uint64_t b);
/*
 * Answers (and applies) one query of connection conn (its id, for lease row
 * locks and the session's transaction); CONNECT for the handshake.
 */
void	tserver_answer(struct tserver *s, uint64_t conn, const char *sql,
	    struct tserver_answer *a);
/*
 * Answers (and applies) one statement of idgenctl's, as the administrator,
 * on connection conn (sim/ctlrun.c): the statements of ctl/raise.c and of
 * the namespace check it shares (ctl/ns.c). A transaction (START
 * TRANSACTION .. COMMIT) applies each statement at once; the connection lost
 * before its COMMIT puts the tables back (tserver_conn_gone). read_only does
 * not refuse an administrator. Anything else is error 1064, "not modelled".
 */
void	tserver_ctl(struct tserver *s, uint64_t conn, const char *sql, struct tserver_rows *r);
/*
 * The role of server index beyond the configured ones (a server add-server
 * makes): 'o<offset>' in the statements; offset 0 forgets it.
 */
void	tserver_role_set(unsigned index, unsigned offset);
/* Role k's name in the statements (buf: room for an 'o<offset>'). */
const char *tserver_role_name(unsigned k, char *buf, size_t len);
/*
 * A new MariaDB for add-server (ctl/add.c): increment m and offset in its
 * config, the schema loaded, no meta row, no marks or lease row, no ticket.
 */
void	tserver_fresh(struct tserver *s, unsigned offset, unsigned m);
/* Connection conn ended: its open transaction rolls back, its row locks go. */
void	tserver_conn_gone(struct tserver *s, uint64_t conn);
/* The operator's repair after a restore (6.5): every window ends after until. */
void	tserver_lease_repair(struct tserver *s, uint64_t until);
/* A copy of a mark an idserver was due to write here (the witness point). */
void	tserver_due(struct tserver *s, unsigned role, uint64_t high_water);
/* A copy of namespace k's mark of role (an end in ID space) an idserver was due to write here. */
void	tserver_ns_due(struct tserver *s, unsigned k, unsigned role, uint64_t end);
void	tserver_backup(struct tserver *s);
bool	tserver_restore(struct tserver *s);
/*
 * idgenctl tier raise-increment's steps on this server (ctl/raise.c, 12.4):
 * its own row sealed in generation g; opened in g + 1 under increment m above
 * floor f (in tickets of B): SET GLOBAL (sessions open keep theirs), ALTER
 * TABLE tickets64 AUTO_INCREMENT = f + 1, every marks row raised to f, the
 * meta row and its own row in g + 1, unsealed.
 */
void	tserver_seal(struct tserver *s);
void	tserver_open(struct tserver *s, unsigned m, uint64_t f);
/*
 * idgenctl tier add-server's steps on the new server (ctl/add.c): its meta
 * row in the tier's generation, increment m and floor, its own mark below
 * ticket t (the first above every floor and mark), its counter at t.
 */
void	tserver_add(struct tserver *s, unsigned offset, unsigned m, unsigned gen,
	    uint64_t floor, uint64_t t);
/* ALTER TABLE tickets64 AUTO_INCREMENT lowered by hand: the marks stay. */
void	tserver_lower(struct tserver *s, uint64_t by);
/* ALTER TABLE tickets_N AUTO_INCREMENT lowered by hand (namespace k): its marks stay. */
void	tserver_ns_lower(struct tserver *s, unsigned k, uint64_t by);

/*
 * read_only = ON (MariaDB's SET GLOBAL read_only): whether it refuses the
 * statement list sql (a write, an EXPLAIN of one, a locking read), with
 * TSERVER_RO_ERR and MariaDB's message; reads go on.
 */
#define TSERVER_RO_ERR	1290	/* ER_OPTION_PREVENTS_STATEMENT */
extern const char tserver_ro_msg[];
bool	tserver_ro_refuses(const char *sql);

/*
 * lease.c's statements the triggers refused (tserver_leases_guard: none while
 * every rule is on, the writers pass, 6.5), counted while lease_guard_count.
 */
extern bool	lease_guard_count;
extern uint64_t	lease_guard_refused;

/*
 * The triggers idgen_leases_no_free (new non-NULL: an UPDATE) and
 * idgen_leases_no_delete (new NULL) on one row: NULL when they let it pass,
 * else the message of the SIGNAL (error 1644). now_ms: the server's NOW(3),
 * unix ms; release: @idgen_release, NULL when unset.
 */
const char *tserver_lease_trigger(const struct tserver_lease *old,
	    const struct tserver_lease *new, uint64_t now_ms, const char *release);

/*
 * The marks' triggers (schema/10-tables.sql), condition by condition in
 * their order, on one row: NULL when they let it pass, else the message of
 * the SIGNAL (error 1644). An UPDATE from (oh, ob) to (nh, nb), renamed when
 * its role (or ns) changes; del: a DELETE (nh, nb unused). b: the B the
 * trigger reads when a block_size is 0 (idgen_meta's, or the namespace's
 * row's; 1 without the row).
 */
const char *tserver_mark_trigger(uint64_t oh, uint64_t ob, uint64_t nh, uint64_t nb, uint64_t b,
	    bool renamed, bool del);

/*
 * The idservers' and idgenctl's statements on the marks the triggers
 * refused (none while every rule is on: they only raise, 6.5), counted
 * while mark_guard_count; the row is then left as it was.
 */
extern bool	mark_guard_count;
extern uint64_t	mark_guard_refused;

#endif
