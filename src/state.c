/*
 * state.c - format and parse the local state record, checksummed.
 *
 * A text record a person can read, one for every sequence (docs/design.md
 * section 6.10):
 *
 *	idgen-state 3
 *	gen <saves>
 *	host <name>
 *	owner <machine-id or -> <boot_id or -> <pid namespace> <pid> <start time>
 *	servers <odd ip:port> <even ip:port> <db>
 *	mark - odd <high_water> <B> <uuid or ->		(the default sequence: "-")
 *	mark - even <high_water> <B> <uuid or ->
 *	mark <namespace> <server name> <high_water> <B> -	(one per non-zero mark)
 *	lease none | lease <worker> odd|even <holder> <start> <end> <reserved>
 *	check <FNV-1a 64 of every byte above, hex>
 *
 * It ends with its checksum line: whatever follows in its slot is ignored.
 * The earlier formats are read, never written: version 2 ("mark <server>
 * ..." for the default alone), version 1 (no gen, no owner, marks without B;
 * it never proves an owner dead), and the namespace marks record idgen-ns 1
 * ("nsmark <namespace> <server name> <high_water> <B>" lines).
 */
#include "state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout.h"

static uint64_t	state_hash(const char *buf, size_t len);
static bool	state_word(const char **p, const char *end, char *out, size_t outlen);
static bool	state_u64(const char **p, const char *end, uint64_t *v);
static bool	state_line_end(const char **p, const char *end);
static bool	state_safe(const char *s);
static bool	state_word_or_none(const char **p, const char *end, char *out, size_t outlen);
static bool	state_check(const char *buf, size_t len, const char **body_end, char *why,
		    size_t whylen);
static bool	state_parse_head(const char **p, const char *end, uint64_t version,
		    struct state_rec *r);
static bool	state_parse_marks(const char **p, const char *end, uint64_t version,
		    struct state_rec *r, struct state_ns *ns, char *why, size_t whylen);
static bool	state_parse_lease(const char **p, const char *end, struct state_lease *l);
static struct state_ns_mark *state_ns_find(const struct state_ns *r, const char *ns,
		    unsigned server);
static bool	state_ns_parse_head(const char **p, const char *end, uint64_t *gen, char *why,
		    size_t whylen);
static bool	state_ns_parse_mark(const char **p, const char *end, bool uuid,
		    struct state_ns *r, char *why, size_t whylen);
static int	state_line_of(const char *buf, const char *p);
static const char *state_check_line(const char *buf, size_t len);

/* FNV-1a, 64 bits: catches torn and hand-edited files. */
static uint64_t
state_hash(const char *buf, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* True when s has no white space or control bytes (it is one word of a line). */
static bool
state_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Formats the record; the checksum covers everything before its line. */
size_t
state_format(const struct state_rec *r, const struct state_ns *ns, char *buf, size_t len)
{
	const struct state_lease *l = &r->lease;
	const struct state_owner *o = &r->owner;
	int n, m, i;

	if (!state_safe(r->host) || !state_safe(l->holder) || r->host[0] == '\0' ||
	    !state_safe(o->machine) || !state_safe(o->boot))
		return 0;
	n = snprintf(buf, len, "idgen-state %d\ngen %" PRIu64 "\nhost %s\nowner %s %s %" PRIu64
	    " %" PRIu64 " %" PRIu64 "\nservers %s\n", STATE_VERSION, r->gen, r->host,
	    o->machine[0] ? o->machine : "-", o->boot[0] ? o->boot : "-", o->pidns, o->pid,
	    o->start, r->servers);
	for (i = 0; i < (int)server_count() && n >= 0 && (size_t)n < len; i++) {
		if (!state_safe(r->mark[i].uuid))
			return 0;
		n += snprintf(buf + n, len - (size_t)n, "mark - %s %" PRIu64 " %" PRIu64 " %s\n",
		    server_name(i), r->mark[i].high_water, r->mark[i].block_size,
		    r->mark[i].uuid[0] ? r->mark[i].uuid : "-");
	}
	for (unsigned j = 0; ns != NULL && j < ns->n && n >= 0 && (size_t)n < len; j++) {
		const struct state_ns_mark *k = &ns->m[j];

		if (!ns_name_ok(k->ns, strnlen(k->ns, NS_NAME_MAX + 1)) ||
		    k->server >= server_count())
			return 0;
		if (k->high_water != 0 && k->block_size != 0)	/* else it covers nothing */
			n += snprintf(buf + n, len - (size_t)n, "mark %s %s %" PRIu64 " %"
			    PRIu64 " -\n", k->ns, server_name(k->server), k->high_water,
			    k->block_size);
	}
	if (n < 0 || (size_t)n >= len)
		return 0;
	if (l->held && l->holder[0] != '\0' && l->server < SERVER_PAIR)
		n += snprintf(buf + n, len - (size_t)n, "lease %u %s %s %" PRIu64 " %" PRIu64
		    " %" PRIu64 "\n", l->worker, server_name(l->server), l->holder,
		    l->window_start, l->window_end, l->reserved);
	else
		n += snprintf(buf + n, len - (size_t)n, "lease none\n");
	if (n < 0 || (size_t)n >= len)
		return 0;
	m = snprintf(buf + n, len - (size_t)n, "check %016" PRIx64 "\n",
	    state_hash(buf, (size_t)n));
	if (m < 0 || (size_t)(n + m) >= len)
		return 0;
	return (size_t)(n + m);
}

/* Reads one space-separated word of the current line. */
static bool
state_word(const char **p, const char *end, char *out, size_t outlen)
{
	size_t n = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p != ' ' && **p != '\n') {
		if (n + 1 >= outlen)
			return false;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	return n > 0;
}

/* Reads one word; "-" stands for the empty string. */
static bool
state_word_or_none(const char **p, const char *end, char *out, size_t outlen)
{
	if (!state_word(p, end, out, outlen))
		return false;
	if (strcmp(out, "-") == 0)
		out[0] = '\0';
	return true;
}

/* Reads one decimal word, strictly. */
static bool
state_u64(const char **p, const char *end, uint64_t *v)
{
	char w[24], *e;

	if (!state_word(p, end, w, sizeof(w)) || w[0] < '0' || w[0] > '9')
		return false;
	errno = 0;
	*v = strtoull(w, &e, 10);
	return *e == '\0' && errno != ERANGE;	/* above 2^64 - 1 is not a number of ours */
}

/* The rest of the line must be empty. */
static bool
state_line_end(const char **p, const char *end)
{
	if (*p >= end || **p != '\n')
		return false;
	(*p)++;
	return true;
}

/* Where the first checksum line starts, or NULL (no other line starts with "check"). */
static const char *
state_check_line(const char *buf, size_t len)
{
	for (const char *q = buf; q + 6 <= buf + len; q++)
		if ((q == buf || q[-1] == '\n') && memcmp(q, "check ", 6) == 0)
			return q;
	return NULL;
}

size_t
state_end(const char *buf, size_t len)
{
	const char *check = state_check_line(buf, len);

	if (check == NULL || (size_t)(buf + len - check) < 23 || check[22] != '\n')
		return 0;
	return (size_t)(check + 23 - buf);
}

/*
 * The first checksum line ends the record: true with *body_end at its start
 * when it covers what is above.
 */
static bool
state_check(const char *buf, size_t len, const char **body_end, char *why, size_t whylen)
{
	const char *check = state_check_line(buf, len), *p;

	if (check == NULL)
		return check_fail(why, whylen, "no checksum line (truncated?)");
	p = check + 6;
	/* The line's shape is state_end's; its '\n' ends the run of hex digits. */
	if (state_end(buf, len) == 0 || strspn(p, "0123456789abcdef") != 16)
		return check_fail(why, whylen, "bad checksum line");
	if (strtoull(p, NULL, 16) != state_hash(buf, (size_t)(check - buf)))
		return check_fail(why, whylen, "checksum mismatch (torn or edited)");
	*body_end = check;
	return true;
}

/* The gen, host and owner lines (version 1 has only host). */
static bool
state_parse_head(const char **p, const char *end, uint64_t version, struct state_rec *r)
{
	struct state_owner *o = &r->owner;
	char w[16];

	if (version >= 2 && (!state_word(p, end, w, sizeof(w)) || strcmp(w, "gen") != 0 ||
	    !state_u64(p, end, &r->gen) || !state_line_end(p, end)))
		return false;
	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "host") != 0 ||
	    !state_word(p, end, r->host, sizeof(r->host)) || !state_line_end(p, end))
		return false;
	if (version < 2)
		return true;
	return state_word(p, end, w, sizeof(w)) && strcmp(w, "owner") == 0 &&
	    state_word_or_none(p, end, o->machine, sizeof(o->machine)) &&
	    state_word_or_none(p, end, o->boot, sizeof(o->boot)) &&
	    state_u64(p, end, &o->pidns) && state_u64(p, end, &o->pid) &&
	    state_u64(p, end, &o->start) && state_line_end(p, end);
}

/*
 * The servers line (the rest of the line, spaces included), our pair's mark
 * lines, then those of other regions' servers (docs/design.md section 12.3):
 * one of a region no longer configured is skipped (its servers keep their own
 * marks), not an error. From version 3 a mark line names its sequence ("-"
 * the default) and the namespaces' follow the pair's (into ns; why says what
 * is wrong with one).
 */
static bool
state_parse_marks(const char **p, const char *end, uint64_t version, struct state_rec *r,
    struct state_ns *ns, char *why, size_t whylen)
{
	const char *nl;
	char w[16];
	int i;

	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "servers") != 0)
		return false;
	while (*p < end && **p == ' ')
		(*p)++;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	if (nl == NULL || (size_t)(nl - *p) >= sizeof(r->servers))
		return false;
	memcpy(r->servers, *p, (size_t)(nl - *p));
	r->servers[nl - *p] = '\0';
	*p = nl + 1;
	for (i = 0; *p < end && (i < SERVER_PAIR || strncmp(*p, "mark ", 5) == 0); i++) {
		struct state_mark m = { 0, 0, "" };
		unsigned at;

		if (version >= 3 && i >= SERVER_PAIR && strncmp(*p, "mark - ", 7) != 0) {
			if (!state_ns_parse_mark(p, end, true, ns, why, whylen))
				return false;
			continue;
		}
		if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "mark") != 0 ||
		    (version >= 3 && (!state_word(p, end, w, sizeof(w)) ||
		    strcmp(w, "-") != 0)) ||
		    !state_word(p, end, w, sizeof(w)) ||
		    (i < SERVER_PAIR && strcmp(w, server_name((unsigned)i)) != 0) ||
		    !state_u64(p, end, &m.high_water) ||
		    (version >= 2 && !state_u64(p, end, &m.block_size)) ||
		    !state_word_or_none(p, end, m.uuid, sizeof(m.uuid)) ||
		    !state_line_end(p, end))
			return false;
		if (!server_by_name(w, &at))
			continue;
		if (i >= SERVER_PAIR && at < SERVER_PAIR)
			return false;	/* our pair's marks come first, once */
		r->mark[at] = m;
	}
	return i >= SERVER_PAIR;
}

/* The lease line: none, or a window whose worker has its server's residue. */
static bool
state_parse_lease(const char **p, const char *end, struct state_lease *l)
{
	char w[24], name[8];
	const char *worker;
	uint64_t v;

	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "lease") != 0)
		return false;
	worker = *p;
	if (!state_word(p, end, w, sizeof(w)))
		return false;
	if (strcmp(w, "none") == 0)
		return state_line_end(p, end);
	*p = worker;	/* not none: the word again, read as every number of the record */
	if (!state_u64(p, end, &v) || v > 1023 ||
	    !state_word(p, end, name, sizeof(name)) ||
	    !state_word(p, end, l->holder, sizeof(l->holder)) ||
	    !state_u64(p, end, &l->window_start) ||
	    !state_u64(p, end, &l->window_end) || !state_u64(p, end, &l->reserved))
		return false;
	l->worker = (unsigned)v;
	if (!server_by_name(name, &l->server))
		return false;
	/*
	 * Each worker number lives on the server of its parity (odd numbers on the
	 * odd server). Which region's range it is in is the resumer's question
	 * (lease_resume), not the format's: a record stays readable, its marks in
	 * force, whatever the region setting is now.
	 */
	if ((l->worker % 2 == 1) != (l->server == SERVER_ODD) ||
	    l->window_end < l->window_start || l->reserved > l->window_end)
		return false;
	l->held = true;
	return state_line_end(p, end);
}

/* The line number of p in buf, for reasons. */
static int
state_line_of(const char *buf, const char *p)
{
	int line = 1;

	for (; p > buf; p--)
		if (p[-1] == '\n')
			line++;
	return line;
}

/* Parses and verifies a record; any deviation is corruption, never a guess. */
bool
state_parse(const char *buf, size_t len, struct state_rec *r, struct state_ns *ns, char *why,
    size_t whylen)
{
	const char *p = buf, *end = NULL;	/* set by state_check */
	char w[16], what[64] = "malformed";
	uint64_t version;

	memset(r, 0, sizeof(*r));
	if (ns != NULL)
		ns->n = 0;
	if (!state_check(buf, len, &end, why, whylen))
		return false;
	if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "idgen-state") != 0 ||
	    !state_u64(&p, end, &version) || !state_line_end(&p, end))
		return check_fail(why, whylen, "not an idgen state file");
	if (version < 1 || version > STATE_VERSION)
		return check_fail(why, whylen, "state file version %" PRIu64 ", this build "
		    "reads 1 to %d", version, STATE_VERSION);
	if (state_parse_head(&p, end, version, r) &&
	    state_parse_marks(&p, end, version, r, ns, what, sizeof(what)) &&
	    state_parse_lease(&p, end, &r->lease) && p == end)
		return true;
	snprintf(why, whylen, "%s near line %d", what, state_line_of(buf, p));
	memset(r, 0, sizeof(*r));
	if (ns != NULL)
		ns->n = 0;
	return false;
}

uint64_t
state_mark_end(const struct state_mark *m, uint64_t b)
{
	return layout_ticket_end(m->high_water, m->block_size != 0 ? m->block_size : b);
}

uint64_t
state_mark_ticket(const struct state_mark *m, uint64_t b)
{
	return b == 0 ? m->high_water : layout_end_ticket(state_mark_end(m, b), b);
}

/* Raises a server's mark in ID space (never lowers it); true when the record changed. */
bool
state_raise_mark(struct state_rec *r, unsigned server, uint64_t high_water, uint64_t block_size,
    uint64_t b, const char *uuid)
{
	struct state_mark *m = &r->mark[server];
	struct state_mark want = { high_water, block_size != 0 ? block_size : b, "" };
	bool changed = false;

	if (uuid != NULL && uuid[0] != '\0' && state_safe(uuid) &&
	    strlen(uuid) < sizeof(m->uuid) && strcmp(uuid, m->uuid) != 0) {
		snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
		changed = true;
	}
	if (state_mark_end(&want, b) > state_mark_end(m, b) ||
	    (m->block_size == 0 && want.block_size != 0 &&
	    state_mark_end(&want, b) == state_mark_end(m, b))) {
		/* The second case only records the B of a mark read from an older file. */
		m->high_water = want.high_water;
		m->block_size = want.block_size;
		changed = true;
	}
	return changed;
}

/* True only when the record's owner is provably dead (see state.h). */
bool
state_owner_dead(const struct state_owner *was, const struct state_owner *me,
    state_running_fn running, char *why, size_t whylen)
{
	if (was->machine[0] == '\0' || was->boot[0] == '\0' || was->pid == 0)
		return check_fail(why, whylen, "the file does not say which process wrote it "
		    "(an older version's file)");
	if (me->machine[0] == '\0' || me->boot[0] == '\0')
		return check_fail(why, whylen, "this machine has no /etc/machine-id or "
		    "boot_id: nothing can prove the previous owner dead");
	if (strcmp(was->machine, me->machine) != 0)
		return check_fail(why, whylen, "written on another machine (machine-id %s): a "
		    "copied file or volume, whose owner may still run", was->machine);
	if (strcmp(was->boot, me->boot) != 0)
		return true;	/* every process of an earlier boot is gone */
	if (was->pidns != me->pidns)
		return check_fail(why, whylen, "written in another pid namespace (a container?) "
		    "during this boot: its owner, pid %" PRIu64 " there, may still run",
		    was->pid);
	if (was->pid == me->pid)
		return true;	/* that pid is ours now: its previous process is gone */
	if (running(was->pid, was->start))
		return check_fail(why, whylen, "its owner, pid %" PRIu64 ", is still running (a "
		    "copy of a live idserver's state file?)", was->pid);
	return true;
}

/*
 * The stamp line: "stamp <gen> <dev hex> <ino> <sec>.<nsec> <check>\n", the
 * check an FNV-1a 64 of everything before it on the line.
 */
bool
state_stamp_format(const struct state_stamp *s, char *buf, size_t len)
{
	int n, m;

	if (len < STATE_STAMP_LEN)
		return false;
	memset(buf, 0, STATE_STAMP_LEN);
	n = snprintf(buf, STATE_STAMP_LEN, "stamp %" PRIu64 " %" PRIx64 " %" PRIu64 " %" PRId64
	    ".%09ld ", s->gen, s->dev, s->ino, s->sec, s->nsec);
	if (n < 0 || n >= STATE_STAMP_LEN)
		return false;
	m = snprintf(buf + n, STATE_STAMP_LEN - (size_t)n, "%016" PRIx64 "\n",
	    state_hash(buf, (size_t)n));
	if (m < 0 || n + m >= STATE_STAMP_LEN) {
		memset(buf, 0, STATE_STAMP_LEN);
		return false;
	}
	return true;
}

bool
state_stamp_parse(const char *buf, size_t len, struct state_stamp *s)
{
	char line[STATE_STAMP_LEN + 1];
	unsigned long long gen, dev, ino, check;
	long long sec;
	long nsec;
	size_t n = strnlen(buf, len < STATE_STAMP_LEN ? len : STATE_STAMP_LEN);
	const char *sp;
	int used = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0 || n >= STATE_STAMP_LEN || buf[n - 1] != '\n')
		return false;
	memcpy(line, buf, n);
	line[n] = '\0';
	sp = strrchr(line, ' ');
	if (sp == NULL || sscanf(line, "stamp %llu %llx %llu %lld.%9ld %n", &gen, &dev, &ino,
	    &sec, &nsec, &used) != 5 || line + used != sp + 1 ||
	    sscanf(sp + 1, "%16llx", &check) != 1 || strlen(sp + 1) != 17 ||
	    check != state_hash(line, (size_t)(sp + 1 - line)) || nsec < 0 || nsec > 999999999)
		return false;
	*s = (struct state_stamp){ gen, dev, ino, sec, nsec };
	return true;
}

bool
state_stamp_check(const struct state_stamp *s, uint64_t gen, uint64_t dev, uint64_t ino,
    int64_t ctime_sec, long ctime_nsec, uint64_t slack_ms, char *why, size_t whylen)
{
	int64_t after_ns;

	if (s->gen == 0)
		return check_fail(why, whylen, "its newest record carries no write stamp "
		    "(written by an older idserver, or a record too long to leave room for "
		    "one)");
	if (s->gen != gen)
		return check_fail(why, whylen, "its newest record (save %" PRIu64 ") is not what "
		    "the stamp names (save %" PRIu64 "): a damaged or hand-made file", gen,
		    s->gen);
	if (s->dev != dev || s->ino != ino)
		return check_fail(why, whylen, "it is a copy: written to inode %" PRIu64 " on "
		    "device %" PRIx64 ", this file is inode %" PRIu64 " on device %" PRIx64 " (cp, "
		    "rsync, tar, a copied volume)", s->ino, s->dev, ino, dev);
	after_ns = (ctime_sec - s->sec) * 1000000000 + (ctime_nsec - s->nsec);
	if (after_ns < 0 || (uint64_t)after_ns > slack_ms * 1000000)
		return check_fail(why, whylen, "the file changed after its last write (ctime "
		    "%+" PRId64 " ms from that write: older contents put back, an edit, a link or "
		    "a rename)", after_ns / 1000000);
	return true;
}

/* (ns, server)'s mark, or NULL; a scan, as a record holds at most NS_MARKS_MAX. */
static struct state_ns_mark *
state_ns_find(const struct state_ns *r, const char *ns, unsigned server)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->m[i].server == server && strcmp(r->m[i].ns, ns) == 0)
			return &r->m[i];
	return NULL;
}

const struct state_ns_mark *
state_ns_get(const struct state_ns *r, const char *ns, unsigned server)
{
	return ns == NULL ? NULL : state_ns_find(r, ns, server);
}

uint64_t
state_ns_end(const struct state_ns_mark *m)
{
	return layout_ticket_end(m->high_water, m->block_size);
}

/*
 * Raises a namespace mark in ID space, as state_raise_mark does for the
 * default sequence (docs/design.md section 6.2.1): a mark under another B
 * replaces the old one only when it covers more IDs.
 */
bool
state_ns_raise(struct state_ns *r, const char *ns, unsigned server, uint64_t high_water,
    uint64_t block_size, bool *changed)
{
	struct state_ns_mark want, *m;

	*changed = false;
	if (ns == NULL || !ns_name_ok(ns, strnlen(ns, NS_NAME_MAX + 1)) || server >= server_count() || block_size == 0)
		return false;
	if (high_water == 0)
		return true;	/* no ticket is 0: nothing to cover */
	memset(&want, 0, sizeof(want));
	snprintf(want.ns, sizeof(want.ns), "%s", ns);
	want.server = server;
	want.high_water = high_water;
	want.block_size = block_size;
	if ((m = state_ns_find(r, ns, server)) == NULL) {
		/* Full: refusing the ticket beats banking a block no file remembers. */
		if (r->n >= r->cap || r->n >= NS_MARKS_MAX)
			return false;
		r->m[r->n++] = want;
		*changed = true;
	} else if (state_ns_end(&want) > state_ns_end(m)) {
		m->high_water = high_water;
		m->block_size = block_size;
		*changed = true;
	}
	return true;
}

/* The version and gen lines. */
static bool
state_ns_parse_head(const char **p, const char *end, uint64_t *gen, char *why, size_t whylen)
{
	uint64_t version;
	char w[16];

	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "idgen-ns") != 0 ||
	    !state_u64(p, end, &version) || !state_line_end(p, end))
		return check_fail(why, whylen, "not an idgen namespace marks record");
	if (version != STATE_NS_VERSION)
		return check_fail(why, whylen, "namespace marks record version %" PRIu64 ", this "
		    "build reads %d", version, STATE_NS_VERSION);
	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, "gen") != 0 ||
	    !state_u64(p, end, gen) || !state_line_end(p, end))
		return check_fail(why, whylen, "malformed near line 2");
	return true;
}

/*
 * One namespace mark line into r: "nsmark" of idgen-ns 1, or a version 3
 * "mark" with its uuid, always "-" (uuid); a well-formed name of a server not
 * configured now is skipped. r NULL: checked, not kept.
 */
static bool
state_ns_parse_mark(const char **p, const char *end, bool uuid, struct state_ns *r, char *why,
    size_t whylen)
{
	struct state_ns_mark m;
	char w[NS_NAME_MAX + 2], name[STATE_NS_SERVER_NAME_MAX + 2], u[4];
	const char *what;

	memset(&m, 0, sizeof(m));
	if (!state_word(p, end, w, sizeof(w)) || strcmp(w, uuid ? "mark" : "nsmark") != 0)
		what = "malformed";
	else if (!state_word(p, end, w, sizeof(w)) || !ns_name_ok(w, strlen(w)))
		what = "bad namespace name";
	else if (!state_word(p, end, name, sizeof(name)) || (!server_by_name(name, &m.server) &&
	    !server_name_shaped(name)))
		what = "unknown server name";
	else if (!state_u64(p, end, &m.high_water) || !state_u64(p, end, &m.block_size) ||
	    (uuid && (!state_word(p, end, u, sizeof(u)) || strcmp(u, "-") != 0)) ||
	    !state_line_end(p, end))
		what = "bad numbers";
	else if (m.high_water == 0 || m.block_size == 0)
		what = "a zero mark";
	else if (!server_by_name(name, &m.server) || r == NULL)
		return true;	/* a server no longer configured keeps its own marks */
	else if (state_ns_find(r, w, m.server) != NULL)
		what = "a second mark of one namespace and server";
	else if (r->n >= r->cap || r->n >= NS_MARKS_MAX)
		what = "too many marks";
	else {
		memcpy(m.ns, w, strlen(w) + 1);	/* at most NS_NAME_MAX: name_ok */
		r->m[r->n++] = m;
		return true;
	}
	return check_fail(why, whylen, "%s", what);
}

/* Parses and verifies a namespace marks record; any deviation is corruption. */
bool
state_ns_parse(const char *buf, size_t len, struct state_ns *r, uint64_t *gen, char *why,
    size_t whylen)
{
	const char *p = buf, *end = NULL;	/* set by state_check */
	char what[64];

	r->n = 0;
	*gen = 0;
	if (!state_check(buf, len, &end, why, whylen) ||
	    !state_ns_parse_head(&p, end, gen, why, whylen))
		return false;
	while (p < end) {
		const char *line = p;

		if (!state_ns_parse_mark(&p, end, false, r, what, sizeof(what))) {
			snprintf(why, whylen, "%s on line %d", what, state_line_of(buf, line));
			if (strcmp(what, "too many marks") == 0)
				snprintf(why, whylen, "more than %u namespace marks (line %d)",
				    r->cap < NS_MARKS_MAX ? r->cap : NS_MARKS_MAX,
				    state_line_of(buf, line));
			r->n = 0;
			*gen = 0;
			return false;
		}
	}
	return true;
}
