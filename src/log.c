/*
 * log.c - timestamped log lines on stderr.
 */
#include "log.h"

#include "clk.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static void	log_line(const char *level, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));

/* Writes "2026-11-30T05:00:00.123Z level message" as one line. */
static void
log_line(const char *level, const char *fmt, va_list ap)
{
	char msg[1024], ts[32];
	int64_t us = clk_real_us();
	time_t sec = (time_t)(us / 1000000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s.%03dZ %s %s\n", ts, (int)(us % 1000000 / 1000), level, msg);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("warn", fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("error", fmt, ap);
	va_end(ap);
}
