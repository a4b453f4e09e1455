/*
 * log.h - one line per event on stderr, with a UTC timestamp and a level.
 */
#ifndef IDGEN_LOG_H
#define IDGEN_LOG_H

void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
