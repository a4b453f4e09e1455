/*
 * regions.h - more regions in the simulation (docs/design.md sections 12.3
 * and 14): beside the driver's pair, which is region 0 of a tier of regions
 * of pairs, one to three more regions (region r: offsets 2r+1 and 2r+2 of
 * the tier's M), each with its own pair and idservers on an event loop of its
 * own. All regions run in one process, and server.c's shape is one for the
 * process: region r's code (its loop, its takes, its faults) runs with the
 * shape of region r and the simulated connections reaching its own servers,
 * then the shape of region 0 is put back. Region 1 draws from the driver's
 * generator (the two-region schedules it had before), regions 2 and 3 from
 * a stream of their own, seeded by the schedule. The regions never list each
 * other (no other_regions): what ties them is the ID space, one interval set
 * for all. A schedule may set a region up against the layout every region
 * must have (R = 5, B = 2^20): a region's servers with another B, or region 0
 * with fewer region bits (its worker range covers another region's numbers);
 * or against the tier's one M (12.3's residue: a region under another M
 * draws tickets of another region's residue, which no check can see).
 */
#ifndef IDSIM_REGIONS_H
#define IDSIM_REGIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "tserver.h"

#define REGIONS_MAX	4	/* regions 0 .. 3: M = 8 holds four pairs */

/* --regions: which schedules have regions, and what they may get wrong. */
enum regions_mode {
	REGIONS_SOME,	/* the pair's schedules whose seed is 5 modulo 12, any kind */
	REGIONS_ALL,	/* every schedule, any kind */
	REGIONS_NONE,
	REGIONS_B,	/* every schedule, a region's servers set up with another B */
	REGIONS_R,	/* every schedule, region 0 set up with fewer region bits */
	REGIONS_M,	/* every schedule, a region set up under another M */
};

/* What a schedule's regions got wrong (drawn, or the mode's). */
enum regions_kind {
	REGIONS_OK, REGIONS_BAD_B, REGIONS_BAD_R, REGIONS_BAD_M, REGIONS_KINDS
};

/* The driver's services: its trace, and its interval set (0, 1 a duplicate, 2 residue). */
struct regions_io {
	void	(*trace)(const char *fmt, ...);
	int	(*record)(unsigned who, uint64_t lo, uint64_t hi);
};

extern enum regions_mode regions_mode;

/* The mode as --regions takes it. */
const char *regions_mode_name(void);
/*
 * Whether schedule seed has regions (pair: the schedule is the pair's, of no
 * tier and not every schedule a namespace's). If so: the shape of region 0
 * set (the tier's M, its region bits), *b = 2^20, the driver's servers
 * srv[0 .. n-1] set up again as region 0's, and the other regions' servers
 * set up.
 */
bool	regions_begin(uint64_t seed, bool pair, struct tserver *srv, unsigned n, uint64_t *b,
	    const struct regions_io *io);
bool	regions_active(void);
/* The other regions' idservers started on cfg (region 0's, copied), state files in dir. */
bool	regions_start(const struct config *cfg, const char *dir);
/* One event of one other region: a take (what record said) or a fault (0). */
int	regions_event(void);
/*
 * Runs each other region's loop when a timer of it is due by now; returns
 * the earlier of due and their next deadline (sim_run's step skipping).
 */
int64_t	regions_run(int64_t due);
/*
 * The own stream of regions 2 and 3 kept at the driver's points of event ev
 * (run: before its sim_run), or put back there in a replay (sim_shrink).
 */
void	regions_stream_at(unsigned ev, bool run, bool replay);
/*
 * Whether an ID of ticket t handed out by the idservers who_a and who_b is
 * 12.3's residue: two regions under different M, t of both regions' residues.
 */
bool	regions_residue(unsigned who_a, unsigned who_b, uint64_t t);
/* The other regions' idservers stopped, their loops freed; the next schedule starts clean. */
void	regions_end(void);
/* Its counts over all schedules taken aside (put_back false), or put back (sim_shrink). */
#define REGIONS_TALLY	(1 + REGIONS_KINDS + REGIONS_MAX + 1 + 3)
void	regions_tally(uint64_t *t, bool put_back);
/* The count over all schedules, one line. */
void	regions_report(void);

#endif
