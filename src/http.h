/*
 * http.h - operator endpoints over HTTP: GET /health and GET /stats (JSON).
 *
 * Off unless http_port is set. Same event loop, same numbers as STATS.
 */
#ifndef IDGEN_HTTP_H
#define IDGEN_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

struct metrics_src;
struct evhttp;

/* Binds http_host:http_port; false with a reason naming the setting. */
bool	http_init(struct evhttp **out, struct event_base *base, const struct metrics_src *m,
	    const char *host, unsigned port, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
void	http_free(struct evhttp *h);

#endif
