/*
 * auth.h - tokens (docs/design.md section 7, "Authentication"): the table
 * read from auth_tokens_file and kept only as SHA-256 hashes, each caller's
 * session checked against the table's generation on every request, and the
 * per-address failure counter that slows guessing down.
 *
 * The core decides (core_auth); adapters only hand over what the client
 * sent (auth_sess_present) and answer the core's error in their form.
 * Nothing here logs a token or a hash, and no view shows one.
 */
#ifndef IDGEN_AUTH_H
#define IDGEN_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns.h"

#define AUTH_HASH_LEN		32	/* SHA-256 */
#define AUTH_TOKEN_MIN		16	/* bytes: a shorter token is refused at load */
#define AUTH_TOKEN_MAX		256	/* bytes of a token */
#define AUTH_NAME_MAX		64	/* bytes of a token's name */
#define AUTH_TOKENS_MAX		4096	/* tokens in the file */
#define AUTH_LINE_MAX		1536	/* bytes of a line of the file (16 ns= flags fit) */
#define AUTH_FAIL_SLOTS		4096	/* failure counters, by hash of the address */
#define AUTH_FAIL_FREE		3	/* failures from an address answered at once */
#define AUTH_FAIL_FORGET_MS	60000	/* a count starts again after this long quiet */
#define AUTH_NS_MAX		16	/* namespaces one token may be limited to */
#define AUTH_NS_NAME_MAX	NS_NAME_MAX	/* bytes of a namespace's name */

/* What a token allows; ordered: a command needing p is allowed from p up. */
enum auth_perm {
	AUTH_PERM_NONE = 0,	/* no valid token */
	AUTH_PERM_RO,		/* ro: STATS, /metrics, /health, DECODE, B58, PING; no IDs */
	AUTH_PERM_ALL,		/* rw, the default: everything */
};

/* One line of the file, hashed. */
struct auth_token {
	uint8_t		 hash[AUTH_HASH_LEN];
	char		 name[AUTH_NAME_MAX + 1];	/* "" when the line names none */
	enum auth_perm	 perm;
	/*
	 * The namespaces it may take IDs of (flags ns=NAME, one each; none: every
	 * one; "default" names the default sequence), checked in core_take.
	 */
	unsigned	 nns;
	char		 ns[AUTH_NS_MAX][AUTH_NS_NAME_MAX + 1];
	unsigned	 line;		/* of the file, for the messages */
};

/* A per-address count of failures; several addresses may share a slot. */
struct auth_fail {
	uint32_t	count;
	int64_t		last_ms;	/* monotonic */
};

struct auth_counters {
	uint64_t	reloads;	/* the file read again (SIGHUP) */
	uint64_t	reload_failures; /* ... and unreadable: the previous tokens stay */
	uint64_t	reload_errors;	/* ... not clean: lines left out, or unreadable */
	uint64_t	delayed;	/* failure replies held auth_fail_delay_ms */
};

struct auth {
	char			*path;		/* auth_tokens_file */
	struct auth_token	*tok;		/* mapped apart, never in a core dump */
	size_t			 n;
	size_t			 nro;		/* of which read-only */
	size_t			 maplen;
	uint32_t		 gen;		/* 1, 2, ...: changes on every load */
	/*
	 * The last load: clean when every line of the file was applied. Else why
	 * says what was left out (line numbers, never a token), or that the file
	 * could not be read and the previous tokens stay.
	 */
	bool			 clean;
	unsigned		 bad;		/* lines the last applied load left out */
	char			 why[320];
	unsigned		 fail_delay_ms;
	/*
	 * auth_mode = optional: a request without a token is served (counted by
	 * the core), one with a token is checked as always. docs/design.md
	 * section 7.
	 */
	bool			 optional;
	struct auth_counters	 stats;
	struct auth_fail	 fail[AUTH_FAIL_SLOTS];
};

/*
 * A caller's credentials: a text or RESP connection holds one for its life,
 * an HTTP request or gRPC stream one for itself. perm was decided at
 * generation gen; a reload makes it stale, and the next request decides it
 * again from hash, so a removed token stops working on that request.
 */
struct auth_sess {
	uint8_t		 hash[AUTH_HASH_LEN];	/* the accepted token's */
	uint8_t		 pending[AUTH_HASH_LEN]; /* presented, not yet checked */
	bool		 has;		/* hash holds an accepted token */
	bool		 presented;	/* pending holds one to check */
	bool		 user_bad;	/* the user name given does not match */
	uint32_t	 gen;		/* 0: never decided */
	enum auth_perm	 perm;
	const struct auth_token *tok;	/* the accepted token, valid while gen is current */
	int		 fd;		/* the peer's socket, for the failure count */
};

/*
 * Loads path (tokens, delay): false with err (line numbers, never a token).
 * On success a->gen has changed.
 */
bool	auth_init(struct auth *a, const char *path, unsigned fail_delay_ms, char *err,
	    size_t errlen) __attribute__((warn_unused_result));
/*
 * Reads the file again (SIGHUP). The lines that parse replace the table, so
 * a token removed from the file stops working even when another line is
 * malformed; a line that does not parse is left out (it never grants
 * anything), and err names it. False when the file cannot be read: then the
 * previous tokens stay and err says why. Either way a->clean and a->why say
 * what happened, for the views.
 */
bool	auth_reload(struct auth *a, char *err, size_t errlen) __attribute__((warn_unused_result));
void	auth_free(struct auth *a);

/*
 * One line of the file (pure): "token", "name:token" or "name:token:flags"
 * (flags, comma-separated: ro or rw, and ns=NAME once per namespace the token
 * is limited to). *skip for a blank or # comment line; false with err.
 */
bool	auth_parse_line(const char *line, size_t len, struct auth_token *t, bool *skip,
	    char *err, size_t errlen) __attribute__((warn_unused_result));

/* Letters, digits, '.', '_', '-': the characters of a token's name (and a caller's). */
bool	auth_name_char(char c);

/* The token of an "Authorization: Bearer <token>" value (pure); false if not one. */
bool	auth_bearer(const char *value, size_t len, const char **tok, size_t *toklen)
	    __attribute__((warn_unused_result));

/*
 * The user and token of an "Authorization: Basic base64(user:token)" value
 * (RFC 7617; pure): decoded into buf (AUTH_BASIC_MAX bytes; the caller wipes
 * it), split at the first ':'. False if not one.
 */
#define AUTH_BASIC_MAX		(AUTH_NAME_MAX + 1 + AUTH_TOKEN_MAX + 3)
bool	auth_basic(const char *value, size_t len, char buf[AUTH_BASIC_MAX], const char **user,
	    size_t *userlen, const char **tok, size_t *toklen) __attribute__((warn_unused_result));

void	auth_hash(const char *tok, size_t len, uint8_t out[AUTH_HASH_LEN]);

/* The token with this hash, compared with every entry in constant time; NULL if none. */
const struct auth_token *auth_find(const struct auth *a, const uint8_t hash[AUTH_HASH_LEN]);

void	auth_sess_init(struct auth_sess *s, int fd);
/* A token the client sent (user: the name it gave, NULL for none); hashed, kept pending. */
void	auth_sess_present(struct auth_sess *s, const char *tok, size_t len, const char *user,
	    size_t userlen, const struct auth *a);

/* The session's permission now; a stale generation is decided again from the hash. */
enum auth_perm auth_refresh(const struct auth *a, struct auth_sess *s);

static inline enum auth_perm
auth_perm(const struct auth *a, struct auth_sess *s)
{
	return s->gen == a->gen ? s->perm : auth_refresh(a, s);
}

/*
 * Whether the session's token may take IDs of namespace name (len bytes; the
 * default sequence is "default"): true for a token with no ns= flag.
 */
bool	auth_ns_allowed(const struct auth_sess *s, const char *name, size_t len);

/*
 * Counts a failure from the session's address at now_ms (monotonic); the ms
 * its reply is to be held (0 for the first AUTH_FAIL_FREE in a row).
 */
unsigned auth_fail_note(struct auth *a, int fd, int64_t now_ms);

/* Whether the address behind fd is past its free failures (being slowed down). */
bool	auth_fail_slow(const struct auth *a, int fd, int64_t now_ms);

#endif
