/*
 * ctl.h - what idgenctl's commands share: the servers of the tier as read
 * with the service user, and the blocking MariaDB helpers (docs/design.md
 * section 12).
 */
#ifndef IDGEN_CTL_H
#define IDGEN_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dbtls.h"
#include "server.h"
#include "state.h"

#define CTL_MAX_LEASES	1024	/* worker numbers: one row each at most */

enum { F_VERSION, F_INCREMENT, F_OFFSET, F_FLUSH, F_ENGINE, F_LAYOUT, F_BLOCK, F_PARITY,
	F_UUID, F_COUNTER, F_TIER_INCREMENT, F_SERVER_OFFSET, F_REGION, F_REGION_BITS,
	F_GENERATION, F_FLOOR, F_PLAN, F_COUNT };

/* One lease row as a server holds it. */
struct ctl_lease {
	unsigned	worker;
	char		holder[161];
	uint64_t	window_start;
	uint64_t	window_end;
};

/* What one server reports. Strings are "" for SQL NULL. */
struct ctl_server {
	unsigned		 index;
	const char		*host;
	unsigned		 port;
	struct ctl_db		*db;		/* NULL: not connected */
	unsigned		 errnum;	/* the last statement's error number, 0 none */
	bool			 up;
	char			 error[384];	/* why it could not be read */
	char			 field[F_COUNT][64];	/* the check query's answer, as text */
	bool			 null[F_COUNT];
	uint64_t		 block_size;
	uint64_t		 counter;	/* AUTO_INCREMENT: the next ticket is >= it */
	struct state_mark	 mark[SERVER_MAX];	/* its idgen_marks rows, by the
						 * index of the server of its region */
	bool			 has_mark[SERVER_MAX];
	uint64_t		 retired;	/* by index: its rows flagged retired (12.5) */
	char			 unknown[16];	/* a role of its idgen_marks no server of
						 * the config has, not retired; "" none */
	uint64_t		 own_gen;	/* its own row's generation and seal (12.4) */
	bool			 sealed;
	struct ctl_lease	*lease;
	unsigned		 nlease;
	char			 rights[256];	/* "" or the missing right */
	unsigned		 guards;	/* by index in ctl_guards: triggers present */
	char			 guards_error[384];	/* "" or why they could not be read */
	char			 tls[96];	/* TLS version and cipher, "" cleartext */
};

struct ctl {
	struct config		 cfg;
	struct dbtls		 tls;
	struct ctl_server	 srv[SERVER_MAX];
	unsigned		 violations;
	unsigned		 warnings;
	int64_t			 now_ms;	/* layout ms, from the first server's NOW(3) */
};

/*
 * The seam between the commands and the ticket servers, as db.h is
 * idserver's: a table of blocking operations, MariaDB's Connector/C by
 * default (ctldb.c), or the simulation's servers (docs/design.md section 14).
 * A result is a set of rows of text fields (NULL for SQL NULL).
 */
struct ctl_db;
struct ctl_res;
struct ctl_ops {
	/* Connects s (s->db set), or false with the reason in s->error and s->errnum. */
	bool		 (*connect)(const struct ctl *c, struct ctl_server *s, const char *user,
			    const char *password, const char *database);
	/*
	 * Runs one statement: 0 with *res its result set (NULL: none), or the
	 * error number with the server's message in s->error.
	 */
	unsigned	 (*query)(struct ctl_server *s, const char *sql, struct ctl_res **res);
	char		**(*row)(struct ctl_res *res);		/* the next row, NULL at the end */
	unsigned	 (*fields)(struct ctl_res *res);
	void		 (*res_free)(struct ctl_res *res);
	void		 (*close)(struct ctl_db *db);
	/* Waits ms milliseconds (idservers go on meanwhile: the simulation's time runs). */
	void		 (*pause)(unsigned ms);
};

/* The operations in use: &ctldb_mariadb unless the simulation sets its own. */
extern const struct ctl_ops *ctl_ops;
extern const struct ctl_ops ctldb_mariadb;

/*
 * The lock 'idgenctl' is held on s's connection (idgenctl.c's ctl_lock): from
 * now on, before each statement that is not a plain SELECT, SHOW or EXPLAIN,
 * on any server, ctldb_mariadb checks on s that it still is, and without it
 * fails the statement unsent, "lost the lock" in s->error (docs/design.md 12.4).
 */
void		 ctldb_lock_conn(struct ctl_server *s);

/* A result's next row (NULL at the end), its width, its end. */
char		**ctl_row(struct ctl_res *res);
unsigned	 ctl_fields(struct ctl_res *res);
void		 ctl_res_free(struct ctl_res *res);

/*
 * Test seam, called right after each step of a command (tier add-server:
 * new-meta, new-marks, new-floor, new-stale, new-ns and the others in add.c;
 * tier raise-increment: plan, seal, floor, open, after the first server's;
 * ns: rows, floor, ready and the others in ns.c): IDGENCTL_KILL_AT=STEP ends
 * the command there with SIGKILL; IDGENCTL_PAUSE_AT=STEP (the first time
 * only) creates IDGENCTL_PAUSE_FILE's ".paused" and waits until it is removed
 * (30 s at most).
 */
void		 ctl_step(const char *step);

/* Closes s's connection, if any. */
void		 ctl_close(struct ctl_server *s);

/* A decimal column; NULL or junk is false. */
bool		 ctl_u64(const char *v, uint64_t *out);

/* Runs a query; its result (or NULL with the error in s->error, its number in s->errnum). */
struct ctl_res	*ctl_query(struct ctl_server *s, const char *sql);

/* Runs one statement (printf-formatted); false with the error on stderr. */
bool		 ctl_exec(struct ctl_server *s, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

/* Connects s as user (the service user, or an administrator's). */
bool		 ctl_connect_as(const struct ctl *c, struct ctl_server *s, const char *user,
		    const char *password);

/* Connects s as user with database as the default one (a shard's, for adoption). */
bool		 ctl_connect_db(const struct ctl *c, struct ctl_server *s, const char *user,
		    const char *password, const char *database);

/* Reads s as the service user: meta row, marks, leases, rights, guards, the time (read.c). */
void		 ctl_read(struct ctl *c, struct ctl_server *s);

/* The schema's guard triggers (docs/design.md 6.5), by bit of ctl_server.guards. */
struct ctl_guard {
	const char	*name;
	const char	*file;
	const char	*refuses;
};
extern const struct ctl_guard ctl_guards[];
extern const unsigned ctl_guards_count;

/* tier add-server OFFSET IP:PORT (add.c); the exit status. */
int		 ctl_add_server(struct ctl *c, const char *offset, const char *addr);

/* ns list|create|raise|drop ... (ns.c): argv from the verb on; the exit status. */
int		 ctl_ns(struct ctl *c, int argc, char **argv);

/* One namespace's catalogue row as every server of the region holds it (ns.c). */
struct ctl_ns_row {
	char		 name[NS_NAME_MAX + 1];
	uint64_t	 b;
	char		 fallback[16];
	uint64_t	 start_above;	/* the largest any server holds */
	unsigned	 seen;		/* servers listing it ready */
};

#define CTL_NS_MAX	NS_MAX_CEIL	/* namespaces a growth command carries along */

/*
 * Every namespace 'ready' on the n servers s (docs/design.md 13.8), agreed on
 * every one; a namespace 'creating' anywhere, or ready on some only, refuses
 * `tier verb`. 0, or the exit status with a line on stderr.
 */
int		 ctl_ns_ready(struct ctl_server *const *s, unsigned n, const char *verb,
		    struct ctl_ns_row *out, unsigned *count);

/*
 * The end, in ID space, of every idgen_ns_marks row of ns on s (and, with
 * counter, of its tickets_<ns> counter minus one); false on an error.
 */
bool		 ctl_ns_end(struct ctl_server *s, const char *ns, uint64_t b, bool counter,
		    uint64_t *end);

/* tickets_<ns> (InnoDB) on s and the service user's rights on it; false on an error. */
bool		 ctl_ns_table(struct ctl_server *s, const char *ns, const char *grantee);

/* The service user as MariaDB names it ('user'@'host'), for GRANT; false without. */
bool		 ctl_ns_grantee(struct ctl *c, char *out, size_t len);

/* tier retire-server OFFSET (add.c); the exit status. */
int		 ctl_retire_server(struct ctl *c, const char *offset);

/* tier raise-increment M (raise.c); the exit status. */
int		 ctl_raise_increment(struct ctl *c, const char *to);

#endif
