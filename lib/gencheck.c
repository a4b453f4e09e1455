/*
 * gencheck.c - before libidgen's generator claims a worker number on a
 * server, the server is checked as idserver's ticket tier checks it at
 * connect (src/check.c's rules, the same query's columns): its settings
 * for its role and idgen_meta's shape (tier_increment, region, region_bits)
 * equal to the library's. A worker number is exclusive only within one lease
 * table, so a lease claimed in another region's table would share its
 * number with that region's own holders (docs/design.md sections 3.2, 11.8).
 */
#include "gencheck.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* What check_server judges, on the lease's own terms: read in one statement. */
#define GENCHECK_SQL \
    "SELECT @@version, @@GLOBAL.auto_increment_increment, " \
    "@@GLOBAL.auto_increment_offset, @@GLOBAL.innodb_flush_log_at_trx_commit, " \
    "(SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() " \
    "AND TABLE_NAME = 'tickets64'), layout_version, block_size, parity, " \
    "tier_increment, server_offset, region, region_bits FROM idgen_meta WHERE one = 1"
#define GENCHECK_FIELDS	12

static void	gencheck_send(struct gencheck_server *s);
static void	gencheck_connected(struct db_conn *db, const struct db_result *r, void *arg);
static void	gencheck_answered(struct db_conn *db, const struct db_result *r, void *arg);
static void	gencheck_judge(struct gencheck_server *s, char **row);
static bool	gencheck_adopt(struct gencheck_server *s, char **row);
static void	gencheck_over(struct gencheck_server *s, enum lease_trust trust,
		    const char *why);

bool
gencheck_init(struct gencheck *k, struct event_base *base, struct config *cfg,
    const struct db_ops *ops, bool adopt, void (*ready)(void *), void *arg)
{
	struct db_params	 p;

	memset(k, 0, sizeof(*k));
	k->cfg = cfg;
	k->adopt = adopt;
	k->ready = ready;
	k->arg = arg;
	for (unsigned i = 0; i < SERVER_PAIR; i++) {
		char	 name[32];

		k->s[i].k = k;
		k->s[i].index = i;
		k->s[i].trust = LEASE_AWAY;
		snprintf(name, sizeof(name), "check-%s", server_name(i));
		config_db_params(&p, cfg, i, 0, ops);
		if ((k->s[i].db = db_new(base, &p, name)) == NULL)
			return false;
	}
	return true;
}

void
gencheck_start(struct gencheck *k)
{
	for (unsigned i = 0; i < SERVER_PAIR; i++)
		gencheck_send(&k->s[i]);
}

enum lease_trust
gencheck_trust(struct gencheck *k, unsigned server)
{
	struct gencheck_server	*s;

	if (server >= SERVER_PAIR)
		return LEASE_DISTRUSTED;
	s = &k->s[server];
	/* Not trusted yet: asked again, its answer seen at the lease's next claim. */
	if (s->trust != LEASE_TRUSTED && !s->busy)
		gencheck_send(s);
	return s->trust;
}

const char *
gencheck_why(const struct gencheck *k, unsigned server)
{
	return server < SERVER_PAIR ? k->s[server].why : "";
}

void
gencheck_free(struct gencheck *k)
{
	for (unsigned i = 0; i < SERVER_PAIR; i++)
		if (k->s[i].db != NULL)
			db_free(k->s[i].db);
	memset(k, 0, sizeof(*k));
}

/* One check, on a connection opened for it. */
static void
gencheck_send(struct gencheck_server *s)
{
	s->busy = true;
	if (!db_connect(s->db, gencheck_connected, s))
		gencheck_over(s, LEASE_AWAY, "the check could not connect");
}

/* Connected (or not): the check query follows. */
static void
gencheck_connected(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct gencheck_server	*s = arg;
	char			 why[256];

	if (r->err != 0) {
		snprintf(why, sizeof(why), "no connection for the check: %s", r->msg);
		gencheck_over(s, LEASE_AWAY, why);
		return;
	}
	if (!db_query(db, GENCHECK_SQL, gencheck_answered, s))
		gencheck_over(s, LEASE_AWAY, "the check query could not start");
}

/* The check's answer: judged, or the server stays away on an error. */
static void
gencheck_answered(struct db_conn *db, const struct db_result *r, void *arg)
{
	struct gencheck_server	*s = arg;
	char			**row;
	unsigned		 nf = 0;
	char			 why[256];

	(void)db;
	if (r->err != 0) {
		snprintf(why, sizeof(why), "the check query failed: %s", r->msg);
		gencheck_over(s, LEASE_AWAY, why);
		return;
	}
	row = db_first_row(r, &nf);
	if (row == NULL || nf != GENCHECK_FIELDS) {
		gencheck_over(s, LEASE_DISTRUSTED, "idgen_meta has no row (load schema/ for "
		    "this server)");
		return;
	}
	gencheck_judge(s, row);
}

/*
 * idserver's connect-time rules (check_server): the version, the server's
 * auto_increment_increment and offset for its role, durability, the ticket
 * table's engine, idgen_meta's layout, parity and the tier's shape against
 * the shape this process claims in (server.c's, from the address or adopted).
 */
static void
gencheck_judge(struct gencheck_server *s, char **row)
{
	struct check_server_info	 in;
	struct gencheck			*k = s->k;
	bool				 adopted_now = false;
	uint64_t			 b;
	char				 why[384];

	if (k->adopt && !k->adopted) {
		if (!gencheck_adopt(s, row))
			return;
		adopted_now = true;
	}
	memset(&in, 0, sizeof(in));
	in.version = row[0];
	in.increment = row[1];
	in.offset = row[2];
	in.flush_at_commit = row[3];
	in.layout_version = row[5];
	in.block_size = row[6];
	in.parity = row[7];
	in.tier_increment = row[8];
	in.server_offset = row[9];
	in.region = row[10];
	in.region_bits = row[11];
	/* The ticket table's engine: its check of a table (check_table's first rule). */
	if (!check_server(&in, s->index, &b, why, sizeof(why)) ||
	    !check_engine(k->cfg->db_name, "tickets64", row[4], why, sizeof(why))) {
		/* A refused server gives no shape: the next one checked may. */
		if (adopted_now)
			k->adopted = false;
		gencheck_over(s, LEASE_DISTRUSTED, why);
		return;
	}
	gencheck_over(s, LEASE_TRUSTED, "");
}

/*
 * The address named no shape: the tier's own (idgen_meta's tier_increment,
 * region, region_bits) becomes the process's, as if the address had named
 * it; its partner must then agree. False (the server refused) when it does
 * not fit.
 */
static bool
gencheck_adopt(struct gencheck_server *s, char **row)
{
	struct gencheck	*k = s->k;
	uint64_t	 m, r, bits;
	char		 why[256];

	if (!check_uint(row[8], &m) || !check_uint(row[10], &r) || !check_uint(row[11], &bits) ||
	    m > SERVER_INCREMENT_MAX || bits > SERVER_REGION_BITS_MAX ||
	    !server_shape_set((unsigned)m, (unsigned)r, (unsigned)bits)) {
		snprintf(why, sizeof(why), "idgen_meta's shape (tier_increment %s, region %s, "
		    "region_bits %s) is not one a tier has; the address names none to compare",
		    row[8] ? row[8] : "NULL", row[10] ? row[10] : "NULL",
		    row[11] ? row[11] : "NULL");
		gencheck_over(s, LEASE_DISTRUSTED, why);
		return false;
	}
	k->cfg->tier_increment = (unsigned)m;
	k->cfg->region = (unsigned)r;
	k->cfg->region_bits = (unsigned)bits;
	k->adopted = true;
	return true;
}

/*
 * A check is over: its verdict kept, its connection closed (a recheck is
 * rare; an idle connection per process would weigh on the tier); once both
 * first checks are over, ready is told.
 */
static void
gencheck_over(struct gencheck_server *s, enum lease_trust trust, const char *why)
{
	struct gencheck	*k = s->k;

	db_close(s->db);
	s->trust = trust;
	s->busy = false;
	s->answered = true;
	snprintf(s->why, sizeof(s->why), "%s", why);
	if (!k->ready_told && k->s[0].answered && k->s[1].answered) {
		k->ready_told = true;
		k->ready(k->arg);
	}
}
