/*
 * log.h - one line per event on stderr, with a UTC timestamp and a level.
 */
#ifndef IDGEN_LOG_H
#define IDGEN_LOG_H

#include <stddef.h>

void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copies untrusted bytes into out as printable ASCII (\xNN escapes), truncated. */
const char *log_escape(const char *in, size_t len, char *out, size_t outlen);

#endif
