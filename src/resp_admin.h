/*
 * resp_admin.h - the commands RESP answers itself, without the core: what
 * clients send at connect (HELLO, AUTH, CLIENT, SELECT, CONFIG GET, PING),
 * the command table (COMMAND), INFO, TIME, and the transaction's commands
 * (MULTI, EXEC, DISCARD, WATCH, RESET); and what a RESP connection keeps.
 *
 * proto_resp.c's dispatch finds a request's row here (resp_admin_find), checks
 * its arity and flags, and runs it, or queues it inside MULTI; EXEC marks the
 * queue to run and the dispatch runs it. Nothing here calls the dispatch.
 */
#ifndef IDGEN_RESP_ADMIN_H
#define IDGEN_RESP_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "proto_resp.h"

#define RESP_CMD_ANY		PROTO_RESP_ARGS_MAX	/* no bound but the frame's */
#define RESP_CMD_NAME_MAX	128	/* CLIENT SETNAME */
#define RESP_CMD_NOQUEUE	0x1	/* runs at once inside MULTI, as Redis's */
#define RESP_CMD_REFUSE		0x2	/* only answers an error: refused, never queued */
#define RESP_CMD_SUBS		0x4	/* a catch-all: a first argument is an unknown subcommand */
#define RESP_CMD_OPEN		0x8	/* runs before authentication (auth_tokens_file) */
#define RESP_CMD_SELF		0x10	/* counts itself (a token goes through the core) */

/* A command RESP answers itself: its words, their count, what runs it, its help. */
struct resp_cmd {
	const char	*name;
	const char	*sub;		/* the first argument, any case; NULL: any */
	unsigned	 min_argc;	/* words, the name included */
	unsigned	 max_argc;
	unsigned	 flags;		/* RESP_CMD_NOQUEUE, _REFUSE, _SUBS */
	enum proto_step	(*run)(struct conn *c, const struct proto_resp_frame *f);
	const char	*group;		/* COMMAND DOCS: Redis's group names */
	const char	*params;	/* argument names; "[x]" optional, "x..." repeated */
	const char	*summary;
};

/*
 * What a RESP connection keeps, allocated when first needed (a name, a MULTI):
 * the transaction is its queued requests, byte for byte, parsed again when
 * EXEC runs them one per step, so EXEC's replies stream under the same output
 * bounds and waits as any request's.
 */
struct resp_state {
	char		 name[RESP_CMD_NAME_MAX + 1];	/* "" when none */
	bool		 multi;		/* between MULTI and EXEC or DISCARD */
	bool		 dirty;		/* a command was refused while queuing */
	bool		 executing;	/* EXEC runs the queue */
	unsigned	 nqueued;
	char		*queue;
	size_t		 qlen;
	size_t		 qcap;
	size_t		 exec_off;	/* the next queued request to run */
	unsigned	 exec_left;
	size_t		 exec_used;	/* the EXEC request's bytes, consumed at the end */
};

/* The row of what RESP answers itself, NULL when the request is not one of them. */
const struct resp_cmd	*resp_admin_find(const struct proto_resp_frame *f);

/* The connection's state (c->proto_state), made on first use; NULL when out of memory. */
struct resp_state	*resp_admin_state(struct conn *c);

/* Leaves MULTI (or the end of an EXEC): the queue is dropped. */
void			 resp_admin_discard(struct resp_state *st);

/*
 * INFO's reply: Redis INFO text from the metrics table, one section (want,
 * wantlen bytes) or all (NULL); also the reply of the core's STATS over RESP.
 */
void			 resp_admin_info(struct conn *c, const char *want, size_t wantlen);

/* The connection goes: what it kept goes with it (proto_resp_ops.release). */
void			 resp_admin_free(struct conn *c);

#endif
