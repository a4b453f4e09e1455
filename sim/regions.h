/*
 * regions.h - a second region in the simulation (docs/design.md sections 12.3
 * and 14): beside the driver's pair, which is region 0 of a tier of M = 4 and
 * region bits, region 1's pair (offsets 3 and 4) with its own idservers, on
 * an event loop of its own. Both regions run in one process, and server.c's
 * shape is one for the process: region 1's code (its loop, its takes, its
 * faults) runs with the shape of region 1 and the simulated connections
 * reaching its own servers, then the shape of region 0 is put back. The two
 * regions never list each other (no other_regions): what ties them is the ID
 * space, one interval set for both. A schedule may set a region up against the
 * layout every region must have (R = 5, B = 2^20): region 1's servers with
 * another B, or region 0 with fewer region bits (its worker range covers
 * region 1's numbers).
 */
#ifndef IDSIM_REGIONS_H
#define IDSIM_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "tserver.h"

/* --regions: which schedules have two regions, and what they may get wrong. */
enum regions_mode {
	REGIONS_SOME,	/* the pair's schedules whose seed is 5 modulo 12, any kind */
	REGIONS_ALL,	/* every schedule, any kind */
	REGIONS_NONE,
	REGIONS_B,	/* every schedule, region 1's servers set up with another B */
	REGIONS_R,	/* every schedule, region 0 set up with fewer region bits */
};

/* What a schedule's regions got wrong (drawn, or the mode's). */
enum regions_kind { REGIONS_OK, REGIONS_BAD_B, REGIONS_BAD_R, REGIONS_KINDS };

/* The driver's services: its trace, and its interval set (0, 1 a duplicate, 2 residue). */
struct regions_io {
	void	(*trace)(const char *fmt, ...);
	int	(*record)(unsigned who, uint64_t lo, uint64_t hi);
};

extern enum regions_mode regions_mode;

/*
 * Whether schedule seed has two regions (pair: the schedule is the pair's, of
 * no tier and not every schedule a namespace's). If so: the shape of region
 * 0 set (M = 4, its region bits), *b = 2^20, the driver's servers srv[0 ..
 * n-1] set up again as region 0's, and region 1's servers set up.
 */
bool	regions_begin(uint64_t seed, bool pair, struct tserver *srv, unsigned n, uint64_t *b,
	    const struct regions_io *io);
bool	regions_active(void);
/* Region 1's idservers started on cfg (region 0's, copied), state files in dir. */
bool	regions_start(const struct config *cfg, const char *dir);
/* One event of region 1: a take (what record said) or a fault (0). */
int	regions_event(void);
/*
 * Runs region 1's loop when a timer of it is due by now; returns the
 * earlier of due and its next deadline (sim_run's step skipping).
 */
int64_t	regions_run(int64_t due);
/* Region 1's idservers stopped, its loop freed; the next schedule starts clean. */
void	regions_end(void);
/* Its counts over all schedules taken aside (put_back false), or put back (sim_shrink). */
#define REGIONS_TALLY	(1 + REGIONS_KINDS)
void	regions_tally(uint64_t *t, bool put_back);
/* The count over all schedules, one line. */
void	regions_report(void);

#endif
