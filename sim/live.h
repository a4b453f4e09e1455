/*
 * live.h - the simulation's liveness checker (docs/design.md section 14,
 * "Liveness"): it only reads the idservers and the simulated servers, so a
 * schedule's trace is the same with it; with --stall it injects a defect
 * (a lost server never retried, or a lease's extensions lost) to show it
 * can fail.
 *
 * (T) a tier with a healthy server serves tickets again within a bound;
 * (F) the fallback serves while a lease window is valid.
 */
#ifndef IDSIM_LIVE_H
#define IDSIM_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "lease.h"
#include "snowflake.h"
#include "tier.h"
#include "tserver.h"

#define LIVE_SLOTS	3

/* What the checker reads of one idserver slot (fields of idsim.c's struct idserver). */
struct live_view {
	const bool		*on;
	const unsigned		*who;		/* its incarnation */
	struct tier		*t;
	const struct lease	*lease;
	struct snowflake	*gen;
	const uint64_t		*cut_until;	/* [TSERVER_MAX], virtual us */
	int64_t			(*clock_ms)(void);	/* its wall clock, unix ms */
};

/*
 * --stall: an injected defect (none: the checker only observes). retry: an
 * idserver never reconnects to a server it lost; extend: a lease's
 * extensions never reach its generator (its window ends where it was claimed).
 */
enum live_defect { LIVE_NONE, LIVE_RETRY, LIVE_EXTEND };
extern enum live_defect live_stall;

/*
 * The weather: the largest answer delay, whether one server is ten times
 * slower, whether queries may time out (simdb.h).
 */
void	live_weather(unsigned max_delay_us, bool far, bool timeouts);
/*
 * A schedule begins: its settings (filled), servers, whether (T) applies
 * (not in a raise or a schedule of regions), whether its run is counted.
 */
void	live_schedule(uint64_t seed, const struct config *cfg, const struct tserver *srv,
	    unsigned nsrv, bool tickets, bool counted);
void	live_idserver(unsigned slot, const struct live_view *v, unsigned nids);
void	live_event(uint64_t ev);
/* Server srv restored from a backup or its counter lowered by hand (regressed). */
void	live_regressed(unsigned srv);
/* After each run of the event loop (and at the end of each sim_run). */
void	live_step(void);
/* A take of the default sequence by slot answered st (enum source_status). */
void	live_take(unsigned slot, int st, bool may_fallback);
/* This schedule's liveness failure, or NULL. */
const char *live_failed(void);
/* The totals, one line. */
void	live_report(void);
/* Failures over all schedules. */
uint64_t live_failures(void);

#endif
