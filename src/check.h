/*
 * check.h - the uniqueness checks of docs/design.md sections 2 and 6, as pure functions.
 *
 * What a ticket server reports at connect, and every ticket it hands out, is
 * checked here; the I/O around it lives in ticket.c.
 */
#ifndef IDGEN_CHECK_H
#define IDGEN_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the connect-time query reads from a server. Strings may be NULL (SQL NULL). */
struct check_server_info {
	const char	*version;		/* @@version */
	const char	*increment;		/* @@auto_increment_increment */
	const char	*offset;		/* @@auto_increment_offset */
	const char	*flush_at_commit;	/* @@innodb_flush_log_at_trx_commit */
	const char	*layout_version;	/* meta row */
	const char	*block_size;
	const char	*parity;		/* meta row: the server's name, "odd" or "even" */
	const char	*tier_increment;	/* meta row: the tier's M */
	const char	*server_offset;		/* meta row: its offset 1..M */
	const char	*region;		/* meta row: its region */
	const char	*region_bits;		/* meta row: worker bits given to regions */
};

/*
 * Checks one server against its index (server.h). On success *block_size
 * holds its B; on failure why names the setting to fix.
 */
bool	check_server(const struct check_server_info *in, unsigned server,
	    uint64_t *block_size, char *why, size_t whylen)
	    __attribute__((warn_unused_result));

/*
 * The service user's rights, proven without running anything: one EXPLAIN per
 * statement idserver runs; a failure names the GRANT (schema/60-grant.sql.in).
 */
struct check_right {
	const char	*sql;
	const char	*privileges;
	const char	*table;
};
extern const struct check_right check_rights[];
extern const size_t check_rights_count;

/*
 * The engine of a ticket table (tickets64, or a namespace's tickets_N) is
 * InnoDB; else why names the table (db.table; db may be NULL), the engine and
 * the ALTER TABLE that repairs it. engine NULL, "" or "-": the table is missing.
 */
bool	check_engine(const char *db, const char *table, const char *engine, char *why,
	    size_t whylen) __attribute__((warn_unused_result));

/*
 * One ticket table as its server's check read it: tickets64 or a namespace's
 * tickets_N, the one check of every sequence's table (docs/design.md 2.3,
 * 6.4, 13.6, 13.7). The settings it draws under are its server's
 * (check_server); its counter against the marks is check_counter's.
 */
struct check_table {
	const char	*database;	/* to name the table (NULL: not named) */
	const char	*table;		/* tickets64, tickets_N */
	const char	*engine;	/* its ENGINE as read (NULL, "" or "-": no table) */
	bool		 counter;	/* its AUTO_INCREMENT was read */
	const char	*marks;		/* its marks rows: idgen_marks, idgen_ns_marks */
	unsigned	 own;		/* its server */
	int		 missing;	/* a server of the region whose marks row
					 * (own, or the copy of its mark) is not
					 * there, or its block_size (-1: none) */
	const char	*repair;	/* what makes the table, its counter and rows */
};

/*
 * The table is there with a counter, InnoDB (a counter that survives a
 * crash), and its server holds every marks row its ticket transaction writes:
 * its own and a copy of every other server's of its region (a copy UPDATE of
 * a missing row writes nothing, yet counts as landed). Else false, why naming
 * the table or row and the repair.
 */
bool	check_table(const struct check_table *in, char *why, size_t whylen)
	    __attribute__((warn_unused_result));

/*
 * The layout of a tier of regions (docs/design.md section 12.3): with
 * region_bits > 0, region_bits must be LAYOUT_REGION_BITS and B
 * LAYOUT_REGION_BLOCK (the config's block_size may be 0, "the servers'"). On
 * failure why names the rule and the repair, of a meta row or of the config.
 */
bool	check_region_layout(uint64_t region_bits, uint64_t block_size, bool meta,
	    char *why, size_t whylen) __attribute__((warn_unused_result));

/*
 * A refusal: the message formatted into why, false returned, so that a check
 * (here, of the config, of a state record, of a token line) can return it.
 */
bool	check_fail(char *why, size_t whylen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* True when the version string has a persistent auto-increment counter. */
bool	check_version(const char *version);

enum check_ticket {
	CHECK_TICKET_OK,
	CHECK_TICKET_PARITY,	/* not the server's residue (wrong parity for the pair) */
	CHECK_TICKET_REGRESSED,	/* not above the high-water mark: the counter moved back */
	CHECK_TICKET_LIMIT,	/* its block would reach 2^53 */
};

/*
 * The refusal of a counter that moved back: the numbers, where the mark was
 * found, and the statement that repairs it on that ticket table (tickets64,
 * tickets_N: one message for every sequence).
 */
void	check_regressed_msg(char *buf, size_t len, const char *name, const char *db,
	    const char *table, uint64_t next, uint64_t mark, const char *where);

/*
 * A column or word read as a decimal (SQL NULL, a sign, junk or overflow:
 * false): the one parser of what a ticket server says.
 */
bool	check_uint(const char *s, uint64_t *out) __attribute__((warn_unused_result));

/* True when a counter whose next ticket is >= next is above the mark. */
bool	check_counter(uint64_t next, uint64_t mark);

/* Checks one ticket from the given server (server.h); it must exceed mark. */
enum check_ticket check_ticket(uint64_t ticket, uint64_t mark, unsigned server,
	    uint64_t block_size);

#endif
