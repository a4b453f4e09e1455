/*
 * idgen.h - libidgen, the client library of idgen: unique 64-bit IDs handed
 * out in-process from dense blocks taken from idserver, with no round trip
 * per ID in steady state.
 *
 *	idgen_client *c = idgen_open("10.0.0.1:4242,10.0.0.2:4242", NULL, err, sizeof err);
 *	uint64_t id;
 *	if (idgen_next(c, &id) != IDGEN_OK)
 *		fprintf(stderr, "%s\n", idgen_last_error());
 *	idgen_close(c);
 *
 * A client owns one background thread, started by the first call that needs
 * IDs, which fetches blocks (pipelined `BLOCK n` requests of the text
 * protocol; `BLOCK n ns` for a client of a namespace, options.ns) before the
 * held ones run out. Every call is thread-safe; a thread
 * serves `idgen_next` from its own small share without a lock. A forked child
 * never hands out an ID its parent holds: the held IDs are dropped in the child
 * and it fetches its own. See docs/design.md section 11.
 *
 * The servers may instead be a tier's address,
 * "mariadb://USER@HOST:PORT,HOST:PORT/DATABASE" (the pair, odd then even;
 * the password from options.db_password or IDGEN_DB_PASSWORD; idserver's
 * lease settings as ?lease_window_ms=N&...): the client is then a generator,
 * which leases a worker number from the tier itself (as idserver does) and
 * mints Snowflake IDs in the process, no idserver involved; without a lease
 * it mints nothing (IDGEN_EUNAVAILABLE). See docs/design.md section 11.8.
 *
 * The library writes nothing to stdout or stderr.
 */
#ifndef IDGEN_H
#define IDGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IDGEN_VERSION		"1.0.0"
#define IDGEN_IDS_MAX		1000	/* most IDs one idgen_ids() call returns */
#define IDGEN_BLOCK_MAX		4096	/* largest dense block (the server's limit) */
#define IDGEN_SERVERS_MAX	16	/* endpoints in one client */
#define IDGEN_ERR_LEN		256	/* room for any message, with its NUL */
#define IDGEN_DEFAULT_BLOCK_SIZE UINT64_C(1048576)	/* the pair's B (schema) */
#define IDGEN_NS_MAX		48	/* a namespace name: [A-Za-z0-9_], 1..48 bytes */

/* Result of every call that can fail. */
enum idgen_err {
	IDGEN_OK = 0,
	IDGEN_EINVAL,		/* bad argument (a count out of range, a bad endpoint) */
	IDGEN_EUNAVAILABLE,	/* no IDs held and no idserver could give any */
	IDGEN_ETIMEOUT,		/* no IDs held and none arrived within timeout_ms */
	IDGEN_ENOMEM,		/* out of memory, or a thread could not be started */
	IDGEN_ENONS,		/* no IDs held and the idservers do not serve the
				   client's namespace (idgenctl ns list) */
};

typedef struct idgen_client idgen_client;

/* idgen_options.tls: TLS to the idservers (docs/design.md section 11.7). */
enum idgen_tls {
	IDGEN_TLS_ENV = 0,	/* the environment's IDGEN_TLS: 1 on, 0 or unset off */
	IDGEN_TLS_OFF,		/* cleartext */
	IDGEN_TLS_ON,		/* TLS 1.2 or later, the server's certificate verified */
};

/*
 * Options of a client; idgen_options_init() sets every default (and size, so
 * a program built against this header keeps working with a later library
 * that has more options).
 */
struct idgen_options {
	size_t	 size;			/* sizeof(struct idgen_options), set by init */
	unsigned connect_timeout_ms;	/* connecting to one idserver (500) */
	unsigned timeout_ms;		/* how long a call waits for IDs when none
					   are held (2000); a refill round gives
					   each idserver its share of it */
	unsigned retry_min_ms;		/* first delay before a failed idserver
					   is tried again; doubles (100) */
	unsigned retry_max_ms;		/* ... up to this (5000) */
	unsigned fetch_ids;		/* IDs per BLOCK request, 1..4096 (4096) */
	unsigned max_batch;		/* BLOCK requests per round trip (64) */
	unsigned lead_ms;		/* hold IDs for this long at the recent
					   rate (1000) */
	uint64_t min_held;		/* refill below this many IDs held (8192) */
	uint64_t max_held;		/* hold at most this many, plus one
					   batch in arrival (16777216) */
	unsigned chunk;			/* IDs a thread takes at once for
					   idgen_next, 1..fetch_ids (1024) */
	const char *token;		/* sent as AUTH on every new connection
					   (idserver's auth_tokens_file); NULL:
					   the environment's IDGEN_TOKEN, if set;
					   copied by idgen_open (NULL) */
	const char *ns;			/* the namespace every ID comes from
					   (docs/design.md section 13): letters,
					   digits, _, 1..IDGEN_NS_MAX bytes; sent
					   on every BLOCK request; copied by
					   idgen_open (NULL: the default sequence,
					   nothing sent) */
	/*
	 * TLS (idserver's listen_tls). Each string NULL takes the environment
	 * variable named; files are read by idgen_open. With TLS off, setting
	 * any of them is an error (it would look like protection).
	 */
	int	 tls;			/* enum idgen_tls (IDGEN_TLS_ENV) */
	const char *tls_ca_file;	/* CA certificates (PEM) idservers'
					   certificates must chain to; NULL:
					   IDGEN_TLS_CA, else the system's store */
	const char *tls_cert_file;	/* client certificate chain (PEM), for
					   tls_verify_client; NULL: IDGEN_TLS_CERT */
	const char *tls_key_file;	/* its key (PEM); NULL: IDGEN_TLS_KEY;
					   both or neither */
	const char *tls_server_name;	/* the name (or IP address) every
					   certificate must carry; NULL:
					   IDGEN_TLS_SERVER_NAME, else each
					   endpoint's host */
	const char *db_password;	/* a mariadb:// address: the database
					   password; NULL: IDGEN_DB_PASSWORD
					   (copied by idgen_open) */
};

/* What a client has done; a snapshot. */
struct idgen_stats {
	uint64_t round_trips;		/* exchanges with an idserver that
					   returned at least one block */
	uint64_t requests;		/* BLOCK requests answered with a block */
	uint64_t ids_fetched;		/* IDs received from idservers */
	uint64_t ids_held;		/* IDs held now, not yet handed out
					   (threads' shares not counted) */
	uint64_t failures;		/* exchanges that failed (connect, I/O,
					   timeout, ERR, bad reply) */
	uint64_t failovers;		/* times the next idserver was used */
	uint64_t forks;			/* forks detected (held IDs dropped) */
	uint64_t ids_dropped;		/* held IDs given up: pieces too small for
					   a block, the oldest when full (gaps) */
	unsigned server;		/* index of the idserver in use */
	uint64_t tls_handshakes;	/* TLS sessions begun (TLS on) */
	uint64_t tls_resumed;		/* ... of them resumed a session the
					   idserver gave before (no certificate
					   exchange) */
	uint64_t auth_unneeded;		/* connections whose idserver has no
					   auth_tokens_file (it answered the
					   token with "ERR BADREQ AUTH called
					   without any token configured"): the
					   token is not needed there, the
					   idserver is used all the same (a
					   rollout of tokens, docs/operations.md) */
	uint64_t lease_claims;		/* a mariadb:// address: worker-number
					   windows claimed from the tier */
	uint64_t lease_worker;		/* ... the worker number of the window
					   held now (see lease_window_end_ms) */
	int64_t	 lease_window_end_ms;	/* ... its end, Unix ms; 0: no window */
	uint64_t reserved[2];		/* room for later counters */
};

/* Which path made an ID. */
enum idgen_kind {
	IDGEN_INVALID = 0,
	IDGEN_TICKET,
	IDGEN_SNOWFLAKE,
};

/* Which path made an ID (local, no server). */
struct idgen_decoded {
	enum idgen_kind kind;
	uint64_t id;
	uint64_t ticket;		/* IDGEN_TICKET: the ticket (block) */
	int	 odd;			/* IDGEN_TICKET: from the odd server */
	int64_t	 unix_ms;		/* IDGEN_SNOWFLAKE: time, Unix ms */
	unsigned worker;		/* IDGEN_SNOWFLAKE */
	unsigned seq;			/* IDGEN_SNOWFLAKE */
	char	 time[32];		/* IDGEN_SNOWFLAKE: ISO-8601 UTC, ms */
	char	 b58[12];		/* the 11-character sortable form */
	/*
	 * IDGEN_SNOWFLAKE: the worker's split; the 5/5 split of the design (one
	 * region), or its region and the worker within it (idgen_decode_tier
	 * with region bits).
	 */
	unsigned datacenter_id;
	unsigned worker_id;
	unsigned region;		/* the ID's region, when has_region */
	int	 has_region;		/* decoded with the region bits of a tier of regions */
	uint64_t reserved[2];		/* room for later fields */
};

void		 idgen_options_init(struct idgen_options *o);

/*
 * Opens a client on "host:port[,host:port...]" (an IPv6 address in brackets);
 * o NULL takes the defaults, else o must come from idgen_options_init(). No
 * connection is made yet. NULL on error, with a message in err (errlen bytes).
 */
idgen_client	*idgen_open(const char *servers, const struct idgen_options *o,
		    char *err, size_t errlen);

/* Stops the client's thread and frees it; held IDs are dropped (never reused). */
void		 idgen_close(idgen_client *c);

/* One new ID. */
int		 idgen_next(idgen_client *c, uint64_t *id);

/* n (1..IDGEN_IDS_MAX) new IDs, ascending, into out. */
int		 idgen_ids(idgen_client *c, unsigned n, uint64_t *out);

/* A dense block: every ID in [*first, *first + n) is new (n 1..fetch_ids). */
int		 idgen_block(idgen_client *c, unsigned n, uint64_t *first);

/* Fills st with the client's counters. */
void		 idgen_stats(idgen_client *c, struct idgen_stats *st);

/*
 * Decodes an ID locally; block_size 0 means IDGEN_DEFAULT_BLOCK_SIZE. The
 * text may also be the 11-character base58 form. IDGEN_EINVAL for an ID
 * outside 1..2^63-1 or text that is neither form.
 */
int		 idgen_decode(uint64_t id, uint64_t block_size, struct idgen_decoded *d);
int		 idgen_decode_text(const char *s, uint64_t block_size,
		    struct idgen_decoded *d);

/*
 * The same for a tier of regions: tier_increment and region_bits as idserver
 * is set (2 and 0: one pair, the same as idgen_decode). With region_bits > 0
 * has_region is set and region names the ID's region: a ticket's from its
 * server's offset, a Snowflake ID's from its worker, whose datacenter_id and
 * worker_id are then the region and the worker within it.
 */
int		 idgen_decode_tier(uint64_t id, uint64_t block_size, unsigned tier_increment,
		    unsigned region_bits, struct idgen_decoded *d);
int		 idgen_decode_text_tier(const char *s, uint64_t block_size,
		    unsigned tier_increment, unsigned region_bits, struct idgen_decoded *d);

/* The message of this thread's last failed call (like errno, per thread). */
const char	*idgen_last_error(void);

/* A fixed description of a code. */
const char	*idgen_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
