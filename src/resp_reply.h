/*
 * resp_reply.h - RESP2 replies: the encoding both proto_resp.c (the core's
 * replies) and resp_admin.c (the commands RESP answers itself) write with,
 * and Redis's own wording for a wrong arity or an unknown command.
 */
#ifndef IDGEN_RESP_REPLY_H
#define IDGEN_RESP_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "proto_resp.h"

#define RESP_REPLY_LIT(c, s)	conn_put((c), (s), sizeof(s) - 1)	/* a literal reply */

/* "*<n>\r\n", "$<n>\r\n" or ":<n>\r\n": an array's, a bulk string's or an integer's head. */
void	resp_reply_head(struct conn *c, char kind, long long n);
/* ":<v>\r\n" */
void	resp_reply_int(struct conn *c, uint64_t v);
/* A bulk string: "$<n>\r\n<bytes>\r\n". */
void	resp_reply_bulk(struct conn *c, const char *s, size_t n);
/* A simple string: "+<s>\r\n". */
void	resp_reply_simple(struct conn *c, const char *s);
/* "-<CODE> <why>\r\n": our codes are the error prefix a Redis client shows. */
void	resp_reply_error(struct conn *c, const char *code, const char *why);
/* Client bytes for a reply: printable, bounded, no CR/LF to break the frame. */
void	resp_reply_sanitize(char *out, size_t outlen, const char *s, size_t n);
/* Wrong arity, in Redis's words; sub: the subcommand ("command|sub"), or NULL. */
void	resp_reply_arity(struct conn *c, const struct proto_resp_frame *f, const char *sub);
/* An unknown command, in Redis's words, with its first arguments. */
void	resp_reply_unknown(struct conn *c, const struct proto_resp_frame *f);

#endif
