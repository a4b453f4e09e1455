/*
 * ns.h - the namespaces idserver serves: what each server of the region says
 * of them, the marks that bind them, and their buffered IDs (docs/design.md
 * section 13.6). Pure logic, no I/O: tier.c reads the servers and fetches.
 */
#ifndef IDGEN_NS_H
#define IDGEN_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "seq.h"
#include "server.h"

/*
 * A namespace's name, [A-Za-z0-9_], 1..48 bytes: every module's bound
 * (tickets_<name> fits MariaDB's 64).
 */
#define NS_NAME_MAX	48
#define NS_MARKS_MAX	1024	/* (namespace, server) marks one process keeps: the
				 * state file's record holds that many (13.6) */
#define NS_SERVERS	(SERVER_PAIR + SERVER_EXTRA_MAX)	/* its region's servers */
#define NS_MAX_CEIL	512	/* ceiling of the max_namespaces setting */
#define NS_BAD_MAX	64	/* names with rows not understood, in one check */
#define NS_ENGINE_MAX	32	/* a ticket table's engine name, as read */

enum ns_policy {
	NS_SNOWFLAKE,		/* past the tickets: Snowflake IDs (unique, not dense) */
	NS_REFUSE,		/* past the tickets: UNAVAILABLE (dense only) */
};

/* What one server's latest namespace check read of one namespace. */
struct ns_view {
	bool		 ready;		/* its catalogue row says ready */
	uint64_t	 b;
	enum ns_policy	 policy;
	uint64_t	 counter;	/* AUTO_INCREMENT of tickets_<name>: 0, no table */
	char		 engine[NS_ENGINE_MAX + 1];	/* ... its ENGINE ("-": no table) */
	uint64_t	 start_above;	/* no ID at or below it (ns create, ns raise) */
	uint64_t	 hw[NS_SERVERS];	/* its marks rows, by server index */
	uint64_t	 hb[NS_SERVERS];	/* ... and the B each was written under */
	bool		 row[NS_SERVERS];	/* ... each there */
};

struct nsrv {
	uint32_t	 id;		/* unique in this process: names a write's callback */
	char		 name[NS_NAME_MAX + 1];
	size_t		 len;
	uint64_t	 b;		/* agreed B_N (0: never agreed) */
	enum ns_policy	 policy;
	uint64_t	 start_above;	/* the largest any server said: nothing at or below */
	bool		 served;	/* every server that answered says ready, alike */
	struct ns_view	 v[NS_SERVERS];
	uint64_t	 seen[NS_SERVERS];	/* the check (nss.checks) that last read it there */
	bool		 regressed[NS_SERVERS];	/* refused there until a check passes */
	uint32_t	 logged[NS_SERVERS];	/* ... and the reason logged (its hash; 0: none) */
	struct seq	 seq;		/* its sequence: buffer, demand, counters, rate,
					 * tickets in flight and being written */
	uint64_t	 dropped;	/* times a check found it dropped or created
					 * again: its buffered IDs let go (13.6) */
};

/* One row of a namespace check: a namespace, and one of its marks rows. */
struct ns_row {
	char		 name[NS_NAME_MAX + 1];
	uint64_t	 b;
	enum ns_policy	 policy;
	bool		 ready;
	uint64_t	 counter;
	char		 role[17];	/* "" when the namespace has no marks row */
	uint64_t	 hw;
	uint64_t	 hb;
	uint64_t	 start_above;
	char		 engine[NS_ENGINE_MAX + 1];	/* its ticket table's ("-": none) */
};

struct nss {
	unsigned	 max;		/* max_namespaces */
	unsigned	 n;
	struct nsrv	*v[NS_MAX_CEIL];	/* by name, ascending; never moved while
						 * a ticket of it is in flight */
	uint64_t	 checks;	/* namespace checks read, ever */
	uint64_t	 last_check[NS_SERVERS];	/* each server's latest (0: none) */
	uint64_t	 ignored;	/* names past max_namespaces at the last check */
	uint64_t	 released;	/* buffered IDs let go when a name was created again */
	uint32_t	 next_id;
	bool		 warned_max;
};

/*
 * The namespace-name rule (len bytes of name), the one every module checks
 * names with: inline, so the state file's code (also in libidgen) checks names
 * without linking the namespaces.
 */
static inline bool
ns_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > NS_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return true;
}

void		nss_init(struct nss *s, unsigned max);
void		nss_free(struct nss *s);

/* The namespace of that id; NULL when it is gone. */
struct nsrv	*nss_by_id(const struct nss *s, uint32_t id);

/* The namespace of that name (served or not); NULL when none. */
struct nsrv	*nss_find(const struct nss *s, const char *name, size_t len);

/*
 * Parses a namespace check's text (one row a line: name B policy state counter
 * role high_water B_of_mark start_above engine; role "-" for none, engine "-"
 * for no table) into rows. A row
 * not understood (a newer idgenctl's policy, a bad number) leaves out every
 * row of its name, counted in *bad with the first one's why: the others are
 * served. Past max rows the rest is left out, and with it every row of the
 * last name read (a namespace is never judged on part of its marks); *cut is
 * then set. False (the check not used) only past NS_BAD_MAX such names.
 */
bool		nss_parse(const char *text, struct ns_row *rows, unsigned max, unsigned *n,
		    bool *cut, unsigned *bad, char *why, size_t whylen) __attribute__((warn_unused_result));

/*
 * Applies server i's check (rows sorted by name): every namespace it lists is
 * known (new ones added while fewer than max are), its view replaced, and
 * served recomputed over up[] (the servers whose latest check counts). A
 * namespace i listed before and not now lets its buffered IDs go at once; one
 * no server lists any more is dropped from the set once nothing of it is in
 * flight. rows NULL: i's namespace tables could not be read (nothing is let
 * go for that). Returns how many buffered IDs were let go.
 */
uint64_t	nss_apply(struct nss *s, unsigned i, const struct ns_row *rows, unsigned n,
		    const bool *up);

/* Recomputes served for every namespace over up[] (a server went down or came up). */
void		nss_judge(struct nss *s, const bool *up);

/*
 * The first ID above every mark known for (ns, server i): the views of every
 * server and the state file's mark (sf_hw, sf_b; 0 when none), in ID space.
 */
uint64_t	ns_known_end(const struct nsrv *ns, unsigned i, uint64_t sf_hw, uint64_t sf_b);

/* The server index of a role of our region's servers; -1 for any other role. */
int		ns_role_index(const char *role);

/* ns_policy as the catalogue writes it. */
const char	*ns_policy_name(enum ns_policy p);

#endif
