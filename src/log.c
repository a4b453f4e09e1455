/*
 * log.c - timestamped log lines on stderr, filtered by level.
 */
#include "log.h"

#include "clk.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static enum log_level log_min = LOG_LEVEL_INFO;

static void	log_line(enum log_level level, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));

static const char *const log_names[] = { "debug", "info", "warn", "error" };

void
log_set_level(enum log_level level)
{
	log_min = level;
}

/* Writes "2026-11-30T05:00:00.123Z level message" as one line. */
static void
log_line(enum log_level level, const char *fmt, va_list ap)
{
	char msg[1024], ts[32];
	int64_t us;
	time_t sec;
	struct tm tm;

	if (level < log_min)
		return;
	us = clk_real_us();
	sec = (time_t)(us / 1000000);
	gmtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s.%03dZ %s %s\n", ts, (int)(us % 1000000 / 1000), log_names[level],
	    msg);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(LOG_LEVEL_DEBUG, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(LOG_LEVEL_INFO, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(LOG_LEVEL_WARN, fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
}
