/*
 * proto_text.h - the line-based text protocol (docs/design.md section 5): an
 * adapter over the command core.
 *
 * One request per line, LF or CRLF, any case, pipelined; replies in order,
 * errors as "ERR <CODE> <message>". The grammar (proto_text_parse) is pure.
 */
#ifndef IDGEN_PROTO_TEXT_H
#define IDGEN_PROTO_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"
#include "core.h"
#include "fmt.h"

#define PROTO_LINE_MAX	1024	/* bytes in a request line, CR/LF excluded (contract) */

enum proto_text_kind {
	PROTO_TEXT_CORE,	/* a core command in req */
	PROTO_TEXT_HELP,
	PROTO_TEXT_QUIT,
	PROTO_TEXT_AUTH,	/* AUTH <token>: the token in req->arg */
	PROTO_TEXT_BAD,		/* malformed: why */
};

/*
 * Splits one request line (without its LF; a trailing CR is ignored) into a
 * command and its argument. The argument is checked by the core.
 */
enum proto_text_kind proto_text_parse(const char *line, size_t len, struct core_req *req,
    const char **why);

/*
 * The reply line of ID, IDS, BLOCK, DECODE or B58 (0 bytes for another
 * command), IDs separated by sep, into buf of PROTO_TEXT_RESULT_MAX(res->count)
 * bytes; its length. Also HTTP's text/plain body (IDs one per line).
 */
size_t	proto_text_result(char *buf, enum core_cmd cmd, const struct core_result *res, char sep);
#define PROTO_TEXT_RESULT_MAX(count)	((size_t)(count) * (FMT_U64_LEN + 1) + FMT_DECODE_LEN)

/* The HELP reply: one line per command, then END. */
extern const char proto_text_help[];

extern const struct proto_ops proto_text_ops;

#endif
