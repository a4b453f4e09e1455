/*
 * server.h - a ticket server's identity: its index in the tier, and the shape
 * of the tier around it.
 *
 * Code names a ticket server by its index; users see names. An idserver uses
 * the servers of its region: server 0 is "odd", server 1 is "even" (the pair),
 * then its region's other servers by offset ("o<O>"); the pairs of the other
 * regions it may take tickets from while its own region's servers are down
 * come last ("odd_r<R>", "even_r<R>"). The tier has
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

#define SERVER_PAIR		2	/* its region's pair: the servers that lease worker numbers */
#define SERVER_EXTRA_MAX	6	/* its region's servers beyond the pair: 8 in all */
#define SERVER_OTHER_MAX	6	/* other regions' pairs an idserver may take tickets from */
/*
 * Every server's mark fits one state file slot (test_state). Servers beyond the
 * pair need one region, other regions' pairs need region bits: an idserver has
 * one kind or the other, at most 14 marks.
 */
#define SERVER_MAX		(SERVER_PAIR + SERVER_EXTRA_MAX + SERVER_PAIR * SERVER_OTHER_MAX)
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

/*
 * The tier's generation as this process knows it (0 until a server says
 * otherwise), and the move to a later one with its increment, never lower
 * than the one before: a change of the increment seen on a server
 * (docs/design.md section 12.4). False when it is not later or M does not fit.
 */
unsigned	 server_generation(void);

/*
 * Servers some server of the tier reports retired (idgenctl tier
 * retire-server; docs/design.md section 12.5): refused at their next check.
 */
void		 server_retire(unsigned index);
bool		 server_retired(unsigned index);
bool		 server_view_adopt(unsigned generation, unsigned increment);

/* Back to a view this process held before (a server that moved it failed its checks). */
void		 server_view_revert(unsigned generation, unsigned increment);
unsigned	 server_region_bits(void);

/*
 * Our region's servers beyond the pair, by offset (the setting more_servers):
 * above every region's pair (server_extra_min()), at most M, distinct, and
 * only in a tier of one region (region_bits 0: with regions, DECODE reads a
 * ticket's region from its offset, 2r+1 or 2r+2). False otherwise. Set before
 * server_others_set().
 */
bool		 server_extras_set(const unsigned *offsets, unsigned n);
unsigned	 server_extra_min(void);

/*
 * The other regions whose pairs this idserver may take tickets from, in the
 * order it tries them (the setting other_regions). False when one is our own
 * region, repeated, outside the region bits, or its pair does not fit M.
 */
bool		 server_others_set(const unsigned *regions, unsigned n);

/* Servers this idserver knows: its region's, then each other region's pair. */
unsigned	 server_count(void);

/* Its region's servers: the pair and the others (indexes 0 .. n-1). */
unsigned	 server_own_count(void);

/* The servers of a server's region that this idserver knows: [*first, *first + *count). */
void		 server_group(unsigned index, unsigned *first, unsigned *count);

/* The region of a server by index. */
unsigned	 server_region_at(unsigned index);

/* True for a server of our own region. */
bool		 server_is_own(unsigned index);

/* "odd", "even", "odd_r1", ...; "?" for an index out of range. */
const char	*server_name(unsigned index);

/* Its marks row: "odd" or "even" in its region's pair, "o<O>" beyond it. */
const char	*server_role(unsigned index);

/* idgen_meta.parity: "odd" or "even", its offset's. */
const char	*server_parity(unsigned index);

/* True with *index set when name is a server's name. */
bool		 server_by_name(const char *name, unsigned *index);

/*
 * True when name is one some tier's shape gives a server ("odd", "even",
 * "o<O>", "odd_r<R>", "even_r<R>"), configured here or not: a record may keep
 * marks of servers this idserver no longer uses (docs/design.md section 12.3).
 */
bool		 server_name_shaped(const char *name);

/* Its auto_increment_offset: 2r + 1 (odd), 2r + 2 (even), r its region. */
unsigned	 server_offset(unsigned index);

/* True when a ticket has the server's residue modulo M. */
bool		 server_owns_ticket(unsigned index, uint64_t ticket);

/*
 * True when a worker number is in our region's range and has the server's
 * parity: only our own region's pair leases worker numbers to us.
 */
bool		 server_owns_worker(unsigned index, unsigned worker);

/* The region a worker number belongs to (its top region_bits bits). */
unsigned	 server_region_of(unsigned worker);

/* Our region's worker numbers: [*lo, *hi]. */
void		 server_worker_range(unsigned *lo, unsigned *hi);

/*
 * The next server of its region (the pair's other, for a pair): the first of
 * the servers that keep a copy of its mark (docs/design.md section 12.2).
 */
unsigned	 server_partner(unsigned index);

#endif
