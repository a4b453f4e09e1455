/*
 * genlog.c - log.h for the code of idserver that libidgen's generator runs
 * (src/lease.c, src/db.c): the library writes nothing to stdout or stderr,
 * so a line is kept as the generator's last message instead (genlog_to).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "genlog.h"

/* The buffer of the generator whose loop runs on this thread (NULL: dropped). */
static _Thread_local char	*genlog_buf;
static _Thread_local size_t	 genlog_len;

static void	genlog_line(const char *level, const char *fmt, va_list ap)
		    __attribute__((format(printf, 2, 0)));

void
genlog_to(char *buf, size_t len)
{
	genlog_buf = buf;
	genlog_len = len;
}

/* Keeps "level: message" as the last line. */
static void
genlog_line(const char *level, const char *fmt, va_list ap)
{
	int	 n;

	if (genlog_buf == NULL || genlog_len == 0)
		return;
	n = snprintf(genlog_buf, genlog_len, "%s: ", level);
	if (n >= 0 && (size_t)n < genlog_len)
		vsnprintf(genlog_buf + n, genlog_len - (size_t)n, fmt, ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	genlog_line("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	genlog_line("warn", fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	genlog_line("error", fmt, ap);
	va_end(ap);
}
