/*
 * log.h - one line per event on stderr, with a UTC timestamp and a level:
 * text, or one JSON object a line (log_format = json).
 */
#ifndef IDGEN_LOG_H
#define IDGEN_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_LEVEL_DEBUG,
	LOG_LEVEL_INFO,
	LOG_LEVEL_WARN,
	LOG_LEVEL_ERROR,
};

/* Lines below level are not written (the default: LOG_LEVEL_INFO). */
void	log_set_level(enum log_level level);

/*
 * log_level ("debug", "info", "warn", "error") and log_format ("text",
 * "json"); false, nothing changed, for another word.
 */
bool	log_configure(const char *level, const char *format);

void	log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
