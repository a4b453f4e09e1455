/*
 * server.h - a ticket server's identity: its index in the tier, and the shape
 * of the tier around it.
 *
 * Code names a ticket server by its index; users see names. An idserver uses
 * the pair of its region: server 0 is "odd", server 1 is "even". The tier has
 * an increment M (auto_increment_increment) and region r's pair has the
 * offsets 2r+1 and 2r+2, so the odd server's tickets stay odd and the even
 * server's even (one region, the classic pair: M = 2, offsets 1 and 2). A
 * server hands out the tickets of its residue modulo M and owns the worker
 * numbers of its parity inside its region's range (region bits: the top bits
 * of the 10-bit worker); it keeps a copy of its partner's mark (docs/design.md
 * sections 2, 6 and 12). The names appear in config keys, STATS, metrics
 * labels, log lines, the state file and the marks table.
 */
#ifndef IDGEN_SERVER_H
#define IDGEN_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#define SERVER_COUNT		2	/* ticket servers an idserver uses: its region's pair */
#define SERVER_INCREMENT_MAX	64	/* the largest M: 32 regions of a pair */
#define SERVER_REGION_BITS_MAX	5	/* 32 regions of 32 workers */

/* The pair's indexes, for the code that must name one (its config keys, tests). */
#define SERVER_ODD		0
#define SERVER_EVEN		1

/*
 * The tier's shape as this process expects it (the settings tier_increment,
 * region, region_bits); the meta rows must agree (check.c). Until set: the
 * classic pair. False when the region's pair does not fit (2r + 2 > M) or
 * the region is outside its bits.
 */
bool		 server_shape_set(unsigned increment, unsigned region, unsigned region_bits);
unsigned	 server_increment(void);
unsigned	 server_region(void);
unsigned	 server_region_bits(void);

/* "odd", "even"; "?" for an index out of range. */
const char	*server_name(unsigned index);

/* True with *index set when name is a server's name. */
bool		 server_by_name(const char *name, unsigned *index);

/* Its auto_increment_offset: 2r + 1 (odd), 2r + 2 (even). */
unsigned	 server_offset(unsigned index);

/* True when a ticket has the server's residue modulo M. */
bool		 server_owns_ticket(unsigned index, uint64_t ticket);

/* True when a worker number is in our region's range and has the server's parity. */
bool		 server_owns_worker(unsigned index, unsigned worker);

/* The region a worker number belongs to (its top region_bits bits). */
unsigned	 server_region_of(unsigned worker);

/* Our region's worker numbers: [*lo, *hi]. */
void		 server_worker_range(unsigned *lo, unsigned *hi);

/* The server whose copy of this server's mark is kept, and vice versa. */
unsigned	 server_partner(unsigned index);

#endif
