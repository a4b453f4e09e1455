/*
 * auth.c - tokens: the file's grammar, its hashed table (mapped apart so it
 * stays out of core dumps), sessions and the per-address failure counter.
 */
#include "auth.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "check.h"

static bool	auth_load(const char *path, bool strict, struct auth_token **tok, size_t *n,
		    size_t *nro, unsigned *bad, size_t *maplen, char *err, size_t errlen);
static bool	auth_read(FILE *f, struct auth_token *tok, size_t *n, size_t *nro,
		    unsigned *bad, char *err, size_t errlen);
static void	auth_note_line(char *list, size_t len, unsigned lineno);
static struct auth_token *auth_map(size_t *maplen);
static void	auth_unmap(struct auth_token *tok, size_t maplen);
static bool	auth_token_char(char c);
static bool	auth_flags(const char *p, size_t len, struct auth_token *t, char *err,
		    size_t errlen);
static unsigned	auth_slot(int fd);

/* Letters, digits, '.', '_', '-': a name is shown in logs, so it is plain. */
bool
auth_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '-';
}

/* Printable ASCII but ':' (the separator): a token travels in HTTP headers. */
static bool
auth_token_char(char c)
{
	return c > ' ' && c <= '~' && c != ':';
}

/* "ro" or "rw" (the last one given wins) and ns=NAME, separated by commas. */
static bool
auth_flags(const char *p, size_t len, struct auth_token *t, char *err, size_t errlen)
{
	enum auth_perm *perm = &t->perm;
	size_t i = 0, start;

	while (i <= len) {
		start = i;
		while (i < len && p[i] != ',')
			i++;
		if (i - start == 2 && strncasecmp(p + start, "ro", 2) == 0)
			*perm = AUTH_PERM_RO;
		else if (i - start == 2 && strncasecmp(p + start, "rw", 2) == 0)
			*perm = AUTH_PERM_ALL;
		else if (i - start > 3 && strncasecmp(p + start, "ns=", 3) == 0) {
			size_t n = i - start - 3;

			if (!ns_name_ok(p + start + 3, n))
				return check_fail(err, errlen, "ns=NAME: a namespace is 1..%d "
				    "letters, digits or '_'", AUTH_NS_NAME_MAX);
			if (t->nns == AUTH_NS_MAX)
				return check_fail(err, errlen, "at most %d ns= flags",
				    AUTH_NS_MAX);
			memcpy(t->ns[t->nns++], p + start + 3, n);
		} else {
			return check_fail(err, errlen, "unknown flag "
			    "(expected ro, rw or ns=NAME)");
		}
		i++;
	}
	return true;
}

bool
auth_parse_line(const char *line, size_t len, struct auth_token *t, bool *skip, char *err,
    size_t errlen)
{
	const char *field[3] = { NULL, NULL, NULL };
	size_t flen[3] = { 0, 0, 0 }, nf = 0, i = 0, start;

	memset(t, 0, sizeof(*t));
	t->perm = AUTH_PERM_ALL;
	*skip = false;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len || line[i] == '#') {
		*skip = true;
		return true;
	}
	while (i <= len) {
		if (nf == 3)
			return check_fail(err, errlen, "too many fields "
			    "(name:token:flags at most)");
		start = i;
		while (i < len && line[i] != ':')
			i++;
		field[nf] = line + start;
		flen[nf++] = i - start;
		i++;
	}
	/* One field is the token; two or three: name, token, flags. */
	{
		const char *tok = nf == 1 ? field[0] : field[1];
		size_t toklen = nf == 1 ? flen[0] : flen[1];

		if (nf > 1) {
			if (flen[0] == 0 || flen[0] > AUTH_NAME_MAX)
				return check_fail(err, errlen, "a name is 1..%d characters",
				    AUTH_NAME_MAX);
			for (i = 0; i < flen[0]; i++)
				if (!auth_name_char(field[0][i]))
					return check_fail(err, errlen, "a name is letters, "
					    "digits, '.', '_', '-'");
			memcpy(t->name, field[0], flen[0]);
		}
		if (toklen < AUTH_TOKEN_MIN || toklen > AUTH_TOKEN_MAX)
			return check_fail(err, errlen, "a token is %d..%d characters",
			    AUTH_TOKEN_MIN, AUTH_TOKEN_MAX);
		for (i = 0; i < toklen; i++)
			if (!auth_token_char(tok[i]))
				return check_fail(err, errlen, "a token is printable ASCII "
				    "without spaces or ':'");
		if (nf == 3 && !auth_flags(field[2], flen[2], t, err, errlen))
			return false;
		auth_hash(tok, toklen, t->hash);
	}
	return true;
}

bool
auth_bearer(const char *value, size_t len, const char **tok, size_t *toklen)
{
	size_t i = 6;

	if (value == NULL || len < 8 || strncasecmp(value, "Bearer", 6) != 0 ||
	    (value[6] != ' ' && value[6] != '\t'))
		return false;
	while (i < len && (value[i] == ' ' || value[i] == '\t'))
		i++;
	while (len > i && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (i == len || len - i > AUTH_TOKEN_MAX)
		return false;
	*tok = value + i;
	*toklen = len - i;
	return true;
}

bool
auth_basic(const char *value, size_t len, char buf[AUTH_BASIC_MAX], const char **user,
    size_t *userlen, const char **tok, size_t *toklen)
{
	size_t i = 5, n, pad = 0;
	const char *colon;
	int got;

	if (value == NULL || len < 7 || strncasecmp(value, "Basic", 5) != 0 ||
	    (value[5] != ' ' && value[5] != '\t'))
		return false;
	while (i < len && (value[i] == ' ' || value[i] == '\t'))
		i++;
	while (len > i && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	n = len - i;
	/* OpenSSL's decoder (libcrypto is linked for the hashes): whole quanta only. */
	if (n == 0 || n % 4 != 0 || n / 4 * 3 > AUTH_BASIC_MAX)
		return false;
	pad = (value[len - 1] == '=') + (value[len - 2] == '=');
	got = EVP_DecodeBlock((unsigned char *)buf, (const unsigned char *)value + i, (int)n);
	if (got < 0 || (size_t)got < pad)
		return false;
	got -= (int)pad;	/* EVP_DecodeBlock counts the padding's zero bytes */
	if ((colon = memchr(buf, ':', (size_t)got)) == NULL)
		return false;
	*user = buf;
	*userlen = (size_t)(colon - buf);
	*tok = colon + 1;
	*toklen = (size_t)got - *userlen - 1;
	return *toklen > 0 && *toklen <= AUTH_TOKEN_MAX;
}

void
auth_hash(const char *tok, size_t len, uint8_t out[AUTH_HASH_LEN])
{
	unsigned outlen = AUTH_HASH_LEN;

	if (EVP_Digest(tok, len, out, &outlen, EVP_sha256(), NULL) != 1)
		memset(out, 0xff, AUTH_HASH_LEN);	/* matches no token: refused */
}

/* Room for AUTH_TOKENS_MAX tokens, in pages of their own left out of core dumps. */
static struct auth_token *
auth_map(size_t *maplen)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = AUTH_TOKENS_MAX * sizeof(struct auth_token);
	void *p;

	if (page > 0)
		len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_DONTDUMP);
	*maplen = len;
	return p;
}

static void
auth_unmap(struct auth_token *tok, size_t maplen)
{
	if (tok == NULL)
		return;
	explicit_bzero(tok, maplen);
	munmap(tok, maplen);
}

/* Appends line number lineno to list (", "-separated), or "..." once it is full. */
static void
auth_note_line(char *list, size_t len, unsigned lineno)
{
	size_t used = strlen(list);

	if (used + 16 >= len) {
		if (used + 4 < len && (used < 3 || strcmp(list + used - 3, "...") != 0))
			snprintf(list + used, len - used, "...");
		return;
	}
	snprintf(list + used, len - used, "%s%u", used > 0 ? ", " : "", lineno);
}

/*
 * Every line of f that parses into tok. A line that does not (malformed, too
 * long, past AUTH_TOKENS_MAX) is dropped, and both lines of a token given
 * twice: a bad line never grants anything, nor keeps a token that was
 * removed. *bad counts them; err names the first and lists their numbers
 * (never their text). False only when f cannot be read.
 */
static bool
auth_read(FILE *f, struct auth_token *tok, size_t *n, size_t *nro, unsigned *bad, char *err,
    size_t errlen)
{
	char line[AUTH_LINE_MAX + 2], why[96], first[128] = "", lines[64] = "";
	struct auth_token cur;
	bool *twice = calloc(AUTH_TOKENS_MAX, sizeof(*twice));
	unsigned lineno = 0;
	bool skip, dup, ok = true;
	size_t len, k, j;
	int ch;

	*n = *nro = 0;
	*bad = 0;
	if (twice == NULL)
		return check_fail(err, errlen, "out of memory");
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		len = strlen(line);
		why[0] = '\0';
		if (len > 0 && line[len - 1] == '\n')
			len--;
		else if (!feof(f)) {
			snprintf(why, sizeof(why), "longer than %d bytes", AUTH_LINE_MAX);
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
		}
		if (why[0] == '\0' && auth_parse_line(line, len, &cur, &skip, why, sizeof(why)) &&
		    !skip) {
			dup = false;
			for (k = 0; k < *n; k++)
				if (CRYPTO_memcmp(tok[k].hash, cur.hash, AUTH_HASH_LEN) == 0) {
					twice[k] = dup = true;
					snprintf(why, sizeof(why), "the same token as line %u (both "
					    "left out)", tok[k].line);
				}
			if (!dup && *n == AUTH_TOKENS_MAX)
				snprintf(why, sizeof(why), "more than %d tokens", AUTH_TOKENS_MAX);
			else if (!dup) {
				cur.line = lineno;
				tok[(*n)++] = cur;
			}
		}
		if (why[0] != '\0') {
			if (++*bad == 1)
				snprintf(first, sizeof(first), "line %u: %s", lineno, why);
			auth_note_line(lines, sizeof(lines), lineno);
		}
	}
	explicit_bzero(&cur, sizeof(cur));
	explicit_bzero(line, sizeof(line));
	if (ferror(f)) {
		snprintf(err, errlen, "%s", strerror(errno));
		ok = false;
	}
	/* The tokens given twice leave the table; what stays is counted. */
	for (k = j = 0; ok && k < *n; k++) {
		if (twice[k])
			continue;
		if (j != k)
			tok[j] = tok[k];
		*nro += tok[j].perm == AUTH_PERM_RO;
		j++;
	}
	if (ok && j < *n)
		explicit_bzero(&tok[j], (*n - j) * sizeof(*tok));
	if (ok)
		*n = j;
	free(twice);
	if (ok && *bad > 0)
		snprintf(err, errlen, "%s (bad line%s: %s)", first, *bad == 1 ? "" : "s", lines);
	return ok;
}

/*
 * Reads path into a new table; false with err when it cannot be read, or
 * with *bad lines when strict. Not strict, the lines that parse make the
 * table and err says which were dropped.
 */
static bool
auth_load(const char *path, bool strict, struct auth_token **tok, size_t *n, size_t *nro,
    unsigned *bad, size_t *maplen, char *err, size_t errlen)
{
	char why[256] = "", iobuf[4096];
	struct stat st;
	FILE *f;
	bool ok;

	*tok = NULL;
	*bad = 0;
	err[0] = '\0';
	if (stat(path, &st) != 0)
		return check_fail(err, errlen, "auth_tokens_file: cannot read '%s': %s", path,
		    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return check_fail(err, errlen, "auth_tokens_file: '%s' is not a regular file",
		    path);
	if ((f = fopen(path, "r")) == NULL)
		return check_fail(err, errlen, "auth_tokens_file: cannot read '%s': %s", path,
		    strerror(errno));
	/* stdio's buffer is ours, so the file's bytes are wiped after reading too. */
	setvbuf(f, iobuf, _IOFBF, sizeof(iobuf));
	if ((*tok = auth_map(maplen)) == NULL) {
		fclose(f);
		return check_fail(err, errlen, "auth_tokens_file: out of memory");
	}
	ok = auth_read(f, *tok, n, nro, bad, why, sizeof(why));
	fclose(f);
	explicit_bzero(iobuf, sizeof(iobuf));
	if (!ok || *bad > 0)
		snprintf(err, errlen, "auth_tokens_file '%s': %s", path, why);
	if (!ok || (strict && *bad > 0)) {
		auth_unmap(*tok, *maplen);
		*tok = NULL;
		return false;
	}
	return true;
}

bool
auth_init(struct auth *a, const char *path, unsigned fail_delay_ms, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->fail_delay_ms = fail_delay_ms;
	if ((a->path = strdup(path)) == NULL)
		return check_fail(err, errlen, "out of memory");
	/* At start every line must parse: nothing has been served yet. */
	if (!auth_load(path, true, &a->tok, &a->n, &a->nro, &a->bad, &a->maplen, err, errlen))
		return false;
	a->gen = 1;
	a->clean = true;
	return true;
}

bool
auth_reload(struct auth *a, char *err, size_t errlen)
{
	struct auth_token *tok;
	size_t n, nro, maplen;
	unsigned bad;

	a->stats.reloads++;
	if (!auth_load(a->path, false, &tok, &n, &nro, &bad, &maplen, err, errlen)) {
		a->stats.reload_failures++;
		a->stats.reload_errors++;
		a->clean = false;
		snprintf(a->why, sizeof(a->why), "%s; the previous tokens stay", err);
		return false;
	}
	auth_unmap(a->tok, a->maplen);
	a->tok = tok;
	a->n = n;
	a->nro = nro;
	a->bad = bad;
	a->maplen = maplen;
	a->clean = bad == 0;
	if (bad > 0)
		a->stats.reload_errors++;
	snprintf(a->why, sizeof(a->why), "%s", bad > 0 ? err : "");
	/* Never 0, which a session that was never decided holds. */
	if (++a->gen == 0)
		a->gen = 1;
	return true;
}

void
auth_free(struct auth *a)
{
	auth_unmap(a->tok, a->maplen);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

const struct auth_token *
auth_find(const struct auth *a, const uint8_t hash[AUTH_HASH_LEN])
{
	const struct auth_token *found = NULL;
	size_t k;

	/* Every entry compared, the match or not: the time says nothing of which. */
	for (k = 0; k < a->n; k++)
		if (CRYPTO_memcmp(a->tok[k].hash, hash, AUTH_HASH_LEN) == 0)
			found = &a->tok[k];
	return found;
}

void
auth_sess_init(struct auth_sess *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
}

void
auth_sess_present(struct auth_sess *s, const char *tok, size_t len, const char *user,
    size_t userlen, const struct auth *a)
{
	const struct auth_token *t;

	auth_hash(tok, len, s->pending);
	s->presented = true;
	s->user_bad = false;
	/*
	 * User "default" is the password alone, as in Redis (ioredis, redis-cli
	 * --user default): any token. Another name must be the token's own.
	 */
	if (user == NULL || (userlen == 7 && strncasecmp(user, "default", 7) == 0))
		return;
	t = auth_find(a, s->pending);
	if (t != NULL)
		s->user_bad = t->name[0] == '\0' || strlen(t->name) != userlen ||
		    memcmp(t->name, user, userlen) != 0;
}

enum auth_perm
auth_refresh(const struct auth *a, struct auth_sess *s)
{
	const struct auth_token *t = s->has ? auth_find(a, s->hash) : NULL;

	s->gen = a->gen;
	s->perm = t != NULL ? t->perm : AUTH_PERM_NONE;
	s->tok = t;
	if (t == NULL && s->has) {
		explicit_bzero(s->hash, sizeof(s->hash));
		s->has = false;		/* revoked: the connection must AUTH again */
	}
	return s->perm;
}

/* The failure slot of fd's peer: its IPv4 address, or an IPv6 address's /64. */
static unsigned
auth_slot(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const uint8_t *p = NULL;
	uint32_t h = 2166136261u;	/* FNV-1a */
	size_t n = 0, i;

	if (fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			p = (const uint8_t *)&((struct sockaddr_in *)&ss)->sin_addr;
			n = 4;
		} else if (ss.ss_family == AF_INET6) {
			p = (const uint8_t *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
			n = 8;
		}
	}
	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h % AUTH_FAIL_SLOTS;
}

unsigned
auth_fail_note(struct auth *a, int fd, int64_t now_ms)
{
	struct auth_fail *f = &a->fail[auth_slot(fd)];

	if (now_ms - f->last_ms > AUTH_FAIL_FORGET_MS)
		f->count = 0;
	if (f->count < UINT32_MAX)
		f->count++;
	f->last_ms = now_ms;
	return f->count > AUTH_FAIL_FREE ? a->fail_delay_ms : 0;
}

bool
auth_fail_slow(const struct auth *a, int fd, int64_t now_ms)
{
	const struct auth_fail *f = &a->fail[auth_slot(fd)];

	return now_ms - f->last_ms <= AUTH_FAIL_FORGET_MS && f->count >= AUTH_FAIL_FREE;
}

bool
auth_ns_allowed(const struct auth_sess *s, const char *name, size_t len)
{
	const struct auth_token *t = s->tok;

	if (t == NULL || t->nns == 0)
		return true;
	for (unsigned k = 0; k < t->nns; k++)
		if (strlen(t->ns[k]) == len && memcmp(t->ns[k], name, len) == 0)
			return true;
	return false;
}
