/*
 * ctlrun.h - idgenctl's own procedures (ctl/raise.c, ctl/add.c, ctl/ns.c) run inside the
 * simulation: ctl.h's seam over the simulated ticket servers (tserver_ctl),
 * one statement at a time, the command killed at a statement drawn from the
 * seed (docs/design.md section 14).
 */
#ifndef IDSIM_CTLRUN_H
#define IDSIM_CTLRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "tserver.h"

/* The servers srv[0 .. n-1] the command reaches (the tier's srv[] indexes). */
void	ctlrun_setup(struct tserver *srv, unsigned n);

/*
 * One run of `idgenctl tier raise-increment to`: its exit status. Killed at
 * statement kill_at (1: the first connect; 0: never): that statement and
 * every later one fail as a lost connection, an open transaction rolls back.
 * between(), if set, runs after each statement sent outside a transaction
 * (the idservers go on while the operator's command does). *sent: the
 * statements it sent (connects counted). Exit status 3: a statement
 * tserver_ctl does not model (ctlrun_unmodelled names it): the schedule fails.
 */
int	ctlrun_raise(unsigned to, unsigned kill_at, void (*between)(void), unsigned *sent);

/*
 * One run of `idgenctl tier add-server offset 127.0.0.1:PORT` for server
 * index (its address names it): idgenctl's reads of the tier (ctl_read)
 * first, as its main does, then ctl/add.c; killed as ctlrun_raise's. The
 * config's tier_increment is 4. Its exit status.
 */
int	ctlrun_add(unsigned offset, unsigned index, unsigned kill_at, void (*between)(void),
	    unsigned *sent);

/*
 * One run of `idgenctl tier retire-server offset` (ctl/add.c, docs/design.md
 * 12.5): idgenctl's reads of the tier first, as its main does; killed as
 * ctlrun_raise's. recheck_ms: the idservers' (the config idgenctl reads);
 * pause(ms) runs the idservers while the command waits. Its exit status.
 */
int	ctlrun_retire(unsigned offset, unsigned recheck_ms, unsigned kill_at,
	    void (*between)(void), void (*pause)(unsigned ms), unsigned *sent);

/*
 * One run of `idgenctl ns VERB NAME [OPTIONS]` (argv from the verb on):
 * idgenctl's reads of the tier first, then ctl/ns.c; killed as ctlrun_raise's.
 */
int	ctlrun_ns(int argc, char **argv, unsigned kill_at, void (*between)(void),
	    unsigned *sent);

/*
 * The next run (of any command) is also killed right after the nth statement
 * it sends that begins with prefix (a static string) succeeded: between two
 * steps of a procedure, e.g. two servers' rows flipped to 'ready'. nth 0: not.
 */
void	ctlrun_kill_after(const char *prefix, unsigned nth);

/* Whether the last run was killed (at kill_at or after a ctlrun_kill_after). */
bool	ctlrun_was_killed(void);

/* The statement that made the last run exit 3, "" none. */
const char *ctlrun_unmodelled(void);

#endif
