/*
 * proto.h - the line-based text protocol: request parsing and reply formatting.
 *
 * Pure functions, no I/O. See docs/design.md section 5.
 */
#ifndef IDGEN_PROTO_H
#define IDGEN_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_LINE_MAX	1024	/* bytes in a request line, CR/LF excluded */
#define PROTO_IDS_MAX	1000	/* IDS n: 1..1000 (contract) */
#define PROTO_BLOCK_MAX	4096	/* BLOCK n: 1..4096, one ms of Snowflake sequence */
#define PROTO_U64_LEN	20	/* digits in the largest uint64_t */

enum proto_cmd {
	PROTO_ID,
	PROTO_IDS,
	PROTO_BLOCK,
	PROTO_DECODE,
	PROTO_STATS,
	PROTO_PING,
	PROTO_HELP,
	PROTO_QUIT,
};

enum proto_status {
	PROTO_OK,
	PROTO_BADREQ,		/* reply "ERR BADREQ <why>" */
	PROTO_RANGE,		/* reply "ERR RANGE <why>" */
};

struct proto_req {
	enum proto_cmd	cmd;
	uint64_t	arg;	/* n for IDS/BLOCK, the ID for DECODE */
};

/*
 * Parses one request line (without its LF; a trailing CR is ignored).
 * On failure *why points to a static message.
 */
enum proto_status proto_parse(const char *line, size_t len, struct proto_req *req,
    const char **why);

/* Writes v in decimal to buf (at least PROTO_U64_LEN bytes); returns the length. */
size_t proto_u64(char *buf, uint64_t v);

/*
 * Writes n IDs separated by spaces (at most n * (PROTO_U64_LEN + 1) bytes);
 * returns the length. A run of consecutive IDs is formatted by incrementing
 * the previous one's digits, the common case of an IDS reply.
 */
size_t proto_ids(char *buf, const uint64_t *ids, unsigned n);

/* The HELP reply: one line per command, then END. */
extern const char proto_help[];

#endif
