/*
 * client.h - libidgen's internals shared with its unit tests: the transport
 * a client talks through (real sockets, or a fake reply source in the tests).
 */
#ifndef IDGEN_CLIENT_H
#define IDGEN_CLIENT_H

#include "idgen.h"
#include "wire.h"

#define IDGEN_EXPORT	__attribute__((visibility("default")))

/*
 * One round trip to endpoint ep: sends req (nreq lines), hands each reply
 * line to fn, returns the lines handled (fewer: failed, message in err).
 * reset drops whatever connection the transport keeps for ep.
 */
struct client_transport {
	unsigned (*exchange)(void *ctx, unsigned ep, const char *req, size_t len,
		    unsigned nreq, unsigned connect_ms, unsigned timeout_ms,
		    wire_line_fn fn, void *arg, char *err, size_t errlen);
	void	 (*reset)(void *ctx, unsigned ep);
	void	 *ctx;
};

/* idgen_open() over a given transport (NULL: TCP to the endpoints). */
idgen_client	*client_open(const char *servers, const struct idgen_options *o,
		    const struct client_transport *t, char *err, size_t errlen);

#endif
