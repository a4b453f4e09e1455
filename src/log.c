/*
 * log.c - timestamped log lines on stderr, filtered by level, as text or as
 * one JSON object a line (jansson escapes the message).
 */
#include "log.h"

#include "clk.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static enum log_level log_min = LOG_LEVEL_INFO;
static bool log_json;

static void	log_line(enum log_level level, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));

static void	log_json_line(const char *ts, const char *level, char *msg);

static const char *const log_names[] = { "debug", "info", "warn", "error" };

void
log_set_level(enum log_level level)
{
	log_min = level;
}

bool
log_configure(const char *level, const char *format)
{
	int l;

	for (l = LOG_LEVEL_DEBUG; l <= LOG_LEVEL_ERROR; l++)
		if (strcmp(level, log_names[l]) == 0)
			break;
	if (l > LOG_LEVEL_ERROR || (strcmp(format, "text") != 0 && strcmp(format, "json") != 0))
		return false;
	log_min = (enum log_level)l;
	log_json = strcmp(format, "json") == 0;
	return true;
}

/*
 * {"time":...,"level":...,"message":...} on one line; a message that is not
 * UTF-8 (a peer's bytes quoted) has its other bytes replaced by '?' first,
 * as JSON carries only UTF-8.
 */
static void
log_json_line(const char *ts, const char *level, char *msg)
{
	json_t *m = json_string(msg), *o;
	char *line = NULL;

	if (m == NULL) {
		for (unsigned char *p = (unsigned char *)msg; *p != '\0'; p++)
			if (*p >= 0x80)
				*p = '?';
		m = json_string(msg);
	}
	/* "o" takes m's reference, also when the pack fails. */
	o = m != NULL ? json_pack("{s:s, s:s, s:o}", "time", ts, "level", level, "message", m) :
	    NULL;
	if (o != NULL)
		line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (line != NULL)
		fprintf(stderr, "%s\n", line);
	else
		fprintf(stderr, "{\"time\":\"%s\",\"level\":\"%s\",\"message\":\"(out of "
		    "memory)\"}\n", ts, level);
	free(line);
	json_decref(o);
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
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03dZ", (int)(us % 1000000 / 1000));
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_json)
		log_json_line(ts, log_names[level], msg);
	else
		fprintf(stderr, "%s %s %s\n", ts, log_names[level], msg);
}

/* log_debug, log_info, log_warn, log_error: one definition, the level apart. */
#define LOG_AT(name, level) \
void \
name(const char *fmt, ...) \
{ \
	va_list ap; \
 \
	va_start(ap, fmt); \
	log_line(level, fmt, ap); \
	va_end(ap); \
}
LOG_AT(log_debug, LOG_LEVEL_DEBUG)
LOG_AT(log_info, LOG_LEVEL_INFO)
LOG_AT(log_warn, LOG_LEVEL_WARN)
LOG_AT(log_error, LOG_LEVEL_ERROR)
