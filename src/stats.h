/*
 * stats.h - every counter and state of the service as (name, value) pairs, for
 * the STATS command and the HTTP endpoint alike.
 */
#ifndef IDGEN_STATS_H
#define IDGEN_STATS_H

struct server;

/* Called once per statistic; value is a single word (a number or a name). */
typedef void	(*stats_fn)(const char *name, const char *value, void *arg);

void	stats_emit(struct server *srv, stats_fn fn, void *arg);

#endif
