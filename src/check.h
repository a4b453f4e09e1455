/*
 * check.h - the uniqueness checks of DESIGN.md section 2, as pure functions.
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
	const char	*engine;		/* ENGINE of the ticket table */
	const char	*layout_version;	/* meta row */
	const char	*block_size;
	const char	*parity;		/* "odd" or "even" */
};

/*
 * Checks one server against its role (parity 1 = odd, 0 = even). On success
 * *block_size holds its B; on failure why names the setting to fix.
 */
bool	check_server(const struct check_server_info *in, unsigned parity,
	    uint64_t *block_size, char *why, size_t whylen)
	    __attribute__((warn_unused_result));

/* True when the version string has a persistent auto-increment counter. */
bool	check_version(const char *version);

enum check_ticket {
	CHECK_TICKET_OK,
	CHECK_TICKET_PARITY,	/* wrong parity for the server's role */
	CHECK_TICKET_REGRESSED,	/* not greater than the last one: restored database? */
	CHECK_TICKET_LIMIT,	/* its block would reach 2^53 */
};

/* Checks one ticket from a server of the given parity whose last ticket was last. */
enum check_ticket check_ticket(uint64_t ticket, uint64_t last, unsigned parity,
	    uint64_t block_size);

#endif
