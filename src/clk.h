/*
 * clk.h - the process's clocks and timer intervals, in one place.
 *
 * Wall time (CLOCK_REALTIME) is ID time: Snowflake timestamps and leases.
 * Monotonic time (CLOCK_MONOTONIC) measures durations: waits, deadlines,
 * fetch and write latencies, whatever the wall clock does. Modules that
 * must be tested with a fake clock take one of these as a function pointer.
 */
#ifndef IDGEN_CLK_H
#define IDGEN_CLK_H

#include <stdint.h>
#include <sys/time.h>

/* Unix time in microseconds / milliseconds. */
int64_t		clk_real_us(void);
int64_t		clk_real_ms(void);

/* Monotonic microseconds (since an arbitrary start, never backward). */
int64_t		clk_mono_us(void);

/* A timer interval of ms milliseconds / us microseconds. */
struct timeval	clk_tv_ms(uint64_t ms);
struct timeval	clk_tv_us(uint64_t us);

#endif
