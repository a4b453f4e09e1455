/*
 * core.h - the command core: every protocol is an adapter over it
 * (docs/design.md section 7).
 *
 * An adapter turns bytes into a core_req (a command and its argument as
 * text), core_exec() runs it and fills a core_result, and the adapter turns
 * that back into bytes. Arguments are parsed and bounded here, errors are one
 * typed set mapped once to every protocol's form (core_err_info), and waiting
 * (for a refill, or for the Snowflake's next millisecond) is the core's: a
 * request that must wait parks the caller's core_waiter, which is resumed
 * later, whatever the protocol. Counters of commands live here too.
 */
#ifndef IDGEN_CORE_H
#define IDGEN_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "auth.h"
#include "decode.h"

#define CORE_IDS_MAX	1000	/* IDS n: 1..1000 (contract) */
#define CORE_BLOCK_MAX	4096	/* BLOCK n: 1..4096, one ms of Snowflake sequence */

enum core_cmd {
	CORE_CMD_ID,
	CORE_CMD_IDS,
	CORE_CMD_BLOCK,
	CORE_CMD_DECODE,
	CORE_CMD_B58,
	CORE_CMD_STATS,
	CORE_CMD_PING,
	CORE_CMD_AUTH,		/* the session's presented token (no word: adapters' AUTH) */
};

/* The one typed set of errors; CORE_OK is not an error. */
enum core_err {
	CORE_OK = 0,
	CORE_ERR_BADREQ,	/* malformed request */
	CORE_ERR_RANGE,		/* a number out of its bounds */
	CORE_ERR_UNAVAILABLE,	/* no ID can be served now */
	CORE_ERR_CLOCK,		/* the clock stepped back too far */
	CORE_ERR_NOAUTH,	/* auth_tokens_file is set and no valid token was given */
	CORE_ERR_WRONGPASS,	/* a token was given and is not one (or its name is wrong) */
	CORE_ERR_NOPERM,	/* a read-only token asked for IDs */
	CORE_ERR_NONS,		/* no such namespace (text RANGE, 400, NOT_FOUND) */
};
#define CORE_ERR_COUNT	9

/* How each error looks in every protocol: the one mapping. */
struct core_err_info {
	const char	*code;		/* text "ERR <code>", RESP "-<code>", JSON "code" */
	unsigned	 http_status;
	const char	*http_reason;
	unsigned	 grpc_status;	/* google.rpc.Code */
	unsigned	 retry_after;	/* seconds for HTTP Retry-After, 0 = none */
};

const struct core_err_info *core_err_info(enum core_err err);

/*
 * A request: the command and its arguments exactly as the client sent them.
 * ns names the namespace of ID, IDS and BLOCK (docs/design.md section 13);
 * NULL or "default" is the default sequence.
 */
struct core_req {
	enum core_cmd	 cmd;
	const char	*arg;	/* NULL when the command takes none */
	size_t		 arglen;
	struct auth_sess *sess;	/* the caller's credentials; NULL: none (auth_tokens_file) */
	const char	*ns;	/* NULL: the default namespace */
	size_t		 nslen;
};

#define CORE_NS_NAME_MAX	NS_NAME_MAX	/* a namespace name (ns.h's rule) */

/* Command words shared by every protocol. */
struct core_word {
	const char	*name;
	enum core_cmd	 cmd;
	int		 nargs;		/* 0 or 1 */
	bool		 takes_ns;	/* an optional last argument: the namespace */
	const char	*param;		/* the argument's name, NULL when none (RESP COMMAND DOCS) */
	const char	*summary;	/* one line of help */
};

/* Finds a command by name, any case; NULL when unknown. */
const struct core_word *core_lookup(const char *name, size_t len);

/* The command word number i, NULL past the last: the table, for RESP COMMAND. */
const struct core_word *core_word_at(size_t i);

/* What every health view says (HTTP /health, gRPC health, mode in STATS). */
struct core_health {
	bool		 ok;		/* the service can hand out IDs now */
	const char	*mode;		/* ticket, fallback or down */
	char		 reason[192];	/* why, with the numbers an operator needs */
	uint64_t	 ids_buffered;
	const char	*lease;		/* none, held, expired or refused */
	uint64_t	 lease_window_end;	/* layout ms */
	char		 witness_pending[96];	/* servers whose last witness could not
						 * land, space-separated ("" none;
						 * docs/design.md 6.5) */
	const char	*auth;		/* NULL without tokens, else the last load: clean or not */
	const char	*auth_why;	/* not clean: what was left out, or why unread */
};

struct core_result {
	enum core_err		 err;
	const char		*why;		/* the message of an error */
	unsigned		 count;		/* IDs in ids (ID, IDS); n of a BLOCK */
	uint64_t		 first;		/* BLOCK */
	uint64_t		 ids[CORE_IDS_MAX];
	struct decode		 dec;		/* DECODE, B58 */
	bool			 from_b58;	/* DECODE was given the base58 form */
};

enum core_status {
	CORE_DONE,		/* res is filled */
	CORE_PENDING,		/* parked: run the same request again when resumed */
};

struct core;
struct source;		/* source.h; the core only points to it */

/* Embedded by every connection or request that may wait; owned by the caller. */
struct core_waiter {
	TAILQ_ENTRY(core_waiter) entry;
	struct core		*core;
	struct event		*timer;		/* the bounded refill wait */
	bool			 parked;
	bool			 waited;	/* the refill wait expired: fallback may serve */
	bool			 timed;		/* timer armed */
	unsigned char		 penalty;	/* a failed token's reply: 1 held, 2 held enough */
	/*
	 * The core answered a request of this caller without error (AUTH aside):
	 * set here, cleared by the caller, which ranks its connection by it
	 * (docs/design.md section 5, "Connection slots").
	 */
	bool			 served;
	void			(*resume)(void *arg);
	void			*arg;
};
TAILQ_HEAD(core_waiters, core_waiter);

struct core_counters {
	uint64_t	requests;
	uint64_t	errors[CORE_ERR_COUNT];
	uint64_t	waits;		/* requests that waited for a refill */
	uint64_t	anonymous;	/* served without a token (auth_mode = optional) */
};

/* Calls per caller name (gRPC's caller_service), a bounded set. */
#define CORE_CALLERS_MAX	256	/* ceiling of the max_callers setting */
#define CORE_CALLER_LEN		48

struct core_caller {
	char		name[CORE_CALLER_LEN];
	uint64_t	calls;
};

struct core_callers {
	unsigned		max;		/* max_callers: names counted one by one */
	unsigned		n;
	struct core_caller	named[CORE_CALLERS_MAX];
	uint64_t		none;		/* no name given */
	uint64_t		other;		/* past max, or not [A-Za-z0-9._-] */
};

struct core {
	struct event_base	*base;
	struct source		*source;
	struct core_waiters	 parked;
	struct event		*wake;
	struct core_counters	 stats;
	struct core_callers	 callers;
	struct auth		*auth;		/* NULL: no auth_tokens_file, nothing checked */
	char			 why_buf[128];	/* a refusal's words with its numbers; valid
						 * until the next request (replies are
						 * formatted before that) */
};

bool		core_init(struct core *c, struct event_base *base, struct source *source)
		    __attribute__((warn_unused_result));
void		core_free(struct core *c);

/* Runs one request for the caller owning w. */
enum core_status core_exec(struct core *c, struct core_waiter *w, const struct core_req *req,
		    struct core_result *res);

/* A request refused before it ran: counted, res filled; false, to be returned. */
bool		core_reject(struct core *c, enum core_err err, const char *why,
		    struct core_result *res);

/* Counts a request an adapter answered itself (PING, HELP, QUIT, handshakes, its
 * own errors such as an unknown command: err is then its class). */
void		core_count(struct core *c, enum core_err err);

/*
 * Whether the caller may run what needs perm (only called when c->auth is
 * set): CORE_DONE with res filled (CORE_OK or the refusal, counted), or
 * CORE_PENDING while a failed token's reply is held (auth_fail_delay_ms):
 * run the same request again when resumed. A token the session presents is
 * checked first and, when valid, becomes the session's. With auth_mode =
 * optional a session that never presented one is let through and counted
 * (auth_anonymous); a wrong token is refused as in required mode.
 */
enum core_status core_auth(struct core *c, struct core_waiter *w, struct auth_sess *s,
		    enum auth_perm need, struct core_result *res);

/*
 * Whether s runs without a token by auth_mode = optional (never presented
 * one, or its token was removed): a gate an adapter keeps before the core's
 * own check lets it through uncounted, the core counting it when it runs.
 */
bool		core_auth_anonymous(const struct core *c, struct auth_sess *s);

/* Reads the service's health; reading changes nothing. */
void		core_health(const struct core *c, struct core_health *h);

/*
 * A take's arguments (the count, the namespace and the token's right to it)
 * judged as core_exec judges them, nothing taken (HTTP's HEAD on an ID
 * page); false with res's error when bad.
 */
bool		core_take_args(struct core *c, const struct core_req *req,
		    struct core_result *res) __attribute__((warn_unused_result));

/* Counts one call of the named caller (bounded: see struct core_callers). */
void		core_count_caller(struct core *c, const char *name, size_t len);

/* IDs arrived or health changed: parked waiters retry on the next loop turn. */
void		core_wake(struct core *c);

bool		core_waiter_init(struct core_waiter *w, struct core *c, void (*resume)(void *),
		    void *arg) __attribute__((warn_unused_result));
/* Unparks without resuming and frees the timer; for a caller going away. */
void		core_waiter_free(struct core_waiter *w);

#endif
