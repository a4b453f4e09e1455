/*
 * idbench.c - load generator and uniqueness checker for idgen (and Redis).
 *
 * N connections, P requests outstanding on each, spread over T threads with
 * one epoll loop each.  Closed loop by default (a request goes out as soon as
 * a slot frees); with --rate, open loop: requests have fixed intended send
 * times and latency counts from those, so a stalled server cannot hide its
 * queue.
 *
 * Every ID received is checked without storing each one.  A connection
 * coalesces consecutive IDs into a running range; a range that breaks goes
 * into its thread's array, which is radix-sorted and unioned whenever it
 * doubles; at the end the threads' arrays are unioned once more.
 * duplicates = IDs received - distinct IDs.
 *
 * Replies are parsed with libidgen's parser (lib/reply.h); time is read with
 * common/clk.h.
 *
 * Output: one human line and one "RESULT key=value ..." line.  Exit 0 only
 * for a run with no duplicate, no protocol violation and no error (unless
 * --allow-errors).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clk.h"
#include "reply.h"

#define IDB_ID_MAX		UINT64_C(0x7fffffffffffffff)	/* 2^63 - 1 */
#define IDB_NS			UINT64_C(1000000000)
#define IDB_MS			UINT64_C(1000000)
#define IDB_REQ_MAX		64	/* longest request idbench formats */
#define IDB_ID_CHARS		21	/* " 9223372036854775807" */
#define IDB_IDS_MAX		1000	/* protocol limit of IDS n */
#define IDB_BLOCK_MAX		4096	/* protocol limit of BLOCK n */
#define IDB_LINE_MIN		4096	/* input room for any ERR line */
#define IDB_IN_MAX		(256 * 1024)
#define IDB_EVENTS		256
#define IDB_READS_PER_EVENT	8	/* fairness between connections */
#define IDB_WRITES_PER_EVENT	8
#define IDB_TICK_NS		(10 * IDB_MS)	/* timeouts and reconnects */
#define IDB_WAIT_MAX_NS		(50 * IDB_MS)	/* longest epoll sleep */
#define IDB_BACKOFF_MIN_MS	10
#define IDB_BACKOFF_MAX_MS	1000
#define IDB_LOG_MAX		5	/* messages per thread, then quiet */
#define IDB_COMPACT_MIN		((size_t)1 << 20)
#define IDB_DUMP_CAP		(64 * 1024)
#define IDB_DUMP_LINE		48	/* "<20 digits> <20 digits>\n" */
#define IDB_DUP_EXAMPLES	4
#define IDB_RESP_KEY		"idbench:ctr"

/* Log-linear latency histogram in ns: 2^HIST_SUB_BITS buckets per power of two. */
#define HIST_SUB_BITS		8
#define HIST_SUB		(1u << HIST_SUB_BITS)
#define HIST_HALF		(HIST_SUB / 2)
#define HIST_BUCKETS		(HIST_SUB + (64 - HIST_SUB_BITS) * HIST_HALF)

#define IDB_WUR			__attribute__((warn_unused_result))

enum idb_proto {
	PROTO_TEXT,
	PROTO_RESP,
};

enum idb_cmd {
	CMD_ID,
	CMD_IDS,
	CMD_BLOCK,
	CMD_MIX,
	CMD_NULL,
	CMD_INCR,
	CMD_INCRBY,
	CMD_RESP_ID,
};

/* What one outstanding request expects back. */
enum idb_kind {
	KIND_ID,
	KIND_IDS,
	KIND_BLOCK,
	KIND_INCR,
	KIND_INCRBY,
};

/* Error classes; the fixed ones always appear in RESULT, server codes are added. */
enum idb_ec {
	EC_CONN,
	EC_TIMEOUT,
	EC_PROTO,	/* violation: malformed or unexpected reply */
	EC_BADID,	/* violation: ID out of range, not ascending, wrong count */
	EC_BADREQ,
	EC_RANGE,
	EC_UNAVAILABLE,
	EC_CLOCK,
	EC_OTHER,
	EC_FIXED
};
#define EC_MAX			32
#define EC_NAME_MAX		24

enum idb_state {
	CONN_DOWN,
	CONN_CONNECTING,
	CONN_UP,
};

struct idb_config {
	const char	*host;
	const char	*port;
	enum idb_proto	 proto;
	enum idb_cmd	 cmd;
	const char	*cmd_text;
	enum idb_kind	 kind;		/* for every command but MIX */
	uint32_t	 n;
	char		 req[IDB_REQ_MAX];
	size_t		 req_len;
	uint32_t	 conns;
	uint32_t	 pipeline;
	uint32_t	 threads;
	double		 duration;	/* seconds; 0: none */
	uint64_t	 requests;	/* 0: none */
	double		 rate;		/* requests/s; 0: closed loop */
	long		 server_pid;
	const char	*dump;
	const char	*latency_out;
	char		 label[64];
	bool		 allow_errors;
	bool		 verify;	/* duplicate check */
	bool		 track;		/* coalesce ranges: verify or dump */
	uint64_t	 seed;
	double		 reply_timeout;
	double		 max_time;
	size_t		 incap;
};

struct idb_hist {
	uint64_t	 counts[HIST_BUCKETS];
	uint64_t	 total;
	uint64_t	 max;
};

struct idb_range {
	uint64_t	 lo;
	uint64_t	 hi;
};

/* Ranges of IDs seen; [0, sorted) is sorted by lo and disjoint. */
struct idb_ranges {
	struct idb_range *r;
	struct idb_range *scratch;
	size_t		 n;
	size_t		 cap;
	size_t		 sorted;
	size_t		 compact_at;
	uint64_t	 ids;		/* IDs added, counting repeats */
	uint64_t	 dups[IDB_DUP_EXAMPLES];
	unsigned	 ndups;
};

struct idb_stats {
	uint64_t	 ok;		/* successful replies */
	uint64_t	 ids;
	uint64_t	 sent;
	uint64_t	 lost;		/* outstanding on a failed connection */
	uint64_t	 unsent;	/* open loop: due but never sent */
	uint64_t	 err[EC_MAX];
	uint64_t	 end_ns;
	struct idb_hist	 h;
};

struct idb_slot {
	uint64_t	 t;		/* send time, or intended send time */
	uint32_t	 n;
	uint32_t	 kind;
};

struct idb_worker;

struct idb_conn {
	struct idb_worker *w;
	int		 fd;
	enum idb_state	 state;
	uint32_t	 events;	/* current epoll interest */
	uint32_t	 gidx;		/* index over all threads */
	char		*in;
	size_t		 inlen;
	char		*out;
	size_t		 outoff;
	size_t		 outlen;
	struct idb_slot	*fifo;		/* cfg.pipeline entries */
	uint32_t	 head;
	uint32_t	 count;		/* outstanding requests */
	bool		 run_open;	/* [run_lo, run_hi] not yet in ranges */
	uint64_t	 run_lo;
	uint64_t	 run_hi;
	uint64_t	 rng;
	uint64_t	 since;		/* connect start or last progress */
	uint64_t	 retry_at;	/* reconnect time when down; 0: never */
	uint32_t	 backoff_ms;
};

struct idb_worker {
	pthread_t	 thread;
	unsigned	 idx;
	int		 epfd;
	bool		 pwait2;	/* epoll_pwait2 works here */
	struct idb_conn	*conns;
	unsigned	 nconns;
	unsigned	 cursor;	/* open loop: next connection to fill */
	uint64_t	 budget;	/* requests this thread may send */
	double		 interval_ns;	/* open loop; 0: closed loop */
	double		 phase;		/* offset of this thread's schedule */
	uint64_t	 t0;
	uint64_t	 stop_at;	/* stop issuing */
	uint64_t	 hard_stop;	/* stop waiting, whatever is outstanding */
	uint64_t	 issue_end;
	uint64_t	 next_tick;
	bool		 issuing;
	uint64_t	 outstanding;
	unsigned	 logged;
	struct idb_stats st;
	struct idb_ranges rs;
	char		*dump;
	size_t		 dumplen;
};

struct idb_cmdinfo {
	const char	*name;
	enum idb_cmd	 cmd;
	enum idb_proto	 proto;
	long long	 nmin;		/* argument bounds; nmax 0: no argument */
	long long	 nmax;
};

static size_t	idb_fmt_u64(char *, uint64_t);
static uint64_t	idb_rand(uint64_t *);
static void	idb_sanitize(char *, size_t, const char *, size_t);
static void	idb_fatal(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));
static unsigned	ec_lookup(const char *, size_t);
static bool	ec_is_violation(unsigned);
static unsigned	hist_index(uint64_t);
static uint64_t	hist_high(unsigned);
static void	hist_add(struct idb_hist *, uint64_t);
static void	hist_merge(struct idb_hist *, const struct idb_hist *);
static uint64_t	hist_percentile(const struct idb_hist *, double);
static bool	hist_write(const struct idb_hist *, const char *) IDB_WUR;
static void	ranges_sort(struct idb_range *, struct idb_range *, size_t);
static void	ranges_emit(struct idb_ranges *, struct idb_range *, size_t *,
		    const struct idb_range *);
static void	ranges_compact(struct idb_ranges *);
static void	ranges_reserve(struct idb_ranges *, size_t);
static void	ranges_add(struct idb_worker *, uint64_t, uint64_t);
static uint64_t	ranges_distinct(const struct idb_ranges *);
static void	dump_range(struct idb_worker *, uint64_t, uint64_t);
static void	dump_flush(struct idb_worker *);
static void	worker_log(struct idb_worker *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static uint64_t	worker_intended(const struct idb_worker *, uint64_t);
static void	conn_want(struct idb_conn *, uint32_t);
static void	conn_close(struct idb_conn *);
static void	conn_fail(struct idb_conn *, unsigned, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	conn_connect(struct idb_conn *);
static void	conn_connected(struct idb_conn *);
static void	conn_track(struct idb_conn *, uint64_t, uint64_t);
static void	conn_flush_run(struct idb_conn *);
static void	conn_push(struct idb_conn *, uint64_t);
static void	conn_fill(struct idb_conn *, uint64_t);
static void	conn_flush(struct idb_conn *);
static const char *conn_describe(const struct idb_slot *, char *, size_t);
static bool	conn_bad(struct idb_conn *, unsigned, const struct idb_slot *,
		    const char *, const char *, const char *) IDB_WUR;
static bool	conn_err_reply(struct idb_conn *, const char *, const char *,
		    const char *) IDB_WUR;
static bool	conn_ids(struct idb_conn *, const struct idb_slot *,
		    const char *, const char *, uint64_t *) IDB_WUR;
static bool	conn_text_reply(struct idb_conn *, const struct idb_slot *,
		    const char *, const char *, uint64_t) IDB_WUR;
static bool	conn_resp_reply(struct idb_conn *, const struct idb_slot *,
		    const char *, const char *, uint64_t) IDB_WUR;
static bool	conn_parse(struct idb_conn *, uint64_t) IDB_WUR;
static void	conn_read(struct idb_conn *);
static void	conn_event(struct idb_conn *, uint32_t);
static int	worker_wait(struct idb_worker *, struct epoll_event *,
		    uint64_t);
static void	worker_fill_all(struct idb_worker *, uint64_t);
static void	worker_tick(struct idb_worker *, uint64_t);
static void	worker_connect_all(struct idb_worker *);
static void	worker_loop(struct idb_worker *);
static void	worker_finish(struct idb_worker *);
static void	*worker_main(void *);
static int	opt_int(const char *, const char *, long long, long long,
		    long long *);
static int	opt_real(const char *, const char *, double, double, double *);
static void	opt_usage(FILE *);
static int	opt_command(const char *);
static void	opt_parse(int, char **);
static void	opt_resolve(void);
static bool	idb_proc_cpu(long, uint64_t *) IDB_WUR;
static uint64_t	idb_self_cpu(void);
static void	idb_on_signal(int);

static const struct idb_cmdinfo idb_cmds[] = {
	{ "ID",		CMD_ID,		PROTO_TEXT,	0, 0 },
	{ "IDS",	CMD_IDS,	PROTO_TEXT,	0, 1000000 },
	{ "BLOCK",	CMD_BLOCK,	PROTO_TEXT,	0, 1000000000 },
	{ "MIX",	CMD_MIX,	PROTO_TEXT,	0, 0 },
	{ "NULL",	CMD_NULL,	PROTO_TEXT,	0, 0 },
	{ "INCR",	CMD_INCR,	PROTO_RESP,	0, 0 },
	{ "INCRBY",	CMD_INCRBY,	PROTO_RESP,	1, 1000000000 },
	{ "ID",		CMD_RESP_ID,	PROTO_RESP,	0, 0 },	/* idserver over RESP */
};

static struct idb_config	 cfg = {
	.host = "127.0.0.1",
	.port = "4242",
	.conns = 1,
	.pipeline = 1,
	.threads = 1,
	.seed = 1,
	.verify = true,
	.reply_timeout = 10,
	.max_time = 600,
};
static struct sockaddr_storage	 idb_addr;
static socklen_t		 idb_addrlen;
static char			 idb_addrname[NI_MAXHOST + 32];
static int			 idb_dump_fd = -1;
static pthread_barrier_t	 idb_barrier;
static uint64_t			 idb_t0;
static atomic_bool		 idb_abort;	/* stop now, the run failed */
static atomic_int		 idb_stop;	/* stop issuing, drain (signal) */

static char		 ec_names[EC_MAX][EC_NAME_MAX] = {
	"CONN", "TIMEOUT", "PROTO", "BADID", "BADREQ", "RANGE", "UNAVAILABLE",
	"CLOCK", "OTHER"
};
static unsigned		 ec_count = EC_FIXED;
static pthread_mutex_t	 ec_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes v in decimal to dst (room for 20 bytes, no NUL); returns the length. */
static size_t
idb_fmt_u64(char *dst, uint64_t v)
{
	char	 tmp[20];
	size_t	 n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	return n;
}

/* splitmix64: a small, seedable, reproducible generator. */
static uint64_t
idb_rand(uint64_t *state)
{
	uint64_t	 z;

	z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Copies server bytes into dst for a log line, escaping anything unprintable. */
static void
idb_sanitize(char *dst, size_t dstlen, const char *src, size_t len)
{
	unsigned char	 ch;
	size_t		 i, o = 0;

	for (i = 0; i < len && o + 8 < dstlen; i++) {
		ch = (unsigned char)src[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '"')
			dst[o++] = (char)ch;
		else
			o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x", ch);
	}
	if (i < len)
		o += (size_t)snprintf(dst + o, dstlen - o, "...");
	dst[o] = '\0';
}

/* Prints a message and exits 1: for setup failures only. */
static void
idb_fatal(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "idbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Maps an error code to its class, registering new server codes as they come. */
static unsigned
ec_lookup(const char *code, size_t len)
{
	unsigned	 i;
	size_t		 k;

	for (i = 0; i < EC_FIXED; i++)
		if (strlen(ec_names[i]) == len &&
		    memcmp(ec_names[i], code, len) == 0)
			return i;
	if (len == 0 || len >= EC_NAME_MAX)
		return EC_OTHER;
	for (k = 0; k < len; k++)
		if (!isalnum((unsigned char)code[k]) && code[k] != '_')
			return EC_OTHER;
	pthread_mutex_lock(&ec_lock);
	for (i = EC_FIXED; i < ec_count; i++)
		if (strlen(ec_names[i]) == len &&
		    memcmp(ec_names[i], code, len) == 0)
			break;
	if (i == ec_count) {
		if (ec_count < EC_MAX) {
			memcpy(ec_names[i], code, len);
			ec_names[i][len] = '\0';
			ec_count++;
		} else
			i = EC_OTHER;
	}
	pthread_mutex_unlock(&ec_lock);
	return i;
}

/* Violations fail a run even with --allow-errors: the server broke its contract. */
static bool
ec_is_violation(unsigned ec)
{
	return ec == EC_PROTO || ec == EC_BADID;
}

/* Bucket of a value: exact below HIST_SUB, then HIST_HALF per power of two. */
static inline unsigned
hist_index(uint64_t v)
{
	unsigned	 e;

	if (v < HIST_SUB)
		return (unsigned)v;
	e = (unsigned)(63 - __builtin_clzll(v)) - (HIST_SUB_BITS - 1);
	return HIST_SUB + (e - 1) * HIST_HALF +
	    (unsigned)(v >> e) - HIST_HALF;
}

/* Highest value that lands in a bucket. */
static uint64_t
hist_high(unsigned i)
{
	unsigned	 e;
	uint64_t	 m;

	if (i < HIST_SUB)
		return i;
	e = (i - HIST_SUB) / HIST_HALF + 1;
	m = (i - HIST_SUB) % HIST_HALF + HIST_HALF;
	if (e + HIST_SUB_BITS > 63)
		return UINT64_MAX;
	return ((m + 1) << e) - 1;
}

/* Records one latency in ns. */
static inline void
hist_add(struct idb_hist *h, uint64_t v)
{
	h->counts[hist_index(v)]++;
	h->total++;
	if (v > h->max)
		h->max = v;
}

/* Adds src's counts into dst. */
static void
hist_merge(struct idb_hist *dst, const struct idb_hist *src)
{
	unsigned	 i;

	for (i = 0; i < HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	dst->total += src->total;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* The value at a percentile (0..100), as the highest value of its bucket. */
static uint64_t
hist_percentile(const struct idb_hist *h, double pct)
{
	uint64_t	 target, seen = 0, v;
	unsigned	 i;

	if (h->total == 0)
		return 0;
	target = (uint64_t)ceil(pct / 100.0 * (double)h->total);
	if (target < 1)
		target = 1;
	if (target > h->total)
		target = h->total;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= target) {
			v = hist_high(i);
			return v < h->max ? v : h->max;
		}
	}
	return h->max;
}

/* Writes "percentile latency_us" lines, denser towards the tail, for gnuplot. */
static bool
hist_write(const struct idb_hist *h, const char *path)
{
	FILE		*f;
	double		 p;
	unsigned	 k;

	if ((f = fopen(path, "w")) == NULL) {
		fprintf(stderr, "idbench: %s: %s\n", path, strerror(errno));
		return false;
	}
	fprintf(f, "# idbench latency distribution label=%s requests=%" PRIu64
	    "\n# percentile latency_us\n", cfg.label, h->total);
	/* Five points per halving of the remaining tail, as HdrHistogram prints. */
	for (k = 0; k < 64 * 5; k++) {
		p = 100.0 * (1.0 - pow(0.5, k / 5.0));
		if (k > 0 && (100.0 - p) / 100.0 * (double)h->total < 1.0)
			break;
		fprintf(f, "%.6f %.3f\n", p,
		    (double)hist_percentile(h, p) / 1000.0);
	}
	fprintf(f, "%.6f %.3f\n", 100.0, (double)h->max / 1000.0);
	if (fclose(f) != 0) {
		fprintf(stderr, "idbench: %s: %s\n", path, strerror(errno));
		return false;
	}
	return true;
}

/* LSD radix sort of a by lo (tmp holds n), skipping bytes all keys share. */
static void
ranges_sort(struct idb_range *a, struct idb_range *tmp, size_t n)
{
	size_t			 count[8][256];
	struct idb_range	*src = a, *dst = tmp, *t;
	size_t			 i, sum, c;
	unsigned		 b, shift;

	if (n < 2)
		return;
	memset(count, 0, sizeof count);
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			count[b][(a[i].lo >> (8 * b)) & 0xff]++;
	for (b = 0; b < 8; b++) {
		shift = 8 * b;
		if (count[b][(a[0].lo >> shift) & 0xff] == n)
			continue;
		for (sum = 0, i = 0; i < 256; i++) {
			c = count[b][i];
			count[b][i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[b][(src[i].lo >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

/* Appends r to the sorted union out[0..*k), noting IDs r shares with it. */
static inline void
ranges_emit(struct idb_ranges *rs, struct idb_range *out, size_t *k,
    const struct idb_range *r)
{
	struct idb_range	*last;

	if (*k > 0) {
		last = &out[*k - 1];
		if (r->lo <= last->hi + 1) {
			if (r->lo <= last->hi && rs->ndups < IDB_DUP_EXAMPLES)
				rs->dups[rs->ndups++] = r->lo;
			if (r->hi > last->hi)
				last->hi = r->hi;
			return;
		}
	}
	out[(*k)++] = *r;
}

/* Sorts the unsorted tail and merges it into the sorted prefix, as one union. */
static void
ranges_compact(struct idb_ranges *rs)
{
	struct idb_range	*t;
	size_t			 i = 0, j = rs->sorted, k = 0;

	if (rs->n == rs->sorted)
		return;
	ranges_sort(rs->r + rs->sorted, rs->scratch, rs->n - rs->sorted);
	while (i < rs->sorted || j < rs->n) {
		if (j == rs->n || (i < rs->sorted && rs->r[i].lo <= rs->r[j].lo))
			ranges_emit(rs, rs->scratch, &k, &rs->r[i++]);
		else
			ranges_emit(rs, rs->scratch, &k, &rs->r[j++]);
	}
	t = rs->r;
	rs->r = rs->scratch;
	rs->scratch = t;
	rs->n = rs->sorted = k;
}

/* Makes room for at least want ranges (the array and its equal-sized scratch). */
static void
ranges_reserve(struct idb_ranges *rs, size_t want)
{
	size_t	 cap = rs->cap != 0 ? rs->cap : 4096;

	while (cap < want)
		cap *= 2;
	if (cap == rs->cap)
		return;
	rs->r = realloc(rs->r, cap * sizeof *rs->r);
	free(rs->scratch);
	rs->scratch = malloc(cap * sizeof *rs->scratch);
	if (rs->r == NULL || rs->scratch == NULL)
		idb_fatal("out of memory for %zu ID ranges", cap);
	rs->cap = cap;
}

/* Stores a finished range (and dumps it); compacts when the array has doubled. */
static void
ranges_add(struct idb_worker *w, uint64_t lo, uint64_t hi)
{
	struct idb_ranges	*rs = &w->rs;

	if (idb_dump_fd != -1)
		dump_range(w, lo, hi);
	if (!cfg.verify)
		return;
	rs->ids += hi - lo + 1;
	if (rs->n == rs->cap) {
		if (rs->n >= rs->compact_at) {
			ranges_compact(rs);
			rs->compact_at = 2 * rs->n > IDB_COMPACT_MIN ?
			    2 * rs->n : IDB_COMPACT_MIN;
		}
		if (rs->n == rs->cap)
			ranges_reserve(rs, rs->cap + 1);
	}
	rs->r[rs->n].lo = lo;
	rs->r[rs->n].hi = hi;
	rs->n++;
}

/* Number of distinct IDs in a compacted set. */
static uint64_t
ranges_distinct(const struct idb_ranges *rs)
{
	uint64_t	 sum = 0;
	size_t		 i;

	for (i = 0; i < rs->n; i++)
		sum += rs->r[i].hi - rs->r[i].lo + 1;
	return sum;
}

/* Buffers one "first count" line of the dump file. */
static void
dump_range(struct idb_worker *w, uint64_t lo, uint64_t hi)
{
	char	*o;

	if (w->dumplen > IDB_DUMP_CAP - IDB_DUMP_LINE)
		dump_flush(w);
	o = w->dump + w->dumplen;
	o += idb_fmt_u64(o, lo);
	*o++ = ' ';
	o += idb_fmt_u64(o, hi - lo + 1);
	*o++ = '\n';
	w->dumplen = (size_t)(o - w->dump);
}

/* Appends the buffered dump lines; O_APPEND keeps threads' lines whole. */
static void
dump_flush(struct idb_worker *w)
{
	size_t	 off = 0;
	ssize_t	 n;

	while (off < w->dumplen) {
		n = write(idb_dump_fd, w->dump + off, w->dumplen - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "idbench: --dump %s: %s\n", cfg.dump,
			    n < 0 ? strerror(errno) : "short write");
			atomic_store(&idb_abort, true);
			break;
		}
		off += (size_t)n;
	}
	w->dumplen = 0;
}

/* Logs a line for this thread, going quiet after IDB_LOG_MAX of them. */
static void
worker_log(struct idb_worker *w, const char *fmt, ...)
{
	va_list	 ap;

	if (w->logged > IDB_LOG_MAX)
		return;
	if (w->logged++ == IDB_LOG_MAX) {
		fprintf(stderr, "idbench: thread %u: further messages "
		    "suppressed\n", w->idx);
		return;
	}
	fprintf(stderr, "idbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Open loop: when this thread's i-th request is meant to go out. */
static inline uint64_t
worker_intended(const struct idb_worker *w, uint64_t i)
{
	return w->t0 + (uint64_t)(((double)i + w->phase) * w->interval_ns);
}

/* Sets a connection's epoll interest if it changed. */
static void
conn_want(struct idb_conn *c, uint32_t events)
{
	struct epoll_event	 ev;

	if (c->events == events)
		return;
	ev.events = events;
	ev.data.ptr = c;
	if (epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = events;
}

/* Closes the socket; outstanding requests are lost, the open range is kept. */
static void
conn_close(struct idb_conn *c)
{
	struct idb_worker	*w = c->w;

	conn_flush_run(c);
	w->st.lost += c->count;
	w->outstanding -= c->count;
	c->count = c->head = 0;
	c->inlen = c->outoff = c->outlen = 0;
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	c->events = 0;
	c->state = CONN_DOWN;
	c->retry_at = 0;
}

/* Counts a failure and closes; reconnects later only with --allow-errors. */
static void
conn_fail(struct idb_conn *c, unsigned ec, const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->w->st.err[ec]++;
	worker_log(c->w, "connection %u: %s: %s", c->gidx, ec_names[ec], msg);
	conn_close(c);
	if (!cfg.allow_errors || ec_is_violation(ec)) {
		atomic_store(&idb_abort, true);
		return;
	}
	if (c->backoff_ms == 0)
		c->backoff_ms = IDB_BACKOFF_MIN_MS;
	else if ((c->backoff_ms *= 2) > IDB_BACKOFF_MAX_MS)
		c->backoff_ms = IDB_BACKOFF_MAX_MS;
	c->retry_at = clk_mono_ns() + c->backoff_ms * IDB_MS;
}

/* Starts a nonblocking connect. */
static void
conn_connect(struct idb_conn *c)
{
	struct epoll_event	 ev;
	int			 fd, on = 1;

	c->retry_at = 0;
	fd = socket(idb_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1) {
		conn_fail(c, EC_CONN, "socket: %s", strerror(errno));
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
	c->fd = fd;
	c->since = clk_mono_ns();
	if (connect(fd, (struct sockaddr *)&idb_addr, idb_addrlen) == 0) {
		c->state = CONN_UP;
		ev.events = EPOLLIN;
	} else if (errno == EINPROGRESS) {
		c->state = CONN_CONNECTING;
		ev.events = EPOLLOUT;
	} else {
		conn_fail(c, EC_CONN, "connect to %s: %s", idb_addrname,
		    strerror(errno));
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(c->w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		conn_fail(c, EC_CONN, "epoll_ctl: %s", strerror(errno));
		return;
	}
	c->events = ev.events;
	if (c->state == CONN_UP)
		conn_fill(c, clk_mono_ns());
}

/* Finishes a nonblocking connect and starts sending if the run is on. */
static void
conn_connected(struct idb_conn *c)
{
	socklen_t	 len = sizeof(int);
	int		 error = 0;

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
		error = errno;
	if (error != 0) {
		conn_fail(c, EC_CONN, "connect to %s: %s", idb_addrname,
		    strerror(error));
		return;
	}
	c->state = CONN_UP;
	conn_want(c, EPOLLIN);
	conn_fill(c, clk_mono_ns());
}

/* Adds [lo, hi] to the connection's running range, or starts a new one. */
static inline void
conn_track(struct idb_conn *c, uint64_t lo, uint64_t hi)
{
	if (c->run_open && lo == c->run_hi + 1) {
		c->run_hi = hi;
		return;
	}
	if (c->run_open)
		ranges_add(c->w, c->run_lo, c->run_hi);
	c->run_open = true;
	c->run_lo = lo;
	c->run_hi = hi;
}

/* Moves the running range into the thread's ranges. */
static void
conn_flush_run(struct idb_conn *c)
{
	if (!c->run_open)
		return;
	ranges_add(c->w, c->run_lo, c->run_hi);
	c->run_open = false;
}

/* Formats the next request into the output buffer and queues its slot. */
static void
conn_push(struct idb_conn *c, uint64_t t)
{
	struct idb_slot	*s;
	uint64_t	 r;
	uint32_t	 i;
	char		*o = c->out + c->outlen;

	i = c->head + c->count;
	if (i >= cfg.pipeline)
		i -= cfg.pipeline;
	s = &c->fifo[i];
	s->t = t;
	c->count++;
	if (cfg.cmd != CMD_MIX) {
		memcpy(o, cfg.req, cfg.req_len);
		c->outlen += cfg.req_len;
		s->kind = cfg.kind;
		s->n = cfg.n;
		return;
	}
	r = idb_rand(&c->rng);
	switch (r % 3) {
	case 0:
		s->kind = KIND_ID;
		s->n = 1;
		memcpy(o, "ID\n", 3);
		o += 3;
		break;
	case 1:
		s->kind = KIND_IDS;
		s->n = 1 + (uint32_t)((r >> 16) % IDB_IDS_MAX);
		memcpy(o, "IDS ", 4);
		o += 4;
		o += idb_fmt_u64(o, s->n);
		*o++ = '\n';
		break;
	default:
		s->kind = KIND_BLOCK;
		s->n = 1 + (uint32_t)((r >> 16) % IDB_BLOCK_MAX);
		memcpy(o, "BLOCK ", 6);
		o += 6;
		o += idb_fmt_u64(o, s->n);
		*o++ = '\n';
		break;
	}
	c->outlen = (size_t)(o - c->out);
}

/* Queues requests into free pipeline slots and writes them. */
static void
conn_fill(struct idb_conn *c, uint64_t now)
{
	struct idb_worker	*w = c->w;
	uint64_t		 t = now;

	/*
	 * Closed loop: as many as fit, stamped now.  Open loop: only those whose
	 * intended time has come, stamped with that time.
	 */
	if (c->state != CONN_UP || !w->issuing)
		return;
	if (c->outoff > 0) {
		memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	while (c->count < cfg.pipeline && w->st.sent < w->budget) {
		if (w->interval_ns > 0 &&
		    (t = worker_intended(w, w->st.sent)) > now)
			break;
		if (c->count == 0)
			c->since = now;
		conn_push(c, t);
		w->st.sent++;
		w->outstanding++;
	}
	if (c->outlen > c->outoff)
		conn_flush(c);
}

/* Writes queued requests; waits for EPOLLOUT when the socket is full. */
static void
conn_flush(struct idb_conn *c)
{
	ssize_t	 n;
	int	 i;

	for (i = 0; i < IDB_WRITES_PER_EVENT && c->outoff < c->outlen; i++) {
		n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_fail(c, EC_CONN, "send: %s", strerror(errno));
			return;
		}
		c->outoff += (size_t)n;
	}
	if (c->outoff == c->outlen) {
		c->outoff = c->outlen = 0;
		conn_want(c, EPOLLIN);
	} else
		conn_want(c, EPOLLIN | EPOLLOUT);
}

/* Names a request for messages, e.g. "IDS 100". */
static const char *
conn_describe(const struct idb_slot *s, char *buf, size_t len)
{
	static const char *const names[] = { "ID", "IDS", "BLOCK", "INCR",
	    "INCRBY" };

	if (s->kind == KIND_ID || s->kind == KIND_INCR)
		snprintf(buf, len, "%s", names[s->kind]);
	else
		snprintf(buf, len, "%s %" PRIu32, names[s->kind], s->n);
	return buf;
}

/* Fails the connection over a reply that breaks the protocol; always false. */
static bool
conn_bad(struct idb_conn *c, unsigned ec, const struct idb_slot *s,
    const char *why, const char *line, const char *end)
{
	char	 req[32], text[160];

	idb_sanitize(text, sizeof text, line, (size_t)(end - line));
	conn_fail(c, ec, "reply to %s: %s: \"%s\"",
	    conn_describe(s, req, sizeof req), why, text);
	return false;
}

/* Counts an error reply by its code; without --allow-errors the run stops. */
static bool
conn_err_reply(struct idb_conn *c, const char *code, const char *end,
    const char *line)
{
	const char	*ce;
	char		 text[160];
	unsigned	 ec;

	if (code > end)
		code = end;
	for (ce = code; ce < end && *ce != ' '; ce++)
		;
	ec = ec_lookup(code, (size_t)(ce - code));
	c->w->st.err[ec]++;
	if (!cfg.allow_errors) {
		idb_sanitize(text, sizeof text, line, (size_t)(end - line));
		worker_log(c->w, "connection %u: server error (use "
		    "--allow-errors to count these): \"%s\"", c->gidx, text);
		atomic_store(&idb_abort, true);
	}
	return true;
}

/* Checks an IDS reply: n IDs, one space apart, ascending, in [1, 2^63). */
static bool
conn_ids(struct idb_conn *c, const struct idb_slot *s, const char *p,
    const char *e, uint64_t *count)
{
	const char	*q, *line = p, *why;
	uint64_t	 v, prev = 0, cnt = 0;
	uint64_t	 lo = c->run_lo, hi = c->run_hi;
	bool		 open = c->run_open, track = cfg.track;
	unsigned	 ec = EC_PROTO;

	/* The hot loop: the running range lives in locals until the end. */
	for (;;) {
		if ((q = reply_u64(p, e, &v)) == NULL) {
			why = "not a list of IDs";
			goto bad;
		}
		if (v <= prev || v > IDB_ID_MAX) {
			ec = EC_BADID;
			why = v == 0 ? "ID 0" : v > IDB_ID_MAX ?
			    "ID not below 2^63" : "IDs not strictly ascending";
			goto bad;
		}
		prev = v;
		cnt++;
		if (track) {
			if (open && v == hi + 1)
				hi = v;
			else {
				if (open)
					ranges_add(c->w, lo, hi);
				lo = hi = v;
				open = true;
			}
		}
		if (q == e)
			break;
		if (*q != ' ' || cnt == s->n) {
			why = *q != ' ' ? "not a list of IDs" : "too many IDs";
			goto bad;
		}
		p = q + 1;
	}
	c->run_lo = lo;
	c->run_hi = hi;
	c->run_open = open;
	if (cnt != s->n) {
		ec = EC_BADID;
		why = "too few IDs";
		return conn_bad(c, ec, s, why, line, e);
	}
	*count = cnt;
	return true;
bad:
	c->run_lo = lo;
	c->run_hi = hi;
	c->run_open = open;
	return conn_bad(c, ec, s, why, line, e);
}

/* Handles one text-protocol reply line [p, nl). */
static bool
conn_text_reply(struct idb_conn *c, const struct idb_slot *s, const char *p,
    const char *nl, uint64_t now)
{
	struct idb_worker	*w = c->w;
	const char		*e = nl, *q, *code, *msg;
	uint64_t		 v, n = 0;
	size_t			 codelen, msglen;

	if (e > p && e[-1] == '\r')
		e--;
	if (reply_err(p, e, &code, &codelen, &msg, &msglen))
		return conn_err_reply(c, code, e, p);
	switch (s->kind) {
	case KIND_ID:
		if ((q = reply_u64(p, e, &v)) == NULL || q != e)
			return conn_bad(c, EC_PROTO, s, "not an ID", p, e);
		if (v == 0 || v > IDB_ID_MAX)
			return conn_bad(c, EC_BADID, s, "ID outside [1, 2^63)",
			    p, e);
		if (cfg.track)
			conn_track(c, v, v);
		n = 1;
		break;
	case KIND_IDS:
		if (!conn_ids(c, s, p, e, &n))
			return false;
		break;
	case KIND_BLOCK:
		if ((q = reply_u64(p, e, &v)) == NULL || q == e || *q != ' ' ||
		    (q = reply_u64(q + 1, e, &n)) == NULL || q != e)
			return conn_bad(c, EC_PROTO, s, "not \"<first> <n>\"",
			    p, e);
		if (n != s->n)
			return conn_bad(c, EC_BADID, s, "wrong block size", p, e);
		if (v == 0 || n == 0 || v > IDB_ID_MAX - n + 1)
			return conn_bad(c, EC_BADID, s,
			    "block outside [1, 2^63)", p, e);
		if (cfg.track)
			conn_track(c, v, v + n - 1);
		break;
	default:
		return conn_bad(c, EC_PROTO, s, "internal: bad kind", p, e);
	}
	w->st.ids += n;
	w->st.ok++;
	hist_add(&w->st.h, now > s->t ? now - s->t : 0);
	return true;
}

/* Handles one RESP reply line: ":<counter>" or "-<CODE> <message>". */
static bool
conn_resp_reply(struct idb_conn *c, const struct idb_slot *s, const char *p,
    const char *nl, uint64_t now)
{
	struct idb_worker	*w = c->w;
	const char		*e = nl, *q;
	uint64_t		 v, n;

	if (e > p && e[-1] == '\r')
		e--;
	if (*p == '-')
		return conn_err_reply(c, p + 1, e, p);
	if (*p != ':')
		return conn_bad(c, EC_PROTO, s, "not an integer reply", p, e);
	if ((q = reply_u64(p + 1, e, &v)) == NULL || q != e)
		return conn_bad(c, p[1] == '-' ? EC_BADID : EC_PROTO, s,
		    p[1] == '-' ? "negative counter" : "not an integer", p, e);
	n = s->kind == KIND_INCRBY ? s->n : 1;
	if (v < n || v > IDB_ID_MAX)
		return conn_bad(c, EC_BADID, s, "counter too small for the "
		    "increment (key reset?)", p, e);
	if (cfg.track)
		conn_track(c, v - n + 1, v);
	w->st.ids += n;
	w->st.ok++;
	hist_add(&w->st.h, now > s->t ? now - s->t : 0);
	return true;
}

/* Consumes every complete reply buffered; false when the connection failed. */
static bool
conn_parse(struct idb_conn *c, uint64_t now)
{
	struct idb_worker	*w = c->w;
	const struct idb_slot	*s;
	char			*p = c->in, *end = c->in + c->inlen, *nl;
	char			 text[160];
	size_t			 left;
	bool			 ok;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (c->count == 0) {
			idb_sanitize(text, sizeof text, p, (size_t)(nl - p));
			conn_fail(c, EC_PROTO, "reply without a request: "
			    "\"%s\"", text);
			return false;
		}
		s = &c->fifo[c->head];
		if (cfg.proto == PROTO_TEXT)
			ok = conn_text_reply(c, s, p, nl, now);
		else
			ok = conn_resp_reply(c, s, p, nl, now);
		if (!ok)
			return false;
		if (++c->head == cfg.pipeline)
			c->head = 0;
		c->count--;
		w->outstanding--;
		p = nl + 1;
	}
	c->since = now;
	c->backoff_ms = 0;
	left = (size_t)(end - p);
	if (left == cfg.incap) {
		conn_fail(c, EC_PROTO, "reply line longer than %zu bytes",
		    cfg.incap);
		return false;
	}
	if (left > 0 && p != c->in)
		memmove(c->in, p, left);
	c->inlen = left;
	return true;
}

/* Reads and handles replies, then refills the pipeline. */
static void
conn_read(struct idb_conn *c)
{
	size_t	 room;
	ssize_t	 n;
	int	 i;

	for (i = 0; i < IDB_READS_PER_EVENT; i++) {
		room = cfg.incap - c->inlen;
		n = read(c->fd, c->in + c->inlen, room);
		if (n == 0) {
			conn_fail(c, EC_CONN, "server closed the connection");
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			conn_fail(c, EC_CONN, "read: %s", strerror(errno));
			return;
		}
		c->inlen += (size_t)n;
		if (!conn_parse(c, clk_mono_ns()))
			return;
		if ((size_t)n < room)
			break;
	}
	conn_fill(c, clk_mono_ns());
}

/* Dispatches one epoll event. */
static void
conn_event(struct idb_conn *c, uint32_t events)
{
	if (c->state == CONN_CONNECTING) {
		conn_connected(c);
		return;
	}
	if (c->state != CONN_UP)
		return;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		conn_read(c);
	if (c->state == CONN_UP && (events & EPOLLOUT))
		conn_flush(c);
}

/* epoll wait with ns resolution where the kernel has epoll_pwait2. */
static int
worker_wait(struct idb_worker *w, struct epoll_event *ev, uint64_t ns)
{
	struct timespec	 ts;
	int		 n;

	if (w->pwait2) {
		ts.tv_sec = (time_t)(ns / IDB_NS);
		ts.tv_nsec = (long)(ns % IDB_NS);
		n = epoll_pwait2(w->epfd, ev, IDB_EVENTS, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		w->pwait2 = false;
	}
	return epoll_wait(w->epfd, ev, IDB_EVENTS,
	    (int)((ns + IDB_MS - 1) / IDB_MS));
}

/* Open loop: hands due requests to connections with free slots, round robin. */
static void
worker_fill_all(struct idb_worker *w, uint64_t now)
{
	unsigned	 i;

	for (i = 0; i < w->nconns; i++) {
		if (w->st.sent >= w->budget || (w->interval_ns > 0 &&
		    worker_intended(w, w->st.sent) > now))
			return;
		conn_fill(&w->conns[w->cursor], now);
		if (++w->cursor == w->nconns)
			w->cursor = 0;
	}
}

/* Every IDB_TICK_NS: times out silent connections, reconnects after backoff. */
static void
worker_tick(struct idb_worker *w, uint64_t now)
{
	struct idb_conn	*c;
	uint64_t	 limit = (uint64_t)(cfg.reply_timeout * (double)IDB_NS);
	unsigned	 i;

	for (i = 0; i < w->nconns; i++) {
		c = &w->conns[i];
		switch (c->state) {
		case CONN_CONNECTING:
			if (now - c->since > limit)
				conn_fail(c, EC_TIMEOUT, "connect to %s timed "
				    "out (--reply-timeout)", idb_addrname);
			break;
		case CONN_UP:
			if (c->count > 0 && now - c->since > limit)
				conn_fail(c, EC_TIMEOUT, "no reply for %.1f s "
				    "(--reply-timeout)", cfg.reply_timeout);
			break;
		case CONN_DOWN:
			if (w->issuing && c->retry_at != 0 && now >= c->retry_at)
				conn_connect(c);
			break;
		}
	}
}

/* Connects every connection of this thread, waiting at most --reply-timeout. */
static void
worker_connect_all(struct idb_worker *w)
{
	struct epoll_event	 ev[IDB_EVENTS];
	uint64_t		 deadline, now;
	unsigned		 i, pending;
	int			 k, n;

	for (i = 0; i < w->nconns; i++)
		conn_connect(&w->conns[i]);
	deadline = clk_mono_ns() + (uint64_t)(cfg.reply_timeout * (double)IDB_NS);
	while (!atomic_load(&idb_abort) && (now = clk_mono_ns()) < deadline) {
		for (pending = 0, i = 0; i < w->nconns; i++)
			if (w->conns[i].state == CONN_CONNECTING)
				pending++;
		if (pending == 0)
			return;
		n = worker_wait(w, ev, deadline - now < IDB_WAIT_MAX_NS ?
		    deadline - now : IDB_WAIT_MAX_NS);
		for (k = 0; k < n; k++)
			conn_event(ev[k].data.ptr, ev[k].events);
	}
	/* Whoever is still connecting has had --reply-timeout. */
	if (!atomic_load(&idb_abort))
		worker_tick(w, UINT64_MAX / 2);
}

/* The run: issue until the duration or budget ends, then drain the replies. */
static void
worker_loop(struct idb_worker *w)
{
	struct epoll_event	 ev[IDB_EVENTS];
	uint64_t		 now, wake, t;
	unsigned		 i;
	int			 k, n;

	for (;;) {
		now = clk_mono_ns();
		if (atomic_load(&idb_abort))
			break;
		if (w->issuing && (now >= w->stop_at || w->st.sent >= w->budget ||
		    atomic_load(&idb_stop))) {
			w->issuing = false;
			w->issue_end = now < w->stop_at ? now : w->stop_at;
		}
		if (!w->issuing && w->outstanding == 0)
			break;
		if (now >= w->hard_stop) {
			for (i = 0; i < w->nconns; i++)
				if (w->conns[i].count > 0)
					conn_fail(&w->conns[i], EC_TIMEOUT,
					    "replies still missing at --max-time");
			break;
		}
		if (now >= w->next_tick) {
			worker_tick(w, now);
			w->next_tick = now + IDB_TICK_NS;
		}
		if (w->issuing && w->interval_ns > 0)
			worker_fill_all(w, now);

		wake = now + IDB_WAIT_MAX_NS;
		if (w->next_tick < wake)
			wake = w->next_tick;
		if (w->issuing && w->stop_at < wake)
			wake = w->stop_at;
		if (w->hard_stop < wake)
			wake = w->hard_stop;
		/* A backlog (intended time passed) waits for replies. */
		if (w->issuing && w->interval_ns > 0 &&
		    w->st.sent < w->budget &&
		    (t = worker_intended(w, w->st.sent)) > now && t < wake)
			wake = t;
		n = worker_wait(w, ev, wake > now ? wake - now : 0);
		if (n < 0 && errno != EINTR) {
			worker_log(w, "epoll_wait: %s", strerror(errno));
			atomic_store(&idb_abort, true);
		}
		for (k = 0; k < n; k++)
			conn_event(ev[k].data.ptr, ev[k].events);
	}
	w->st.end_ns = clk_mono_ns();
	if (w->issuing) {
		w->issuing = false;
		w->issue_end = w->st.end_ns;
	}
}

/* Closes connections, counts unsent requests, compacts ranges, flushes the dump. */
static void
worker_finish(struct idb_worker *w)
{
	double		 due;
	uint64_t	 d;
	unsigned	 i;

	for (i = 0; i < w->nconns; i++)
		conn_close(&w->conns[i]);
	if (w->interval_ns > 0 && w->issue_end > w->t0) {
		due = floor((double)(w->issue_end - w->t0) / w->interval_ns -
		    w->phase) + 1;
		d = due < 0 ? 0 : (uint64_t)due;
		if (d > w->budget)
			d = w->budget;
		w->st.unsent = d > w->st.sent ? d - w->st.sent : 0;
	}
	if (cfg.verify)
		ranges_compact(&w->rs);
	if (idb_dump_fd != -1)
		dump_flush(w);
}

/* Thread body: connect, meet the others at the start line, run, clean up. */
static void *
worker_main(void *arg)
{
	struct idb_worker	*w = arg;

	/* Open loop sleeps until send times; the default 50 us slack skews them. */
	if (w->interval_ns > 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	worker_connect_all(w);
	pthread_barrier_wait(&idb_barrier);	/* all connected */
	pthread_barrier_wait(&idb_barrier);	/* idb_t0 set */
	w->t0 = idb_t0;
	w->stop_at = cfg.duration > 0 ?
	    w->t0 + (uint64_t)(cfg.duration * (double)IDB_NS) : UINT64_MAX;
	w->hard_stop = w->t0 + (uint64_t)(cfg.max_time * (double)IDB_NS);
	if (cfg.duration > 0 && w->stop_at + (uint64_t)((cfg.reply_timeout +
	    1) * (double)IDB_NS) < w->hard_stop)
		w->hard_stop = w->stop_at +
		    (uint64_t)((cfg.reply_timeout + 1) * (double)IDB_NS);
	w->next_tick = w->t0 + IDB_TICK_NS;
	w->issuing = !atomic_load(&idb_abort);
	worker_fill_all(w, clk_mono_ns());
	worker_loop(w);
	worker_finish(w);
	return NULL;
}

/* Parses an integer option within [min, max]; 0 on success, -1 with a message. */
static int
opt_int(const char *name, const char *s, long long min, long long max,
    long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "idbench: %s must be an integer in %lld..%lld, "
		    "not \"%s\"\n", name, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Parses a real option within [min, max]; 0 on success, -1 with a message. */
static int
opt_real(const char *name, const char *s, double min, double max, double *out)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max)) {
		fprintf(stderr, "idbench: %s must be a number in %g..%g, "
		    "not \"%s\"\n", name, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Prints the command line help. */
static void
opt_usage(FILE *f)
{
	fprintf(f,
"usage: idbench [options]\n"
"\n"
"Load generator and uniqueness checker for idgen's text protocol, and for Redis\n"
"(RESP INCR/INCRBY) to compare.  Every ID received is checked for duplicates.\n"
"\n"
"Target:\n"
"  --host ADDR          server address (default 127.0.0.1)\n"
"  --port PORT          server port (default 4242)\n"
"  --proto text|resp    idgen text protocol (default) or Redis RESP\n"
"  --command CMD        what to send (default ID for text, INCR for resp):\n"
"                         text: ID | 'IDS n' | 'BLOCK n' | MIX | NULL\n"
"                         resp: INCR | 'INCRBY n'   (key " IDB_RESP_KEY ")\n"
"                               | ID (idserver's ID over RESP)\n"
"                       MIX: a seeded random mix of ID, IDS 1..1000 and\n"
"                       BLOCK 1..4096.  NULL: sends ID, checks each reply is a\n"
"                       number but not for duplicates (implies --no-verify).\n"
"                       n may be 'IDS 100', 'IDS:100' or 'IDS=100'; n beyond the\n"
"                       protocol limits exercises the server's ERR RANGE.\n"
"\n"
"Load:\n"
"  --connections N      connections (default 1)\n"
"  --pipeline P         requests outstanding per connection (default 1)\n"
"  --threads T          client threads sharing the connections (default 1)\n"
"  --duration SECONDS   stop sending after this long (default 10 unless\n"
"                       --requests is given)\n"
"  --requests N         total requests to send; with --duration, the first\n"
"                       limit reached ends the run\n"
"  --rate R             open loop: R requests/s in total, at fixed intended\n"
"                       send times; latency counts from the intended time.\n"
"                       Without it: closed loop (send when a slot frees)\n"
"  --seed S             seed for MIX (default 1); each connection's sequence\n"
"                       depends only on S and its index\n"
"\n"
"Checks and errors:\n"
"  --allow-errors       count ERR replies (by code), connection failures and\n"
"                       timeouts instead of failing; reconnect with backoff\n"
"  --no-verify          skip the duplicate check (for the null server)\n"
"  --reply-timeout S    a connect or a reply taking longer fails the\n"
"                       connection (default 10)\n"
"  --max-time S         hard bound on the whole run (default 600)\n"
"\n"
"Output:\n"
"  --label NAME         name of this run in the output\n"
"  --server-pid PID     report the server's CPU time per request\n"
"                       (utime+stime from /proc/PID/stat, 10 ms resolution)\n"
"  --dump FILE          write every ID range received as 'first count' lines;\n"
"                       consecutive IDs of one connection share a line\n"
"  --latency-out FILE   write 'percentile latency_us' lines for gnuplot\n"
"  --help               this text\n"
"\n"
"Prints a human line and a machine line:\n"
"  RESULT label= requests= ids= seconds= req_per_s= ids_per_s= p50_us= p99_us=\n"
"  p999_us= max_us= server_cpu_us_per_req= duplicates= errors= err_<CODE>= ...\n"
"requests counts successful replies; latency covers those only.\n"
"\n"
"Exit status: 0 when duplicates=0, violations=0 (malformed replies, IDs outside\n"
"[1, 2^63), IDS not ascending) and errors=0 or --allow-errors; 1 otherwise;\n"
"2 on a usage error.  SIGINT stops sending and drains; a second one aborts.\n");
}

/* Resolves the --command text into cfg; 0 on success. */
static int
opt_command(const char *s)
{
	const struct idb_cmdinfo	*ci = NULL;
	char				 word[16];
	const char			*arg;
	char				 num[24];
	long long			 n = 0;
	size_t				 i, k, len;

	for (i = 0; s[i] != '\0' && s[i] != ' ' && s[i] != ':' && s[i] != '=';
	    i++) {
		if (i == sizeof word - 1)
			goto unknown;
		word[i] = (char)toupper((unsigned char)s[i]);
	}
	word[i] = '\0';
	arg = s + i;
	while (*arg == ' ' || *arg == ':' || *arg == '=')
		arg++;
	/* A name in both protocols (ID) takes the entry of the chosen one. */
	for (k = 0; k < sizeof idb_cmds / sizeof idb_cmds[0]; k++)
		if (strcmp(idb_cmds[k].name, word) == 0 &&
		    (ci == NULL || idb_cmds[k].proto == cfg.proto))
			ci = &idb_cmds[k];
	if (ci == NULL)
		goto unknown;
	if (ci->nmax == 0 && *arg != '\0') {
		fprintf(stderr, "idbench: --command %s takes no argument\n",
		    ci->name);
		return -1;
	}
	if (ci->nmax != 0 && (*arg == '\0' ||
	    opt_int("the --command argument", arg, ci->nmin, ci->nmax, &n) != 0)) {
		if (*arg == '\0')
			fprintf(stderr, "idbench: --command %s needs a count, "
			    "e.g. '%s 100'\n", ci->name, ci->name);
		return -1;
	}
	if (ci->proto != cfg.proto) {
		fprintf(stderr, "idbench: --command %s needs --proto %s\n",
		    ci->name, ci->proto == PROTO_TEXT ? "text" : "resp");
		return -1;
	}
	cfg.cmd = ci->cmd;
	cfg.n = (uint32_t)n;
	switch (ci->cmd) {
	case CMD_ID:
	case CMD_NULL:
		cfg.kind = KIND_ID;
		cfg.n = 1;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req, "ID\n");
		break;
	case CMD_IDS:
		cfg.kind = KIND_IDS;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req, "IDS %" PRIu32
		    "\n", cfg.n);
		break;
	case CMD_BLOCK:
		cfg.kind = KIND_BLOCK;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req, "BLOCK %" PRIu32
		    "\n", cfg.n);
		break;
	case CMD_INCR:
		cfg.kind = KIND_INCR;
		cfg.n = 1;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req,
		    "*2\r\n$4\r\nINCR\r\n$%zu\r\n%s\r\n", strlen(IDB_RESP_KEY),
		    IDB_RESP_KEY);
		break;
	case CMD_RESP_ID:
		/* One integer reply, the ID itself: checked like a counter of 1. */
		cfg.kind = KIND_INCR;
		cfg.n = 1;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req, "*1\r\n$2\r\nID\r\n");
		break;
	case CMD_INCRBY:
		cfg.kind = KIND_INCRBY;
		len = (size_t)snprintf(cfg.req, sizeof cfg.req,
		    "*3\r\n$6\r\nINCRBY\r\n$%zu\r\n%s\r\n$%zu\r\n%.*s\r\n",
		    strlen(IDB_RESP_KEY), IDB_RESP_KEY,
		    idb_fmt_u64(num, cfg.n), (int)idb_fmt_u64(num, cfg.n), num);
		break;
	default:
		len = 0;
		break;
	}
	cfg.req_len = len;
	if (ci->cmd == CMD_NULL)
		cfg.verify = false;
	if (ci->nmax != 0)
		snprintf(cfg.label, sizeof cfg.label, "%s-%s-%" PRIu32,
		    cfg.proto == PROTO_TEXT ? "text" : "resp", ci->name, cfg.n);
	else
		snprintf(cfg.label, sizeof cfg.label, "%s-%s",
		    cfg.proto == PROTO_TEXT ? "text" : "resp", ci->name);
	return 0;
unknown:
	fprintf(stderr, "idbench: unknown --command \"%s\" (see --help)\n", s);
	return -1;
}

/* Fills cfg from the command line; exits 2 on a usage error. */
static void
opt_parse(int argc, char **argv)
{
	enum {
		O_HOST = 256, O_PORT, O_PROTO, O_CONNS, O_PIPELINE, O_THREADS,
		O_COMMAND, O_DURATION, O_REQUESTS, O_RATE, O_SERVER_PID,
		O_DUMP, O_LATENCY_OUT, O_ALLOW_ERRORS, O_NO_VERIFY, O_LABEL,
		O_SEED, O_REPLY_TIMEOUT, O_MAX_TIME, O_HELP
	};
	static const struct option opts[] = {
		{ "host",		required_argument, NULL, O_HOST },
		{ "port",		required_argument, NULL, O_PORT },
		{ "proto",		required_argument, NULL, O_PROTO },
		{ "connections",	required_argument, NULL, O_CONNS },
		{ "pipeline",		required_argument, NULL, O_PIPELINE },
		{ "threads",		required_argument, NULL, O_THREADS },
		{ "command",		required_argument, NULL, O_COMMAND },
		{ "duration",		required_argument, NULL, O_DURATION },
		{ "requests",		required_argument, NULL, O_REQUESTS },
		{ "rate",		required_argument, NULL, O_RATE },
		{ "server-pid",		required_argument, NULL, O_SERVER_PID },
		{ "dump",		required_argument, NULL, O_DUMP },
		{ "latency-out",	required_argument, NULL, O_LATENCY_OUT },
		{ "allow-errors",	no_argument,	   NULL, O_ALLOW_ERRORS },
		{ "no-verify",		no_argument,	   NULL, O_NO_VERIFY },
		{ "label",		required_argument, NULL, O_LABEL },
		{ "seed",		required_argument, NULL, O_SEED },
		{ "reply-timeout",	required_argument, NULL, O_REPLY_TIMEOUT },
		{ "max-time",		required_argument, NULL, O_MAX_TIME },
		{ "help",		no_argument,	   NULL, O_HELP },
		{ NULL,			0,		   NULL, 0 }
	};
	const char	*label = NULL, *command = NULL;
	long long	 v;
	size_t		 i, maxline, per;
	int		 ch, bad = 0;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case O_HOST:
			cfg.host = optarg;
			break;
		case O_PORT:
			bad |= opt_int("--port", optarg, 1, 65535, &v);
			cfg.port = optarg;
			break;
		case O_PROTO:
			if (strcmp(optarg, "text") == 0)
				cfg.proto = PROTO_TEXT;
			else if (strcmp(optarg, "resp") == 0)
				cfg.proto = PROTO_RESP;
			else {
				fprintf(stderr, "idbench: --proto is text or "
				    "resp, not \"%s\"\n", optarg);
				bad = -1;
			}
			break;
		case O_CONNS:
			bad |= opt_int("--connections", optarg, 1, 100000, &v);
			cfg.conns = (uint32_t)v;
			break;
		case O_PIPELINE:
			bad |= opt_int("--pipeline", optarg, 1, 65536, &v);
			cfg.pipeline = (uint32_t)v;
			break;
		case O_THREADS:
			bad |= opt_int("--threads", optarg, 1, 256, &v);
			cfg.threads = (uint32_t)v;
			break;
		case O_COMMAND:
			command = optarg;
			break;
		case O_DURATION:
			bad |= opt_real("--duration", optarg, 0.001, 86400,
			    &cfg.duration);
			break;
		case O_REQUESTS:
			bad |= opt_int("--requests", optarg, 1, INT64_MAX, &v);
			cfg.requests = (uint64_t)v;
			break;
		case O_RATE:
			bad |= opt_real("--rate", optarg, 0.001, 1e9, &cfg.rate);
			break;
		case O_SERVER_PID:
			bad |= opt_int("--server-pid", optarg, 1, INT32_MAX, &v);
			cfg.server_pid = (long)v;
			break;
		case O_DUMP:
			cfg.dump = optarg;
			break;
		case O_LATENCY_OUT:
			cfg.latency_out = optarg;
			break;
		case O_ALLOW_ERRORS:
			cfg.allow_errors = true;
			break;
		case O_NO_VERIFY:
			cfg.verify = false;
			break;
		case O_LABEL:
			label = optarg;
			break;
		case O_SEED:
			bad |= opt_int("--seed", optarg, 0, INT64_MAX, &v);
			cfg.seed = (uint64_t)v;
			break;
		case O_REPLY_TIMEOUT:
			bad |= opt_real("--reply-timeout", optarg, 0.01, 3600,
			    &cfg.reply_timeout);
			break;
		case O_MAX_TIME:
			bad |= opt_real("--max-time", optarg, 0.01, 86400 * 7,
			    &cfg.max_time);
			break;
		case O_HELP:
		case 'h':
			opt_usage(stdout);
			exit(0);
		default:
			opt_usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "idbench: unexpected argument \"%s\"\n",
		    argv[optind]);
		bad = -1;
	}
	if (command == NULL)
		command = cfg.proto == PROTO_TEXT ? "ID" : "INCR";
	if (bad != 0 || opt_command(command) != 0)
		exit(2);
	cfg.cmd_text = command;
	if (label != NULL) {
		snprintf(cfg.label, sizeof cfg.label, "%s", label);
		for (i = 0; cfg.label[i] != '\0'; i++)
			if (!isgraph((unsigned char)cfg.label[i]))
				cfg.label[i] = '_';
	}
	if (cfg.threads > cfg.conns) {
		fprintf(stderr, "idbench: --threads %" PRIu32 " > --connections "
		    "%" PRIu32 ": using %" PRIu32 " threads\n", cfg.threads,
		    cfg.conns, cfg.conns);
		cfg.threads = cfg.conns;
	}
	if (cfg.duration == 0 && cfg.requests == 0)
		cfg.duration = 10;
	cfg.track = cfg.verify || cfg.dump != NULL;

	/* Input room: a whole reply line, and a pipeline's worth when cheap. */
	if (cfg.proto == PROTO_RESP)
		per = 32;
	else if (cfg.cmd == CMD_IDS || cfg.cmd == CMD_MIX)
		per = (size_t)(cfg.cmd == CMD_MIX || cfg.n > IDB_IDS_MAX ?
		    IDB_IDS_MAX : cfg.n) * IDB_ID_CHARS + 64;
	else
		per = 2 * IDB_ID_CHARS + 8;
	maxline = per > IDB_LINE_MIN ? per : IDB_LINE_MIN;
	cfg.incap = per * cfg.pipeline;
	if (cfg.incap > IDB_IN_MAX)
		cfg.incap = IDB_IN_MAX;
	if (cfg.incap < 2 * maxline)
		cfg.incap = 2 * maxline;
}

/* Resolves --host/--port once, before any thread starts. */
static void
opt_resolve(void)
{
	struct addrinfo	 hints, *res;
	char		 host[NI_MAXHOST];
	int		 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rc = getaddrinfo(cfg.host, cfg.port, &hints, &res)) != 0) {
		fprintf(stderr, "idbench: %s: %s\n", cfg.host, gai_strerror(rc));
		exit(2);
	}
	memcpy(&idb_addr, res->ai_addr, res->ai_addrlen);
	idb_addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	if (getnameinfo((struct sockaddr *)&idb_addr, idb_addrlen, host,
	    sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(host, sizeof host, "%s", cfg.host);
	snprintf(idb_addrname, sizeof idb_addrname, "%s port %s", host,
	    cfg.port);
}

/* utime + stime of a process in microseconds, from /proc/PID/stat. */
static bool
idb_proc_cpu(long pid, uint64_t *us)
{
	char			 path[64], buf[4096], *p, *end;
	unsigned long long	 ut, st;
	long			 hz;
	ssize_t			 n;
	int			 fd, field;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return false;
	p++;
	/* Fields after ')' start at 3 (state); utime and stime are 14 and 15. */
	for (field = 3; field < 14; field++) {
		while (*p == ' ')
			p++;
		while (*p != ' ' && *p != '\0')
			p++;
	}
	errno = 0;
	ut = strtoull(p, &end, 10);
	st = strtoull(end, &end, 10);
	hz = sysconf(_SC_CLK_TCK);
	if (errno != 0 || hz <= 0)
		return false;
	*us = (uint64_t)(ut + st) * 1000000 / (uint64_t)hz;
	return true;
}

/* This process's user + system CPU time in microseconds. */
static uint64_t
idb_self_cpu(void)
{
	struct rusage	 ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000000 +
	    (uint64_t)ru.ru_utime.tv_usec +
	    (uint64_t)ru.ru_stime.tv_sec * 1000000 +
	    (uint64_t)ru.ru_stime.tv_usec;
}

/* SIGINT/SIGTERM: the first stops sending and drains, the second aborts. */
static void
idb_on_signal(int sig)
{
	(void)sig;
	if (atomic_exchange(&idb_stop, 1) != 0)
		atomic_store(&idb_abort, true);
}

/* Sets up, runs the threads, merges and checks their results, reports. */
int
main(int argc, char **argv)
{
	struct idb_worker	*workers, *w;
	struct idb_conn		*c;
	struct idb_stats	 tot;
	struct idb_ranges	 all;
	struct sigaction	 sa;
	uint64_t		 scpu0 = 0, scpu1 = 0, ccpu0, ccpu1, end = 0;
	uint64_t		 errors = 0, violations = 0, duplicates = 0;
	uint64_t		 distinct;
	double			 secs, p50, p99, p999, pmax;
	char			 dup[32], scpu[32];
	bool			 have_scpu, ok;
	unsigned		 t, i, ec;
	uint32_t		 ci;

	opt_parse(argc, argv);
	opt_resolve();

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = idb_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (cfg.dump != NULL && (idb_dump_fd = open(cfg.dump, O_WRONLY |
	    O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644)) == -1)
		idb_fatal("--dump %s: %s", cfg.dump, strerror(errno));

	if ((workers = calloc(cfg.threads, sizeof *workers)) == NULL)
		idb_fatal("out of memory");
	for (t = 0; t < cfg.threads; t++) {
		w = &workers[t];
		w->idx = t;
		w->pwait2 = true;
		w->nconns = cfg.conns / cfg.threads +
		    (t < cfg.conns % cfg.threads);
		w->budget = cfg.requests == 0 ? UINT64_MAX :
		    cfg.requests / cfg.threads + (t < cfg.requests % cfg.threads);
		if (cfg.rate > 0) {
			w->interval_ns = (double)IDB_NS * cfg.threads / cfg.rate;
			w->phase = (double)t / cfg.threads;
		}
		if ((w->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
			idb_fatal("epoll_create1: %s", strerror(errno));
		if ((w->conns = calloc(w->nconns, sizeof *w->conns)) == NULL)
			idb_fatal("out of memory");
		if (idb_dump_fd != -1 &&
		    (w->dump = malloc(IDB_DUMP_CAP)) == NULL)
			idb_fatal("out of memory");
		w->rs.compact_at = IDB_COMPACT_MIN;
		if (cfg.verify)
			ranges_reserve(&w->rs, 4096);
		for (i = 0; i < w->nconns; i++) {
			c = &w->conns[i];
			c->w = w;
			c->fd = -1;
			c->gidx = t + i * cfg.threads;
			c->rng = cfg.seed ^
			    ((uint64_t)c->gidx * UINT64_C(0xd1b54a32d192ed03));
			c->in = malloc(cfg.incap);
			c->out = malloc((size_t)cfg.pipeline * IDB_REQ_MAX);
			c->fifo = calloc(cfg.pipeline, sizeof *c->fifo);
			if (c->in == NULL || c->out == NULL || c->fifo == NULL)
				idb_fatal("out of memory");
		}
	}

	if (pthread_barrier_init(&idb_barrier, NULL, cfg.threads + 1) != 0)
		idb_fatal("pthread_barrier_init failed");
	for (t = 0; t < cfg.threads; t++)
		if (pthread_create(&workers[t].thread, NULL, worker_main,
		    &workers[t]) != 0)
			idb_fatal("cannot start thread %u", t);
	pthread_barrier_wait(&idb_barrier);
	have_scpu = cfg.server_pid != 0 && idb_proc_cpu(cfg.server_pid, &scpu0);
	if (cfg.server_pid != 0 && !have_scpu)
		fprintf(stderr, "idbench: cannot read /proc/%ld/stat\n",
		    cfg.server_pid);
	ccpu0 = idb_self_cpu();
	idb_t0 = clk_mono_ns();
	pthread_barrier_wait(&idb_barrier);
	for (t = 0; t < cfg.threads; t++)
		pthread_join(workers[t].thread, NULL);
	ccpu1 = idb_self_cpu();
	if (have_scpu && !idb_proc_cpu(cfg.server_pid, &scpu1))
		have_scpu = false;

	/* Merge the threads' statistics and ranges. */
	memset(&tot, 0, sizeof tot);
	memset(&all, 0, sizeof all);
	for (t = 0; t < cfg.threads; t++) {
		w = &workers[t];
		tot.ok += w->st.ok;
		tot.ids += w->st.ids;
		tot.sent += w->st.sent;
		tot.lost += w->st.lost;
		tot.unsent += w->st.unsent;
		for (ec = 0; ec < EC_MAX; ec++)
			tot.err[ec] += w->st.err[ec];
		hist_merge(&tot.h, &w->st.h);
		if (w->st.end_ns > end)
			end = w->st.end_ns;
		all.n += w->rs.n;
		all.ids += w->rs.ids;
	}
	if (cfg.verify) {
		ranges_reserve(&all, all.n);
		all.n = 0;
		for (t = 0; t < cfg.threads; t++) {
			w = &workers[t];
			if (w->rs.n > 0)
				memcpy(all.r + all.n, w->rs.r,
				    w->rs.n * sizeof *all.r);
			all.n += w->rs.n;
			for (i = 0; i < w->rs.ndups && all.ndups <
			    IDB_DUP_EXAMPLES; i++)
				all.dups[all.ndups++] = w->rs.dups[i];
			free(w->rs.r);
			free(w->rs.scratch);
			w->rs.r = w->rs.scratch = NULL;
		}
		ranges_compact(&all);
		distinct = ranges_distinct(&all);
		duplicates = all.ids - distinct;
		if (duplicates > 0) {
			fprintf(stderr, "idbench: %" PRIu64 " duplicate IDs, e.g.",
			    duplicates);
			for (i = 0; i < all.ndups; i++)
				fprintf(stderr, " %" PRIu64, all.dups[i]);
			fputc('\n', stderr);
		}
		snprintf(dup, sizeof dup, "%" PRIu64, duplicates);
	} else
		snprintf(dup, sizeof dup, "na");
	for (ec = 0; ec < ec_count; ec++) {
		if (ec_is_violation(ec))
			violations += tot.err[ec];
		else
			errors += tot.err[ec];
	}

	secs = (double)(end - idb_t0) / (double)IDB_NS;
	if (secs <= 0)
		secs = 1e-9;
	p50 = (double)hist_percentile(&tot.h, 50) / 1000.0;
	p99 = (double)hist_percentile(&tot.h, 99) / 1000.0;
	p999 = (double)hist_percentile(&tot.h, 99.9) / 1000.0;
	pmax = (double)tot.h.max / 1000.0;
	if (have_scpu && tot.ok > 0)
		snprintf(scpu, sizeof scpu, "%.3f",
		    (double)(scpu1 - scpu0) / (double)tot.ok);
	else
		snprintf(scpu, sizeof scpu, "na");
	/* An abort with nothing counted is a local failure (dump file, signal). */
	ok = duplicates == 0 && violations == 0 &&
	    (errors == 0 || cfg.allow_errors) && !atomic_load(&idb_abort);

	printf("idbench %s: %" PRIu64 " requests, %" PRIu64 " IDs in %.2f s: "
	    "%.0f req/s, %.0f IDs/s; latency us p50 %.1f p99 %.1f p99.9 %.1f "
	    "max %.1f; duplicates %s, errors %" PRIu64 ", violations %" PRIu64
	    ": %s\n", cfg.label, tot.ok, tot.ids, secs, (double)tot.ok / secs,
	    (double)tot.ids / secs, p50, p99, p999, pmax, dup, errors,
	    violations, ok ? "OK" : "FAIL");
	printf("RESULT label=%s requests=%" PRIu64 " ids=%" PRIu64
	    " seconds=%.3f req_per_s=%.0f ids_per_s=%.0f p50_us=%.1f"
	    " p99_us=%.1f p999_us=%.1f max_us=%.1f server_cpu_us_per_req=%s"
	    " duplicates=%s errors=%" PRIu64, cfg.label, tot.ok, tot.ids, secs,
	    (double)tot.ok / secs, (double)tot.ids / secs, p50, p99, p999, pmax,
	    scpu, dup, errors);
	for (ec = 0; ec < ec_count; ec++)
		if (!ec_is_violation(ec))
			printf(" err_%s=%" PRIu64, ec_names[ec], tot.err[ec]);
	printf(" violations=%" PRIu64 " err_PROTO=%" PRIu64 " err_BADID=%"
	    PRIu64, violations, tot.err[EC_PROTO], tot.err[EC_BADID]);
	printf(" client_cpu_us_per_req=%.3f sent=%" PRIu64 " lost=%" PRIu64
	    " unsent=%" PRIu64 " target_rate=%.0f proto=%s connections=%" PRIu32
	    " pipeline=%" PRIu32 " threads=%" PRIu32 " verified=%s status=%s\n",
	    tot.ok > 0 ? (double)(ccpu1 - ccpu0) / (double)tot.ok : 0.0,
	    tot.sent, tot.lost, tot.unsent, cfg.rate,
	    cfg.proto == PROTO_TEXT ? "text" : "resp", cfg.conns, cfg.pipeline,
	    cfg.threads, cfg.verify ? "yes" : "no", ok ? "ok" : "fail");
	fflush(stdout);

	if (cfg.latency_out != NULL && !hist_write(&tot.h, cfg.latency_out))
		ok = false;
	if (idb_dump_fd != -1 && close(idb_dump_fd) != 0) {
		fprintf(stderr, "idbench: --dump %s: %s\n", cfg.dump,
		    strerror(errno));
		ok = false;
	}
	for (t = 0; t < cfg.threads; t++) {
		w = &workers[t];
		for (ci = 0; ci < w->nconns; ci++) {
			free(w->conns[ci].in);
			free(w->conns[ci].out);
			free(w->conns[ci].fifo);
		}
		free(w->conns);
		free(w->dump);
		close(w->epfd);
	}
	free(workers);
	free(all.r);
	free(all.scratch);
	return ok ? 0 : 1;
}
