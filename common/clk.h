/*
 * clk.h - the clocks and timer intervals, in one place for idserver and
 * libidgen (both build common/).
 *
 * Wall time (CLOCK_REALTIME) is ID time: Snowflake timestamps and leases.
 * Monotonic time (CLK_MONO_ID) measures durations: waits, deadlines,
 * fetch and write latencies, whatever the wall clock does. Modules that
 * must be tested with a fake clock take one of these as a function pointer.
 */
#ifndef IDGEN_CLK_H
#define IDGEN_CLK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* The monotonic clock: condition variables waiting until a
 * clk_mono_deadline() are set to it (pthread_condattr_setclock). */
#define CLK_MONO_ID	CLOCK_MONOTONIC

/* Unix time in microseconds / milliseconds. */
int64_t		clk_real_us(void);
int64_t		clk_real_ms(void);

/* Monotonic nanoseconds / microseconds / milliseconds (since an arbitrary
 * start, never backward). */
int64_t		clk_mono_ns(void);
int64_t		clk_mono_us(void);
int64_t		clk_mono_ms(void);

/* The monotonic time ms milliseconds from now, for pthread_cond_timedwait. */
struct timespec	clk_mono_deadline(uint64_t ms);

/* Waits for events (POLLIN, POLLOUT) on fd until the monotonic ms deadline:
 * 1 ready, 0 timed out, -1 error (errno set). */
int		clk_wait_fd(int fd, short events, uint64_t deadline);

/* A timer interval of ms milliseconds / us microseconds. */
struct timeval	clk_tv_ms(uint64_t ms);
struct timeval	clk_tv_us(uint64_t us);

#endif
