/*
 * ns.c - the namespaces idserver serves: the servers' catalogue rows merged,
 * agreement judged, marks compared in ID space (docs/design.md section 13.6).
 */
#include "ns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout.h"
#include "log.h"

#define NS_ROW_WORDS	10	/* the words of one row of a namespace check */

static bool	ns_word(const char **p, char *out, size_t len);
static struct nsrv *nss_add(struct nss *s, const char *name);
static void	nss_remove(struct nss *s, unsigned k);
static void	ns_judge(struct nss *s, struct nsrv *ns, const bool *up);
static uint64_t	ns_let_go(struct nsrv *ns);
static bool	ns_row_read(char w[NS_ROW_WORDS][NS_NAME_MAX + 2], struct ns_row *r);

void
nss_init(struct nss *s, unsigned max)
{
	memset(s, 0, sizeof(*s));
	s->max = max > NS_MAX_CEIL ? NS_MAX_CEIL : max;
}

void
nss_free(struct nss *s)
{
	for (unsigned k = 0; k < s->n; k++)
		free(s->v[k]);
	s->n = 0;
}

const char *
ns_policy_name(enum ns_policy p)
{
	return p == NS_REFUSE ? "refuse" : "snowflake";
}

struct nsrv *
nss_by_id(const struct nss *s, uint32_t id)
{
	for (unsigned k = 0; k < s->n; k++)
		if (s->v[k]->id == id)
			return s->v[k];
	return NULL;
}

/* Binary search by name (bytes, then length: the catalogue's ORDER BY name BINARY). */
struct nsrv *
nss_find(const struct nss *s, const char *name, size_t len)
{
	unsigned lo = 0, hi = s->n;

	if (len == 0 || len > NS_NAME_MAX)
		return NULL;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		const struct nsrv *ns = s->v[mid];
		size_t m = ns->len < len ? ns->len : len;
		int c = memcmp(ns->name, name, m);

		if (c == 0)
			c = ns->len < len ? -1 : ns->len > len ? 1 : 0;
		if (c == 0)
			return s->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One space-separated word into out; false when none or too long. */
static bool
ns_word(const char **p, char *out, size_t len)
{
	size_t n = 0;

	while (**p == ' ')
		(*p)++;
	while (**p != '\0' && **p != ' ' && **p != '\n') {
		if (n + 1 >= len)
			return false;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	return n > 0;
}

/* One row's words into r; false when they are not a row. */
static bool
ns_row_read(char w[NS_ROW_WORDS][NS_NAME_MAX + 2], struct ns_row *r)
{
	memset(r, 0, sizeof(*r));
	if (!ns_name_ok(w[0], strlen(w[0])) || !check_uint(w[1], &r->b) || r->b == 0 ||
	    !check_uint(w[4], &r->counter) || !check_uint(w[6], &r->hw) ||
	    !check_uint(w[7], &r->hb) || !check_uint(w[8], &r->start_above) ||
	    strlen(w[5]) >= sizeof(r->role) ||
	    strlen(w[9]) >= sizeof(r->engine))
		return false;
	if (strcmp(w[2], "snowflake") == 0)
		r->policy = NS_SNOWFLAKE;
	else if (strcmp(w[2], "refuse") == 0)
		r->policy = NS_REFUSE;
	else
		return false;
	r->ready = strcmp(w[3], "ready") == 0;
	memcpy(r->name, w[0], strlen(w[0]) + 1);
	if (strcmp(w[5], "-") != 0)
		memcpy(r->role, w[5], strlen(w[5]) + 1);
	memcpy(r->engine, w[9], strlen(w[9]) + 1);
	return true;
}

bool
nss_parse(const char *text, struct ns_row *rows, unsigned max, unsigned *n, bool *cut,
    unsigned *bad, char *why, size_t whylen)
{
	static char badname[NS_BAD_MAX][NS_NAME_MAX + 2];
	const char *p = text;
	char w[NS_ROW_WORDS][NS_NAME_MAX + 2];
	unsigned nbad = 0, out = 0;

	*n = 0;
	*cut = false;
	*bad = 0;
	while (p != NULL && *p != '\0') {
		unsigned k;

		for (k = 0; k < NS_ROW_WORDS; k++)
			if (!ns_word(&p, w[k], sizeof(w[k])))
				break;
		while (*p == ' ')
			p++;
		if (k != NS_ROW_WORDS || (*p != '\n' && *p != '\0') || *n >= max ||
		    !ns_row_read(w, &rows[*n])) {
			if (*n >= max && k == NS_ROW_WORDS) {
				/* Past the bound: the last name's rows go (it may have more). */
				while (*n > 0 && strcmp(rows[*n - 1].name, w[0]) == 0)
					(*n)--;
				*cut = true;
				break;
			}
			/* A row not understood: every row of its name is left out. */
			if ((*bad)++ == 0)
				snprintf(why, whylen, "namespace check: a row of '%.48s' is not "
				    "understood (left out)", k > 0 ? w[0] : "");
			if (nbad >= NS_BAD_MAX)
				return false;
			memcpy(badname[nbad++], k > 0 ? w[0] : "", k > 0 ? strlen(w[0]) + 1 : 1);
			while (*p != '\0' && *p != '\n')
				p++;
		} else
			(*n)++;
		if (*p == '\n')
			p++;
	}
	for (unsigned r = 0; r < *n; r++) {
		unsigned j;

		for (j = 0; j < nbad && strcmp(rows[r].name, badname[j]) != 0; j++)
			;
		if (j == nbad)
			rows[out++] = rows[r];
	}
	*n = out;
	return true;
}

/* The server index of a role of our region's servers; -1 for any other role. */
int
ns_role_index(const char *role)
{
	for (unsigned i = 0; i < server_own_count() && i < NS_SERVERS; i++)
		if (strcmp(server_role(i), role) == 0)
			return (int)i;
	return -1;
}

/* Inserts a new namespace in name order; NULL when the set is full. */
static struct nsrv *
nss_add(struct nss *s, const char *name)
{
	size_t len = strlen(name);
	struct nsrv *ns;
	unsigned k = 0;

	if (s->n >= s->max)
		return NULL;
	if ((ns = calloc(1, sizeof(*ns))) == NULL)
		return NULL;
	memcpy(ns->name, name, len + 1);
	ns->len = len;
	ns->id = ++s->next_id;
	pool_init(&ns->seq.pool);
	ns->seq.idles = true;
	while (k < s->n) {
		size_t m = s->v[k]->len < len ? s->v[k]->len : len;
		int c = memcmp(s->v[k]->name, name, m);

		if (c > 0 || (c == 0 && s->v[k]->len > len))
			break;
		k++;
	}
	memmove(&s->v[k + 1], &s->v[k], (s->n - k) * sizeof(s->v[0]));
	s->v[k] = ns;
	s->n++;
	return ns;
}

static void
nss_remove(struct nss *s, unsigned k)
{
	free(s->v[k]);
	memmove(&s->v[k], &s->v[k + 1], (s->n - k - 1) * sizeof(s->v[0]));
	s->n--;
}

/* An incarnation of ns ends: its IDs and waiting blocks go (a gap; 13.6). */
static uint64_t
ns_let_go(struct nsrv *ns)
{
	ns->seq.demand = false;
	ns->dropped++;
	return pool_clear(&ns->seq.pool);
}

/*
 * Served when every server whose latest check counts (up) lists it ready with
 * one B and one policy, and at least one does; the first agreement fixes
 * them for the process (a B or policy that changes later is never served).
 */
static void
ns_judge(struct nss *s, struct nsrv *ns, const bool *up)
{
	bool any = false, ok = true, unready = false;
	uint64_t b = 0;
	enum ns_policy pol = NS_SNOWFLAKE;

	for (unsigned i = 0; i < server_own_count() && i < NS_SERVERS && ok; i++) {
		const struct ns_view *v = &ns->v[i];

		if (!up[i] || s->last_check[i] == 0)
			continue;
		if (ns->seen[i] != s->last_check[i] || !v->ready) {
			/*
			 * It counts, and says no (not listed: dropped; or not
			 * ready): not served, whatever the last verdict was.
			 */
			ok = false;
			any = true;
			/* Listed, not ready (not listed: nss_apply's, which knows a
			 * check that read no table from one that missed it). */
			unready = ns->seen[i] == s->last_check[i];
			break;
		}
		if (any && (v->b != b || v->policy != pol))
			ok = false;
		b = v->b;
		pol = v->policy;
		any = true;
	}
	if (!any && ns->b != 0)
		return;		/* no server counts now: as last judged (its fallback serves) */
	ok = ok && any;
	if (ok && ns->b != 0 && (ns->b != b || ns->policy != pol)) {
		/*
		 * Dropped and created again with another B or policy: served anew
		 * once no ticket of the old one is in flight (the old one's marks
		 * still bind, in ID space; its tickets check the catalogue row
		 * under a lock, so none is banked after the drop: 13.6).
		 */
		if (ns->seq.fetching + ns->seq.writing > 0)
			ok = false;
		else {
			log_info("namespace %s: created again with B=%llu, fallback %s (was B=%llu, "
			    "%s): its buffered IDs let go", ns->name, (unsigned long long)b,
			    ns_policy_name(pol), (unsigned long long)ns->b,
			    ns_policy_name(ns->policy));
			s->released += ns_let_go(ns);
			ns->b = b;
			ns->policy = pol;
			/* Copies are learned anew: its rows were made again (13.3). */
			memset(ns->seq.copied, 0, sizeof(ns->seq.copied));
		}
	}
	if (ok && ns->b == 0) {
		ns->b = b;
		ns->policy = pol;
	}
	/*
	 * A server that counts lists it, not ready: a drop's first step (13.3).
	 * Its buffered IDs go now, as when a check stops listing it (nss_apply):
	 * the drop's second step can be missed between two checks, and a create
	 * after it under the same B and policy would serve the old blocks below
	 * its first ID (13.6).
	 */
	if (unready && ns->served)
		s->released += ns_let_go(ns);
	if (ok != ns->served)
		log_info("namespace %s: %s (B=%llu, fallback %s)", ns->name,
		    ok ? "served" : "no longer served", (unsigned long long)ns->b,
		    ns_policy_name(ns->policy));
	ns->served = ok;
}

void
nss_judge(struct nss *s, const bool *up)
{
	for (unsigned k = 0; k < s->n; k++)
		ns_judge(s, s->v[k], up);
}

uint64_t
nss_apply(struct nss *s, unsigned i, const struct ns_row *rows, unsigned n, const bool *up)
{
	uint64_t released = 0, prev;
	unsigned ignored = 0;

	if (i >= NS_SERVERS)
		return 0;
	prev = s->last_check[i];
	s->last_check[i] = ++s->checks;
	for (unsigned r = 0; r < n; r++) {
		struct nsrv *ns = nss_find(s, rows[r].name, strlen(rows[r].name));
		int j;

		if (ns == NULL && (r == 0 || strcmp(rows[r - 1].name, rows[r].name) != 0) &&
		    (ns = nss_add(s, rows[r].name)) == NULL) {
			ignored++;
			continue;
		}
		if (ns == NULL)
			continue;	/* a later row of a name that did not fit */
		if (ns->seen[i] != s->last_check[i]) {
			/* The first row of it in this check: a fresh view. */
			memset(&ns->v[i], 0, sizeof(ns->v[i]));
			ns->seen[i] = s->last_check[i];
			ns->v[i].ready = rows[r].ready;
			ns->v[i].b = rows[r].b;
			ns->v[i].policy = rows[r].policy;
			ns->v[i].counter = rows[r].counter;
			memcpy(ns->v[i].engine, rows[r].engine, sizeof(ns->v[i].engine));
			ns->v[i].start_above = rows[r].start_above;
		}
		if ((j = ns_role_index(rows[r].role)) >= 0) {
			ns->v[i].hw[j] = rows[r].hw;
			ns->v[i].hb[j] = rows[r].hb;
			ns->v[i].row[j] = true;
		}
	}
	s->ignored = ignored;
	if (ignored > 0 && !s->warned_max)
		log_warn("%u namespaces beyond max_namespaces=%u are not served", ignored, s->max);
	s->warned_max = ignored > 0;
	/*
	 * Listed by i's last check, not by this one: dropped there. Its buffered
	 * IDs go now (a gap), not once every server's check has missed it: by
	 * then it may be created again under the same B and policy, and its old
	 * blocks would be served below the new incarnation's first ID (13.6).
	 * A check that read no namespace table (rows NULL) drops nothing.
	 */
	for (unsigned k = 0; rows != NULL && prev != 0 && k < s->n; k++) {
		struct nsrv *ns = s->v[k];

		if (ns->seen[i] == prev)
			released += ns_let_go(ns);
	}
	/* Names no server lists any more: gone once nothing of them is in flight. */
	for (unsigned k = s->n; k-- > 0;) {
		struct nsrv *ns = s->v[k];
		bool listed = false;

		for (unsigned j = 0; j < NS_SERVERS; j++)
			if (s->last_check[j] != 0 && ns->seen[j] == s->last_check[j])
				listed = true;
		if (listed || ns->seq.fetching > 0 || ns->seq.writing > 0)
			continue;
		released += pool_clear(&ns->seq.pool);
		if (ns->served)
			log_info("namespace %s: dropped or gone from every server", ns->name);
		nss_remove(s, k);
	}
	nss_judge(s, up);
	return released;
}

uint64_t
ns_known_end(const struct nsrv *ns, unsigned i, uint64_t sf_hw, uint64_t sf_b)
{
	uint64_t end = 0;

	if (sf_b != 0)
		end = layout_ticket_end(sf_hw, sf_b);
	for (unsigned j = 0; j < NS_SERVERS; j++) {
		const struct ns_view *v = &ns->v[j];
		uint64_t unit = v->hb[i] != 0 ? v->hb[i] : v->b, e;

		if (unit == 0 || ns->seen[j] == 0)
			continue;
		e = layout_ticket_end(v->hw[i], unit);
		if (e > end)
			end = e;
	}
	return end;
}

