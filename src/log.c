/*
 * log.c - timestamped log lines on stderr.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static void	log_line(const char *level, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));

/* Writes "2026-11-30T05:00:00.123Z level message" as one line. */
static void
log_line(const char *level, const char *fmt, va_list ap)
{
	char msg[1024], ts[32];
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s.%03dZ %s %s\n", ts, (int)(tv.tv_usec / 1000), level, msg);
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

/* Escapes control and non-ASCII bytes so a client cannot forge log lines. */
const char *
log_escape(const char *in, size_t len, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (outlen > 0)
		out[o < outlen ? o : outlen - 1] = '\0';
	return out;
}
