/*
 * server.h - a ticket server's identity: its index in the tier.
 *
 * Code names a ticket server by its index; users see names. The pair is
 * servers 0 and 1 with auto_increment_increment 2: server 0 is "odd"
 * (auto_increment_offset 1), server 1 is "even" (offset 2). Server i hands
 * out the tickets whose residue modulo the increment is its offset, owns the
 * worker numbers of that residue, and keeps a copy of its partner's mark
 * (docs/design.md sections 2 and 6). The names appear in config keys, STATS,
 * metrics labels, log lines, the state file and the marks table.
 */
#ifndef IDGEN_SERVER_H
#define IDGEN_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#define SERVER_COUNT		2	/* ticket servers in the tier */
#define SERVER_INCREMENT	2	/* auto_increment_increment: a residue each */

/* The pair's indexes, for the code that must name one (its config keys, tests). */
#define SERVER_ODD		0
#define SERVER_EVEN		1

/* "odd", "even"; "?" for an index out of range. */
const char	*server_name(unsigned index);

/* True with *index set when name is a server's name. */
bool		 server_by_name(const char *name, unsigned *index);

/* Its auto_increment_offset (1..SERVER_INCREMENT). */
unsigned	 server_offset(unsigned index);

/* True when value (a ticket or a worker number) has the server's residue. */
bool		 server_owns(unsigned index, uint64_t value);

/* The server whose copy of this server's mark is kept, and vice versa. */
unsigned	 server_partner(unsigned index);

#endif
