/*
 * proto_resp.h - the Redis protocol (RESP2) on the text port: an adapter over
 * the command core (docs/design.md section 7).
 *
 * A connection whose first byte is '*' speaks RESP: multibulk requests (and
 * inline commands after the first), replies as integers, arrays, bulk and
 * simple strings; our error codes are the error prefix (-RANGE ...), Redis's
 * own wording for unknown commands, wrong arity and protocol errors. The frame
 * parser (proto_resp_parse) is pure. Per connection (c->proto_state, made when
 * first needed, freed by proto_resp_ops.release): its CLIENT SETNAME and a
 * MULTI's queue, run by EXEC one command per step of the adapter. The
 * commands RESP answers itself (COMMAND, CLIENT, HELLO, INFO, MULTI/EXEC ...)
 * are resp_admin.c's; the reply encoding is resp_reply.c's.
 */
#ifndef IDGEN_PROTO_RESP_H
#define IDGEN_PROTO_RESP_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"

#define PROTO_RESP_ARGS_MAX	64	/* ceiling of the resp_max_args setting */

struct proto_resp_frame {
	unsigned	 argc;
	const char	*argv[PROTO_RESP_ARGS_MAX];
	size_t		 argl[PROTO_RESP_ARGS_MAX];
	size_t		 used;		/* bytes of input the frame took */
	bool		 inline_cmd;	/* a line of words, not a multibulk */
};

struct proto_resp_limits {
	unsigned	max_args;	/* resp_max_args */
	size_t		max_bulk;	/* resp_max_bulk_bytes */
	size_t		max_frame;	/* the input buffer: a request must fit in it */
};

enum proto_resp_parse {
	PROTO_RESP_INCOMPLETE,
	PROTO_RESP_FRAME,	/* a request in f (argc may be 0: nothing to run) */
	PROTO_RESP_ERROR,	/* protocol error: why; the connection closes */
};

/* Parses one request from the front of buf. */
enum proto_resp_parse proto_resp_parse(const char *buf, size_t len,
    const struct proto_resp_limits *lim, struct proto_resp_frame *f, const char **why);

extern const struct proto_ops proto_resp_ops;

#endif
