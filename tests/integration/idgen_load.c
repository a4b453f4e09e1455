/*
 * idgen_load.c - drives libidgen for its integration tests and bench row.
 *
 *   idgen_load -s LIST [-t THREADS] [-n IDS | -d SECONDS] [--mix] [--dump FILE]
 *              [--fork] [--outage DIR] [--bench] [--allow-errors] [--pace US]
 *              [--lead-ms MS] [--min-held N] [--fetch-ids N] [--stream]
 *              [--until FILE]
 *
 * Every thread takes IDs (idgen_next, or a seeded mix of next, ids and block),
 * checks each reply (ascending lists, nonzero), and records what it got as
 * "first count" ranges; --dump writes them for the tests' duplicate check.
 * --stream writes each thread's ranges as they close to FILE.t<thread>
 * (a process killed or stopped keeps what it wrote); LIST may be a tier's
 * mariadb:// address (the generator; its lease counted in RESULT).
 * --fork forks after the first IDs are held: parent and child both go on
 * (FILE.parent, FILE.child). --outage DIR runs the both-idservers-down
 * script with the test (files in DIR). --bench only counts. --until FILE
 * stops the run once FILE exists (looked for every 1,024 calls), -d SECONDS
 * still its bound: a test ends the load after the step it waits for, however
 * slow the machine was to get there.
 * Output: one "RESULT key=value ..." line; exit 1 on any error unless
 * --allow-errors, or on any bad reply.
 */
#include "idgen.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOAD_THREADS_MAX	64
#define LOAD_ERR_CODES		8
#define LOAD_WAIT_S		30	/* longest wait for the test's next step */

struct load_range {
	uint64_t	 first;
	uint64_t	 count;
};

struct load_thread {
	pthread_t	 t;
	unsigned	 idx;
	uint64_t	 rng;
	uint64_t	 ids;
	uint64_t	 calls;
	uint64_t	 errs[LOAD_ERR_CODES];
	uint64_t	 bad;
	uint64_t	 sum;		/* --bench: keeps the loop honest */
	struct load_range *r;
	size_t		 n, cap;
	bool		 open;
	int		 fd;		/* --stream: the thread's file; -1: kept in r */
	uint64_t	 lo, hi;
	char		 firsterr[IDGEN_ERR_LEN];
};

static struct {
	const char	*servers;
	unsigned	 threads;
	uint64_t	 ids;		/* per thread; 0: by duration */
	double		 duration;
	unsigned	 pace_us;	/* sleep after every 1,024 calls */
	struct idgen_options o;
	bool		 mix, fork, bench, allow_errors, stream;
	const char	*dump;
	const char	*outage;
	const char	*until;		/* --until: stop once this file exists */
} opt = { .threads = 1 };

static idgen_client	*load_client;
static atomic_bool	 load_stop;
static struct load_thread load_main_t = { .fd = -1 };	/* --fork: the forking thread's IDs */

static double
load_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t
load_rand(uint64_t *s)
{
	uint64_t	 z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Records [lo, hi] as taken, coalescing with the running range. */
static void
load_add(struct load_thread *t, uint64_t lo, uint64_t hi)
{
	if (t->open && lo == t->hi + 1) {
		t->hi = hi;
		return;
	}
	if (t->open && t->fd >= 0)
		dprintf(t->fd, "%" PRIu64 " %" PRIu64 "\n", t->lo, t->hi - t->lo + 1);
	else if (t->open) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 4096;
			if ((t->r = realloc(t->r, t->cap * sizeof(*t->r))) == NULL) {
				fprintf(stderr, "idgen_load: out of memory\n");
				exit(1);
			}
		}
		t->r[t->n++] = (struct load_range){ t->lo, t->hi - t->lo + 1 };
	}
	t->lo = lo;
	t->hi = hi;
	t->open = true;
}

/* Counts a failed call; the first message is kept. */
static void
load_err(struct load_thread *t, int rc)
{
	t->errs[rc > 0 && rc < LOAD_ERR_CODES ? rc : 0]++;
	if (t->firsterr[0] == '\0')
		snprintf(t->firsterr, sizeof(t->firsterr), "%s", idgen_last_error());
}

/* One call of the mix (or idgen_next); false on a bad reply. */
static bool
load_one(struct load_thread *t)
{
	uint64_t	 id, first, ids[IDGEN_IDS_MAX];
	unsigned	 k, i, op = opt.mix ? (unsigned)(load_rand(&t->rng) % 8) : 0;
	int		 rc;

	t->calls++;
	if (op < 5) {
		if ((rc = idgen_next(load_client, &id)) != IDGEN_OK) {
			load_err(t, rc);
			return true;
		}
		if (id == 0)
			return false;
		t->ids++;
		if (opt.bench)
			t->sum ^= id;
		else
			load_add(t, id, id);
	} else if (op < 7) {
		k = 1 + (unsigned)(load_rand(&t->rng) % 100);
		if (load_rand(&t->rng) % 16 == 0)
			k = IDGEN_IDS_MAX;
		if ((rc = idgen_ids(load_client, k, ids)) != IDGEN_OK) {
			load_err(t, rc);
			return true;
		}
		for (i = 0; i < k; i++) {
			if (ids[i] == 0 || (i > 0 && ids[i] <= ids[i - 1]))
				return false;
			load_add(t, ids[i], ids[i]);
		}
		t->ids += k;
	} else {
		k = 1 + (unsigned)(load_rand(&t->rng) % 64);
		if (load_rand(&t->rng) % 16 == 0)
			k = IDGEN_BLOCK_MAX;
		if ((rc = idgen_block(load_client, k, &first)) != IDGEN_OK) {
			load_err(t, rc);
			return true;
		}
		if (first == 0)
			return false;
		load_add(t, first, first + k - 1);
		t->ids += k;
	}
	return true;
}

static void *
load_main(void *arg)
{
	struct load_thread	*t = arg;
	double			 end = opt.duration > 0 ? load_now() + opt.duration : 0;
	unsigned		 i;

	while (!atomic_load_explicit(&load_stop, memory_order_relaxed)) {
		if (opt.ids > 0 && t->ids >= opt.ids)
			break;
		/* The clock is read once per 1,024 calls: --bench measures idgen. */
		for (i = 0; i < 1024; i++)
			if (!load_one(t)) {
				t->bad++;
				atomic_store(&load_stop, true);
				break;
			}
		if (end > 0 && load_now() >= end)
			break;
		if (opt.until != NULL && access(opt.until, F_OK) == 0)
			break;
		if (opt.pace_us > 0)
			usleep(opt.pace_us);
	}
	if (t->open)
		load_add(t, 0, 0);	/* flushes the running range */
	return NULL;
}

/* Writes every thread's ranges to path. */
static void
load_dump(struct load_thread *ts, const char *path)
{
	FILE		*f;
	unsigned	 i;
	size_t		 k;

	if ((f = fopen(path, "w")) == NULL) {
		fprintf(stderr, "idgen_load: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (i = 0; i < opt.threads; i++)
		for (k = 0; k < ts[i].n; k++)
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ts[i].r[k].first,
			    ts[i].r[k].count);
	for (k = 0; k < load_main_t.n; k++)
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", load_main_t.r[k].first,
		    load_main_t.r[k].count);
	if (fclose(f) != 0) {
		fprintf(stderr, "idgen_load: %s: write failed\n", path);
		exit(1);
	}
}

/* Runs the threads and prints the RESULT line; the exit status. */
static int
load_run(const char *role, const char *dump)
{
	struct load_thread	*ts = calloc(opt.threads, sizeof(*ts));
	struct idgen_stats	 st;
	uint64_t		 ids = 0, calls = 0, bad = 0, errs[LOAD_ERR_CODES] = { 0 };
	uint64_t		 errors = 0;
	const char		*firsterr = "";
	double			 t0, dt;
	unsigned		 i, k;

	if (ts == NULL)
		return 1;
	t0 = load_now();
	for (i = 0; i < opt.threads; i++) {
		ts[i].idx = i;
		ts[i].rng = (uint64_t)getpid() * 1000 + i;
		ts[i].fd = -1;
		if (opt.stream && dump != NULL) {
			char	 path[4096];

			snprintf(path, sizeof(path), "%s.t%u", dump, i);
			if ((ts[i].fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
			    0644)) < 0) {
				fprintf(stderr, "idgen_load: %s: %s\n", path, strerror(errno));
				return 1;
			}
		}
		if (pthread_create(&ts[i].t, NULL, load_main, &ts[i]) != 0) {
			fprintf(stderr, "idgen_load: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < opt.threads; i++) {
		pthread_join(ts[i].t, NULL);
		if (ts[i].fd >= 0)
			close(ts[i].fd);
	}
	dt = load_now() - t0;
	idgen_stats(load_client, &st);
	for (i = 0; i < opt.threads; i++) {
		ids += ts[i].ids;
		calls += ts[i].calls;
		bad += ts[i].bad;
		for (k = 0; k < LOAD_ERR_CODES; k++) {
			errs[k] += ts[i].errs[k];
			errors += ts[i].errs[k];
		}
		if (*firsterr == '\0')
			firsterr = ts[i].firsterr;
	}
	if (dump != NULL)
		load_dump(ts, dump);
	printf("RESULT role=%s threads=%u ids=%" PRIu64 " calls=%" PRIu64 " seconds=%.3f "
	    "ids_per_s=%.0f round_trips=%" PRIu64 " rt_per_million=%.2f "
	    "failures=%" PRIu64 " failovers=%" PRIu64 " forks=%" PRIu64
	    " bad=%" PRIu64 " errors=%" PRIu64 " unavailable=%" PRIu64
	    " timeout=%" PRIu64 " tls_handshakes=%" PRIu64 " tls_resumed=%" PRIu64
	    " lease_claims=%" PRIu64 "\n",
	    role, opt.threads, ids, calls, dt,
	    (double)ids / dt, st.round_trips, ids ? (double)st.round_trips * 1e6 /
	    (double)ids : 0, st.failures, st.failovers, st.forks, bad, errors,
	    errs[IDGEN_EUNAVAILABLE], errs[IDGEN_ETIMEOUT], st.tls_handshakes, st.tls_resumed,
	    st.lease_claims);
	if (errors > 0)
		printf("first error: %s\n", firsterr);
	fflush(stdout);
	for (i = 0; i < opt.threads; i++)
		free(ts[i].r);
	free(ts);
	return bad > 0 || (errors > 0 && !opt.allow_errors);
}

/* Waits for the test to create path; false after LOAD_WAIT_S. */
static bool
load_wait_file(const char *dir, const char *name)
{
	char		 path[4096];
	struct stat	 sb;
	int		 i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < LOAD_WAIT_S * 100; i++) {
		if (stat(path, &sb) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

static void
load_touch(const char *dir, const char *name, const char *text)
{
	char	 path[4096];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * Both idservers down: held IDs are served, then an error code, then service
 * comes back when one returns. Steps are files in DIR, made by the test.
 */
static int
load_outage(void)
{
	struct load_thread	 t = { .rng = 1, .fd = -1 };
	uint64_t		 id, held = 0;
	double			 end;
	char			 text[IDGEN_ERR_LEN + 64];
	int			 rc = IDGEN_OK;
	unsigned		 i;

	opt.threads = 1;
	for (i = 0; i < 100000; i++)
		if (idgen_next(load_client, &id) == IDGEN_OK)
			load_add(&t, id, id);
	load_touch(opt.outage, "ready", "");
	if (!load_wait_file(opt.outage, "killed"))
		return 1;
	/* Held IDs first: every call succeeds until they are gone. */
	end = load_now() + LOAD_WAIT_S;
	while (load_now() < end && (rc = idgen_next(load_client, &id)) == IDGEN_OK) {
		load_add(&t, id, id);
		held++;
	}
	snprintf(text, sizeof(text), "code=%d held_after_kill=%" PRIu64 " msg=%s\n",
	    rc, held, idgen_last_error());
	printf("OUTAGE %s", text);
	fflush(stdout);
	load_touch(opt.outage, "errored", text);
	if (!load_wait_file(opt.outage, "restarted"))
		return 1;
	end = load_now() + LOAD_WAIT_S;
	while (load_now() < end && idgen_next(load_client, &id) != IDGEN_OK)
		usleep(20000);
	if (load_now() >= end) {
		printf("OUTAGE not resumed: %s\n", idgen_last_error());
		return 1;
	}
	load_add(&t, id, id);
	for (i = 0; i < 100000; i++)
		if (idgen_next(load_client, &id) == IDGEN_OK)
			load_add(&t, id, id);
		else
			return 1;
	load_add(&t, 0, 0);
	printf("OUTAGE resumed ids=%zu\n", t.n);
	if (opt.dump != NULL)
		load_dump(&t, opt.dump);
	free(t.r);
	return rc == IDGEN_EUNAVAILABLE || rc == IDGEN_ETIMEOUT ? 0 : 1;
}

static void
load_usage(void)
{
	fprintf(stderr, "usage: idgen_load -s LIST [-t THREADS] [-n IDS | -d SECONDS] "
	    "[--mix] [--dump FILE] [--fork] [--outage DIR] [--bench] [--allow-errors] "
	    "[--pace US] [--lead-ms MS] [--min-held N] [--fetch-ids N] [--stream] "
	    "[--until FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "servers", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "ids", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mix", no_argument, NULL, 'm' },
		{ "dump", required_argument, NULL, 'D' },
		{ "fork", no_argument, NULL, 'f' },
		{ "outage", required_argument, NULL, 'o' },
		{ "bench", no_argument, NULL, 'b' },
		{ "allow-errors", no_argument, NULL, 'a' },
		{ "pace", required_argument, NULL, 'p' },
		{ "lead-ms", required_argument, NULL, 'L' },
		{ "min-held", required_argument, NULL, 'H' },
		{ "fetch-ids", required_argument, NULL, 'F' },
		{ "stream", no_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	char		 err[IDGEN_ERR_LEN], path[4096];
	uint64_t	 id;
	pid_t		 pid;
	int		 ch, rc, st, i;

	idgen_options_init(&opt.o);
	while ((ch = getopt_long(argc, argv, "s:t:n:d:", longopts, NULL)) != -1) {
		switch (ch) {
		case 's': opt.servers = optarg; break;
		case 't': opt.threads = (unsigned)atoi(optarg); break;
		case 'n': opt.ids = strtoull(optarg, NULL, 10); break;
		case 'd': opt.duration = atof(optarg); break;
		case 'm': opt.mix = true; break;
		case 'D': opt.dump = optarg; break;
		case 'f': opt.fork = true; break;
		case 'o': opt.outage = optarg; break;
		case 'b': opt.bench = true; break;
		case 'a': opt.allow_errors = true; break;
		case 'S': opt.stream = true; break;
		case 'U': opt.until = optarg; break;
		case 'p': opt.pace_us = (unsigned)atoi(optarg); break;
		case 'L': opt.o.lead_ms = (unsigned)atoi(optarg); break;
		case 'H': opt.o.min_held = strtoull(optarg, NULL, 10); break;
		case 'F':
			opt.o.fetch_ids = (unsigned)atoi(optarg);
			if (opt.o.chunk > opt.o.fetch_ids)
				opt.o.chunk = opt.o.fetch_ids;
			break;
		default: load_usage();
		}
	}
	if (opt.servers == NULL || opt.threads < 1 || opt.threads > LOAD_THREADS_MAX ||
	    (opt.ids == 0 && opt.duration <= 0 && opt.outage == NULL))
		load_usage();
	if ((load_client = idgen_open(opt.servers, &opt.o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "idgen_load: %s\n", err);
		return 2;
	}
	if (opt.outage != NULL) {
		rc = load_outage();
		idgen_close(load_client);
		return rc;
	}
	if (!opt.fork) {
		rc = load_run("single", opt.dump);
		idgen_close(load_client);
		return rc;
	}
	/*
	 * The parent holds IDs (this thread's share, held ranges) before
	 * forking; after it, parent and child take more on this thread (the
	 * share the child inherited must not be used) and on new threads.
	 */
	for (i = 0; i < 1000; i++) {
		if (idgen_next(load_client, &id) != IDGEN_OK) {
			fprintf(stderr, "idgen_load: before fork: %s\n", idgen_last_error());
			return 1;
		}
		load_add(&load_main_t, id, id);
	}
	printf("FORK parent took 1000 IDs before fork, last %" PRIu64 "\n", id);
	fflush(stdout);
	if ((pid = fork()) < 0) {
		perror("fork");
		return 1;
	}
	/* Only the parent reports the IDs taken before the fork. */
	if (pid == 0)
		load_main_t.n = 0, load_main_t.open = false;
	for (i = 0; i < 1000; i++) {
		if (idgen_next(load_client, &id) != IDGEN_OK) {
			fprintf(stderr, "idgen_load: after fork: %s\n", idgen_last_error());
			return 1;
		}
		load_add(&load_main_t, id, id);
	}
	load_add(&load_main_t, 0, 0);
	snprintf(path, sizeof(path), "%s.%s", opt.dump ? opt.dump : "/dev/null",
	    pid == 0 ? "child" : "parent");
	rc = load_run(pid == 0 ? "child" : "parent", opt.dump ? path : NULL);
	idgen_close(load_client);
	free(load_main_t.r);
	if (pid == 0)
		_exit(rc);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		rc = 1;
	return rc;
}
