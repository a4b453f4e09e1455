/*
 * vclock.h - the simulation's clock: idsim defines clock_gettime and
 * gettimeofday itself, so libevent's timers and src/clk.c read virtual time
 * (symbols of the executable come before libc's, for libevent.so too), and
 * epoll_ctl and epoll_wait, so the loop's empty poll costs no system call.
 * Time moves only when the driver advances it.
 */
#ifndef IDSIM_VCLOCK_H
#define IDSIM_VCLOCK_H

#include <stdint.h>

struct event_base;

/* Back to the start (a fixed date, the same for every schedule). */
void		vclock_reset(void);
void		vclock_advance_us(uint64_t us);
uint64_t	vclock_now_us(void);	/* since the start */
int64_t		vclock_unix_us(void);	/* the true wall clock, unix us */
struct event_base;
/*
 * The earliest virtual time (vclock_unix_us) at which base's loop could run
 * a callback: INT64_MIN when one is active already (or cannot be foreseen),
 * INT64_MAX when no timer is pending. The driver's loop and a region's.
 */
int64_t		vclock_next_due(struct event_base *base);

/*
 * A new loop for the driver or a region, deaf to libevent's EVENT_*
 * environment variables: each one read asked getuid, geteuid, getgid and
 * getegid first (sixteen system calls a loop, four now: libevent 2.1 reads
 * EVENT_SHOW_METHOD regardless), and none may move a schedule anyway.
 */
struct event_base	*vclock_base_new(void);

#endif
