/*
 * statefile.c - lock, load and rewrite in place the local state file, on a
 * writer thread of its own once started (docs/design.md section 6.9).
 */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "clk.h"
#include "rules.h"

/*
 * The earlier format, read in slot 0's area when no slot holds a version 3
 * record (docs/design.md section 6.10): two slots of 2,048 bytes, then two of
 * STATE_NS_SLOT for the namespace marks.
 */
#define STATEFILE_OLD_SLOT	2048
#define STATEFILE_NS_AT		(2 * STATEFILE_OLD_SLOT)
_Static_assert(STATEFILE_SLOT == STATEFILE_NS_AT + 2 * STATE_NS_SLOT,
    "slot 0 covers the largest file of the earlier format");
#define STATEFILE_SIZE_MAX	(2 * STATEFILE_SLOT)
#define STATEFILE_BUF		(STATE_MAX_LEN + STATE_STAMP_LEN)	/* a record, its stamp */
_Static_assert(STATEFILE_BUF <= STATEFILE_SLOT, "a record and its stamp fit a slot");
#define STATEFILE_WAIT_MAX	64		/* saves queued for their callback */
#define STATEFILE_OUT_MAX	16		/* write outcomes the loop has not read */
/*
 * How long after a write's stamp the file's ctime may be: the slot's pwrite
 * (docs/design.md section 6.8, rule 4). Later means
 * the file changed since; a false "changed" only costs a resumption.
 */
#define STATEFILE_STAMP_SLACK_MS 200

/* A save whose caller hears when a write covering its snapshot ended. */
struct statefile_wait {
	uint64_t	 gen;
	statefile_done	 fn;
	void		*arg;
	uint64_t	 a, b;
	bool		 resolved;	/* the first write at or above gen ended ... */
	bool		 ok;		/* ... durable */
};

/* One write's outcome: the snapshot it wrote, and whether it is durable. */
struct statefile_out {
	uint64_t	 gen;
	bool		 ok;
};

/*
 * The writer thread. Under mu: the snapshot waiting (next, next_len,
 * next_gen; 0 = none), stop, and what the writes did (durable, failed,
 * stats, err). The slot and cur are the thread's while it runs; the queue is
 * the loop's only. The buffers move by pointer: the loop's f->buf and next
 * swap at a post, next and cur at a take.
 */
struct statefile_writer {
	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 work;		/* a snapshot waits, or stop */
	pthread_cond_t		 done;		/* a write ended */
	char			*next;
	size_t			 next_len;
	char			*cur;
	uint64_t		 next_gen;
	bool			 stop;
	uint64_t		 durable;
	uint64_t		 failed;
	struct statefile_counters stats;
	char			 err[256];
	struct statefile_out	 out[STATEFILE_OUT_MAX];	/* in write order */
	unsigned		 nout;
	int			 slot;
	int			 efd;		/* eventfd: a write ended, wakes the loop */
	struct event		*ev;
	struct statefile_wait	 q[STATEFILE_WAIT_MAX];
	unsigned		 head, count;
};

static bool	statefile_lock(struct statefile *f, char *err, size_t errlen);
static bool	statefile_load(struct statefile *f, char *err, size_t errlen);
static bool	statefile_read(int fd, char *buf, size_t len, size_t *got);
static int	statefile_pick(const char *buf, size_t n, struct state_rec *rec,
		    struct state_ns *ns, size_t *at, bool *old, char *why, size_t whylen);
static bool	statefile_load_ns(struct statefile *f, const char *buf, size_t n);
static void	statefile_set_aside(struct statefile *f, const char *buf, size_t n, off_t keep,
		    const char *suffix);
static bool	statefile_foreign(struct statefile *f);
static bool	statefile_sync_dir(const char *path);
static void	statefile_id_file(const char *path, char *out, size_t outlen);
static bool	statefile_proc(uint64_t pid, uint64_t *start, char *st);
static bool	statefile_running(uint64_t pid, uint64_t start);
static bool	statefile_now(int64_t *sec, long *nsec);
static bool	statefile_ctime(int fd, struct statefile_ctime *c);
static bool	statefile_snapshot(struct statefile *f, uint64_t *gen, size_t *len);
static bool	statefile_write(struct statefile *f, int slot, bool first, uint64_t gen,
		    char *rec, size_t len, char *err, size_t errlen);
static void	statefile_stamp_load(struct statefile *f, const char *buf, size_t n,
		    size_t at);
static void	statefile_count(struct statefile_counters *st, bool ok, uint64_t us);
static enum statefile_result statefile_direct(struct statefile *f, size_t len,
		    uint64_t gen);
static void	statefile_post(struct statefile *f, size_t len, uint64_t gen);
static void	statefile_pull(struct statefile *f);
static void	statefile_resolve(struct statefile_writer *w, struct statefile_out o);
static void	statefile_outcome(struct statefile_writer *w, uint64_t gen, bool ok);
static bool	statefile_wait_gen(struct statefile *f, uint64_t gen);
static void	*statefile_writer_main(void *arg);
static void	statefile_held(struct statefile *f, uint64_t t0);
static enum statefile_result statefile_queue(struct statefile *f, bool wait,
		    statefile_done fn, void *arg, uint64_t a, uint64_t b);
static void	statefile_wake_cb(evutil_socket_t fd, short what, void *arg);
static void	statefile_deliver(struct statefile *f);
static void	statefile_writer_free(struct statefile_writer *w);

bool
statefile_on(const struct statefile *f)
{
	return f->path != NULL;
}

/* Reads the first line of a small identity file, keeping only [0-9a-zA-Z-]. */
static void
statefile_id_file(const char *path, char *out, size_t outlen)
{
	char line[128];
	size_t i, n = 0;
	FILE *fp = fopen(path, "re");

	out[0] = '\0';
	if (fp == NULL)
		return;
	if (fgets(line, sizeof(line), fp) != NULL)
		for (i = 0; line[i] != '\0' && line[i] != '\n' && n + 1 < outlen; i++)
			if ((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' &&
			    line[i] <= 'z') || (line[i] >= 'A' && line[i] <= 'Z') || line[i] == '-')
				out[n++] = line[i];
	out[n] = '\0';
	fclose(fp);
}

/* A process's start time (ticks after boot) and state letter, from /proc/PID/stat. */
static bool
statefile_proc(uint64_t pid, uint64_t *start, char *st)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	size_t n;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", pid);
	fp = fopen(path, "re");
	if (fp == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return false;
	/* Field 3 is the state, fields 4 to 21 are skipped, the start time is field 22. */
	if (sscanf(p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
	    "%*s %*s %*s %llu", st, &v) != 2)
		return false;
	*start = v;
	return true;
}

/* The same process (pid and start time) still runs, and is not a zombie. */
static bool
statefile_running(uint64_t pid, uint64_t start)
{
	uint64_t s;
	char st;

	if (!statefile_proc(pid, &s, &st))
		return false;
	return s == start && st != 'Z' && st != 'X';
}

void
statefile_whoami(struct state_owner *me)
{
	struct stat st;
	char c;

	memset(me, 0, sizeof(*me));
	statefile_id_file("/etc/machine-id", me->machine, sizeof(me->machine));
	if (me->machine[0] == '\0')
		statefile_id_file("/var/lib/dbus/machine-id", me->machine, sizeof(me->machine));
	statefile_id_file("/proc/sys/kernel/random/boot_id", me->boot, sizeof(me->boot));
	if (stat("/proc/self/ns/pid", &st) == 0)
		me->pidns = (uint64_t)st.st_ino;
	me->pid = (uint64_t)getpid();
	if (!statefile_proc(me->pid, &me->start, &c))
		me->boot[0] = '\0';	/* without a start time nothing can be proven later */
}

/* Where statefile_open takes the identity from (the simulation's own, statefile.h). */
void (*statefile_whoami_fn)(struct state_owner *me) = statefile_whoami;

/*
 * The stamp's time: CLOCK_REALTIME_COARSE, the clock the kernel stamps a
 * file's ctime with, read by system call so that no process-level time shim
 * (libfaketime) offsets the two.
 */
static bool
statefile_now(int64_t *sec, long *nsec)
{
	struct timespec now;

	if (syscall(SYS_clock_gettime, CLOCK_REALTIME_COARSE, &now) != 0)
		return false;
	*sec = (int64_t)now.tv_sec;
	*nsec = now.tv_nsec;
	return true;
}

/* The file's device, inode and ctime by system call, as the kernel holds them, unshifted. */
static bool
statefile_ctime(int fd, struct statefile_ctime *c)
{
	struct statx now;

	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_INO | STATX_CTIME, &now) != 0)
		return false;
	if ((now.stx_mask & (STATX_INO | STATX_CTIME)) != (STATX_INO | STATX_CTIME)) {
		errno = ENOTSUP;
		return false;
	}
	c->dev = (uint64_t)makedev(now.stx_dev_major, now.stx_dev_minor);
	c->ino = now.stx_ino;
	c->sec = now.stx_ctime.tv_sec;
	c->nsec = (long)now.stx_ctime.tv_nsec;
	return true;
}

/* The stamp's clocks (statefile.h): the kernel's, or the simulation's. */
bool (*statefile_now_fn)(int64_t *sec, long *nsec) = statefile_now;
bool (*statefile_ctime_fn)(int fd, struct statefile_ctime *c) = statefile_ctime;
ssize_t (*statefile_pread_fn)(int fd, void *buf, size_t n, off_t off) = pread;

bool
statefile_owner_dead(const struct statefile *f, char *why, size_t whylen)
{
	return state_owner_dead(&f->rec.owner, &f->me, f->running, why, whylen);
}

/* Reads up to len bytes from the start of the file. */
static bool
statefile_read(int fd, char *buf, size_t len, size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = statefile_pread_fn(fd, buf + *got, len - *got, (off_t)*got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return true;
}

/*
 * Picks the newest valid record: of the two version 3 slots, else (*old: the
 * earlier format, docs/design.md section 6.10) of the two 2,048-byte slots at
 * the start of slot 0's area (a version 1 file is one record there). Returns
 * its slot, with *at where its stamp is and a version 3 record's namespace
 * marks in ns (NULL: not kept), or -1 with slot 0's reason.
 */
static int
statefile_pick(const char *buf, size_t n, struct state_rec *rec, struct state_ns *ns,
    size_t *at, bool *old, char *why, size_t whylen)
{
	struct state_ns t = { 0, ns != NULL ? ns->cap : 0, NULL };
	struct state_rec r;
	char w[128];
	int slot, best = -1;

	memset(rec, 0, sizeof(*rec));
	*at = 0;
	if (ns != NULL && (t.m = calloc(ns->cap, sizeof(*t.m))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (int pass = 0; pass < 2 && best < 0; pass++) {
		size_t size = pass ? STATEFILE_OLD_SLOT : STATEFILE_SLOT;

		*old = pass == 1;

		for (slot = 0; slot < 2 && (size_t)slot * size < n; slot++) {
			const char *b = buf + (size_t)slot * size;
			size_t len = n - (size_t)slot * size < size ? n - (size_t)slot * size : size;

			if (*old)
				len = strnlen(b, len);
			if ((len >= 14 && memcmp(b, "idgen-state 3\n", 14) == 0) == *old)
				continue;	/* each format in its own slots */
			if (!state_parse(b, len, &r, ns != NULL ? &t : NULL, w, sizeof(w))) {
				if (slot == 0)
					snprintf(why, whylen, "%s", w);
				continue;
			}
			if (best >= 0 && r.gen <= rec->gen)
				continue;
			*rec = r;
			best = slot;
			*at = (size_t)(b - buf) + (*old ? STATEFILE_OLD_SLOT - STATE_STAMP_LEN :
			    state_end(b, len));
			if (ns != NULL) {
				memcpy(ns->m, t.m, t.n * sizeof(*t.m));
				ns->n = t.n;
			}
		}
	}
	free(t.m);
	return best;
}

/*
 * Keeps the bad bytes for a post-mortem in <path>.corrupt and cuts the file
 * to keep bytes: what follows is rewritten by the next saves.
 */
static void
statefile_set_aside(struct statefile *f, const char *buf, size_t n, off_t keep,
    const char *suffix)
{
	char bad[4096];
	int fd;

	snprintf(bad, sizeof(bad), "%s.%s", f->path, suffix);
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, buf, n) != (ssize_t)n || fsync(fd) != 0) {
			/* Only a post-mortem copy: the file itself is what matters. */
		}
		close(fd);
	}
	if (ftruncate(f->fd, keep) != 0) {
		/* The next save overwrites the slots anyway. */
	}
}

/*
 * The earlier format's namespace marks (n > 0 bytes from STATEFILE_NS_AT):
 * the newest valid idgen-ns record of its two slots into f->ns. False, the
 * set empty and ns_origin CORRUPT, when neither is valid.
 */
static bool
statefile_load_ns(struct statefile *f, const char *buf, size_t n)
{
	struct state_ns r = { 0, f->ns.cap, calloc(f->ns.cap, sizeof(*r.m)) };
	uint64_t g, gen = 0;
	char w[128] = "out of memory";
	bool found = false;

	f->ns.n = 0;
	for (size_t off = 0; r.m != NULL && off < n; off += STATE_NS_SLOT) {
		if (!state_ns_parse(buf + off, n - off < STATE_NS_SLOT ? n - off : STATE_NS_SLOT,
		    &r, &g, w, sizeof(w)) || (found && g <= gen))
			continue;
		memcpy(f->ns.m, r.m, r.n * sizeof(*r.m));
		f->ns.n = r.n;
		gen = g;
		found = true;
	}
	free(r.m);
	if (!found) {
		snprintf(f->ns_why, sizeof(f->ns_why), "%s", w);
		f->ns_origin = STATEFILE_CORRUPT;
	}
	return found;
}

/*
 * A record written on another machine (a copied /var/lib/idgen, a golden
 * image, a volume of another deployment) is not this process's to build on:
 * its marks move to foreign[], where they refuse tickets in this process only
 * and are never copied to a server or saved, and the process starts fresh
 * (docs/design.md section 6.8). True when the record was foreign.
 */
static bool
statefile_foreign(struct statefile *f)
{
	const struct state_owner *o = &f->rec.owner;

	if (o->machine[0] == '\0' || f->me.machine[0] == '\0' ||
	    strcmp(o->machine, f->me.machine) == 0)
		return false;
	memcpy(f->foreign, f->rec.mark, sizeof(f->foreign));
	snprintf(f->why, sizeof(f->why), "written on another machine (machine-id %s, host %s, "
	    "servers '%s'): moved to %s.foreign; its marks refuse tickets in this process "
	    "only, until it restarts, and are never copied to the ticket servers; its "
	    "namespace marks and lease are not used", o->machine, f->rec.host, f->rec.servers,
	    f->path);
	memset(&f->rec, 0, sizeof(f->rec));
	f->origin = STATEFILE_FOREIGN;
	f->slot = 1;
	f->ns.n = 0;
	f->ns_origin = STATEFILE_NEW;
	f->stamped = false;
	return true;
}

/*
 * Judges the newest record's stamp (at, after the record) against the file as it is now, before
 * anything of this process writes it: the lease may be resumed only from the
 * very file, at its latest write (docs/design.md section 6.8, rule 4).
 */
static void
statefile_stamp_load(struct statefile *f, const char *buf, size_t n, size_t at)
{
	struct state_stamp st;
	struct statefile_ctime now;

	f->stamped = false;
	if (at + STATE_STAMP_LEN > n || !state_stamp_parse(buf + at, STATE_STAMP_LEN, &st))
		memset(&st, 0, sizeof(st));
	if (!statefile_ctime_fn(f->fd, &now)) {
		snprintf(f->stamp_why, sizeof(f->stamp_why), "cannot stat the file: %s",
		    strerror(errno));
		return;
	}
	f->stamped = state_stamp_check(&st, f->rec.gen, now.dev, now.ino, now.sec, now.nsec,
	    STATEFILE_STAMP_SLACK_MS, f->stamp_why, sizeof(f->stamp_why));
}

/*
 * Reads and verifies the record: a version 3 slot, else the earlier format's
 * records (docs/design.md section 6.10), whose first save goes to slot 1 so
 * that they stay until a version 3 record is durable. A corrupt record starts
 * empty, says why and is set aside, and the earlier format's other record is
 * kept (section 6.8). False when the file cannot be read: in doubt, the
 * service does not start.
 */
static bool
statefile_load(struct statefile *f, char *err, size_t errlen)
{
	char *buf = malloc(STATEFILE_SIZE_MAX + 1);
	size_t n, at = 0;
	off_t keep = 0;
	bool old = false;

	memset(&f->rec, 0, sizeof(f->rec));
	f->ns.n = 0;
	f->origin = f->ns_origin = STATEFILE_NEW;
	f->slot = 1;		/* the first save goes to slot 0 */
	if (buf == NULL || !statefile_read(f->fd, buf, STATEFILE_SIZE_MAX + 1, &n)) {
		snprintf(err, errlen, "state_file: cannot read '%s': %s", f->path,
		    buf == NULL ? "out of memory" : strerror(errno));
		free(buf);
		return false;
	}
	if (n == 0) {
		snprintf(f->why, sizeof(f->why), "no state file yet");
	} else if (n > STATEFILE_SIZE_MAX) {
		snprintf(f->why, sizeof(f->why), "too large");
		f->origin = STATEFILE_CORRUPT;
	} else if ((f->slot = statefile_pick(buf, n, &f->rec, &f->ns, &at, &old, f->why,
	    sizeof(f->why))) >= 0 && !old) {
		f->origin = STATEFILE_LOADED;
	} else {
		/* The earlier format: its main record (picked above) and its namespace marks. */
		f->origin = f->slot >= 0 ? STATEFILE_LOADED : STATEFILE_CORRUPT;
		if (n > STATEFILE_NS_AT && !statefile_load_ns(f, buf + STATEFILE_NS_AT,
		    (n < STATEFILE_SLOT ? n : STATEFILE_SLOT) - STATEFILE_NS_AT))
			keep = f->origin == STATEFILE_LOADED ? STATEFILE_NS_AT : 0;
		else if (f->origin == STATEFILE_CORRUPT && f->ns.n > 0)
			keep = (off_t)n;
		f->slot = f->origin == STATEFILE_LOADED || keep > 0 ? 0 : 1;
	}
	if (f->origin == STATEFILE_LOADED) {
		f->loaded_version = f->rec.gen == 0 && f->rec.owner.pid == 0 ? 1 : STATE_VERSION;
		statefile_stamp_load(f, buf, n, at);
	} else {
		memset(&f->rec, 0, sizeof(f->rec));
	}
	if (f->ns.n > 0 && f->ns_origin == STATEFILE_NEW)
		f->ns_origin = STATEFILE_LOADED;
	/* Never cut away a valid record: a main record's, or the namespace marks. */
	if (f->origin == STATEFILE_LOADED && statefile_foreign(f))
		statefile_set_aside(f, buf, n, 0, "foreign");
	else if (f->origin == STATEFILE_CORRUPT || f->ns_origin == STATEFILE_CORRUPT)
		statefile_set_aside(f, buf, n, keep, "corrupt");
	free(buf);
	return true;
}

/*
 * Takes flock on the file itself: its inode lives as long as the file, since
 * saves write in place. A holder's pid, read from its record, goes into the
 * message. On failure the file stays open for the caller to close.
 */
static bool
statefile_lock(struct statefile *f, char *err, size_t errlen)
{
	char *buf, why[64];
	struct state_rec r;
	struct stat st;
	size_t n, at;
	bool old;
	int e;

	f->fd = open(f->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f->fd < 0)
		return check_fail(err, errlen, "state_file: cannot open '%s': %s", f->path,
		    strerror(errno));
	if (flock(f->fd, LOCK_EX | LOCK_NB) == 0) {
		if (fstat(f->fd, &st) != 0)
			return check_fail(err, errlen, "state_file: cannot stat '%s': %s", f->path,
			    strerror(errno));
		f->dev = (uint64_t)st.st_dev;
		f->ino = (uint64_t)st.st_ino;
		return true;
	}
	e = errno;
	if (e == EWOULDBLOCK) {
		buf = malloc(STATEFILE_SIZE_MAX);
		if (buf == NULL || !statefile_read(f->fd, buf, STATEFILE_SIZE_MAX, &n) ||
		    statefile_pick(buf, n, &r, NULL, &at, &old, why, sizeof(why)) < 0)
			r.owner.pid = 0;
		free(buf);
		snprintf(err, errlen, "state_file '%s' is locked by another idserver (pid %"
		    PRIu64 "): each process needs its own state_file", f->path, r.owner.pid);
	} else {
		snprintf(err, errlen, "state_file: cannot lock '%s': %s", f->path, strerror(e));
	}
	return false;
}

/* Where statefile_open makes the file's directory (the simulation's own, statefile.h). */
int (*statefile_mkdir_fn)(const char *dir, mode_t mode) = mkdir;

/* Opens, locks and loads; the caller's first save proves the file can be written. */
bool
statefile_open(struct statefile *f, const char *path, char *err, size_t errlen)
{
	char *dup, *dir;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->datasync = fdatasync;
	f->pwrite = pwrite;
	f->running = statefile_running;
	statefile_whoami_fn(&f->me);
	/* Held whether or not there is a file: callers raise marks either way. */
	f->ns.m = calloc(NS_MARKS_MAX, sizeof(*f->ns.m));
	f->ns.cap = NS_MARKS_MAX;
	if (f->ns.m == NULL)
		return check_fail(err, errlen, "out of memory");
	if (path == NULL || path[0] == '\0') {
		f->origin = f->ns_origin = STATEFILE_OFF;
		return true;
	}
	f->path = strdup(path);
	f->buf = malloc(STATEFILE_BUF);
	dup = strdup(path);	/* dirname's to cut */
	if (f->path == NULL || f->buf == NULL || dup == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* One level of missing directory is created (e.g. /var/lib/idgen). */
	dir = dirname(dup);
	if (statefile_mkdir_fn(dir, 0750) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "state_file: cannot create its directory '%s': %s", dir,
		    strerror(errno));
		goto fail;
	}
	if (statefile_lock(f, err, errlen) && statefile_load(f, err, errlen)) {
		free(dup);
		return true;
	}
fail:
	free(dup);
	statefile_close(f);
	return false;
}

void
statefile_close(struct statefile *f)
{
	statefile_stop(f);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	f->path = NULL;
	free(f->ns.m);
	f->ns.m = NULL;
	f->ns.n = f->ns.cap = 0;
	free(f->buf);
	f->buf = NULL;
}

/* fsyncs the directory holding path, so a new file's name is durable. */
static bool
statefile_sync_dir(const char *path)
{
	char *dup = strdup(path);
	int fd;
	bool ok;

	if (dup == NULL)
		return false;
	fd = open(dirname(dup), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dup);
	if (fd < 0)
		return false;
	ok = fsync(fd) == 0;
	close(fd);
	return ok;
}

/* What a first write syncs the directory with (the simulation's own, statefile.h). */
bool (*statefile_sync_dir_fn)(const char *path) = statefile_sync_dir;

/*
 * Formats the record, its save count raised, into f->buf: the snapshot
 * numbered gen, *len bytes. False (last_error says why) when it does not
 * format.
 */
static bool
statefile_snapshot(struct statefile *f, uint64_t *gen, size_t *len)
{
	f->rec.gen++;
	if ((*len = state_format(&f->rec, &f->ns, f->buf, STATE_MAX_LEN)) == 0) {
		f->rec.gen--;
		snprintf(f->last_error, sizeof(f->last_error), "record does not format");
		f->stats.failures++;
		return false;
	}
	f->stats.snapshots++;
	*gen = f->rec.gen;
	return true;
}

/*
 * Writes a snapshot, len bytes of rec, and its stamp right after it into the
 * slot that does not hold the newest record (slot is the one that does), in
 * one pwrite, then fdatasyncs: a crash tears at most that slot, and the other
 * still holds the previous record (docs/design.md section 6.10).
 */
static bool
statefile_write(struct statefile *f, int slot, bool first, uint64_t gen, char *rec,
    size_t len, char *err, size_t errlen)
{
	/* Never over the newest record (an earlier format's sits in slot 0). */
	off_t off = (off_t)((size_t)(1 - slot) * STATEFILE_SLOT);
	struct state_stamp st = { gen, f->dev, f->ino, 0, 0 };

	/*
	 * Stamped last, just before the write whose time the file's ctime
	 * records, on the clock the kernel stamps it with (statefile_now).
	 */
	memset(rec + len, 0, STATE_STAMP_LEN);
	if (statefile_now_fn(&st.sec, &st.nsec) &&
	    !state_stamp_format(&st, rec + len, STATE_STAMP_LEN))
		memset(rec + len, 0, STATE_STAMP_LEN);
	errno = 0;
	len += STATE_STAMP_LEN;
	/*
	 * A failed fdatasync is no durability: the kernel may have dropped the
	 * pages it could not write and a later sync reports nothing of them
	 * (sync-checked, docs/design.md 6.9).
	 */
	if (f->pwrite(f->fd, rec, len, off) != (ssize_t)len ||
	    (f->datasync(f->fd) != 0 && RULE_ON(RULE_SYNC_CHECKED)) ||
	    /* Once: the name of a file this process created must survive a crash too. */
	    (first && !statefile_sync_dir_fn(f->path)))
		return check_fail(err, errlen, "cannot write '%s': %s", f->path,
		    strerror(errno ? errno : EIO));
	err[0] = '\0';
	return true;
}

/* Counts a write's outcome and, when it succeeded, its time. */
static void
statefile_count(struct statefile_counters *st, bool ok, uint64_t us)
{
	if (!ok) {
		st->failures++;
		return;
	}
	st->writes++;
	st->write_us_total += us;
	if (us > st->write_us_max)
		st->write_us_max = us;
}

/* Writes a snapshot (len bytes of f->buf) in the caller (no writer thread). */
static enum statefile_result
statefile_direct(struct statefile *f, size_t len, uint64_t gen)
{
	uint64_t t0 = (uint64_t)clk_mono_us();
	bool ok = statefile_write(f, f->slot, f->stats.writes == 0, gen, f->buf, len,
	    f->last_error, sizeof(f->last_error));

	statefile_count(&f->stats, ok, (uint64_t)clk_mono_us() - t0);
	if (!ok) {
		f->failed_gen = gen;
		return STATEFILE_FAILED;
	}
	f->slot = 1 - f->slot;
	f->durable_gen = gen;
	return STATEFILE_DURABLE;
}

/*
 * Hands the writer the newest snapshot, replacing one it has not started, by
 * a swap of buffers. The signal comes after the unlock: a writer woken inside
 * the lock would only block on it again, one more chance to take the loop's
 * CPU.
 */
static void
statefile_post(struct statefile *f, size_t len, uint64_t gen)
{
	struct statefile_writer *w = f->w;
	char *t;

	pthread_mutex_lock(&w->mu);
	t = w->next;
	w->next = f->buf;
	f->buf = t;
	w->next_len = len;
	w->next_gen = gen;
	/*
	 * Broadcast, though one thread waits: glibc's bug 25847 (fixed upstream
	 * after Debian 12's 2.36) can lose a pthread_cond_signal; test_tier once
	 * hung in statefile_stop with the writer asleep and its stop set.
	 */
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
}

/* Every queued save not yet resolved, up to o.gen, takes write o's outcome. */
static void
statefile_resolve(struct statefile_writer *w, struct statefile_out o)
{
	for (unsigned k = 0; k < w->count; k++) {
		struct statefile_wait *q = &w->q[(w->head + k) % STATEFILE_WAIT_MAX];

		if (q->gen > o.gen)
			break;
		if (!q->resolved) {
			q->resolved = true;
			q->ok = o.ok;
		}
	}
}

/*
 * Notes a write's outcome for the loop; mu held. With the loop far behind,
 * the last two merge into the newer gen, durable only if both were: a save
 * may then be called back failed though covered, never the other way.
 */
static void
statefile_outcome(struct statefile_writer *w, uint64_t gen, bool ok)
{
	if (w->nout == STATEFILE_OUT_MAX)
		ok = ok && w->out[--w->nout].ok;
	w->out[w->nout++] = (struct statefile_out){ gen, ok };
}

/*
 * Copies what the writes did into the loop's view and resolves the queued
 * saves they covered, in write order; mu held (or the thread joined).
 */
static void
statefile_pull(struct statefile *f)
{
	struct statefile_writer *w = f->w;
	uint64_t snapshots = f->stats.snapshots, loop_us_max = f->stats.loop_us_max;

	for (unsigned k = 0; k < w->nout; k++)
		statefile_resolve(w, w->out[k]);
	w->nout = 0;
	f->stats = w->stats;
	f->stats.snapshots = snapshots;
	f->stats.loop_us_max = loop_us_max;
	f->durable_gen = w->durable;
	f->failed_gen = w->failed;
	snprintf(f->last_error, sizeof(f->last_error), "%s", w->err);
}

/* Waits until the write of snapshot gen (or of a newer one) ended; true if durable. */
static bool
statefile_wait_gen(struct statefile *f, uint64_t gen)
{
	struct statefile_writer *w = f->w;

	pthread_mutex_lock(&w->mu);
	while (w->durable < gen && w->failed < gen)
		pthread_cond_wait(&w->done, &w->mu);
	statefile_pull(f);
	pthread_mutex_unlock(&w->mu);
	return f->durable_gen >= gen;
}

/* Notes how long a save held its caller (the loop), since t0. */
static void
statefile_held(struct statefile *f, uint64_t t0)
{
	uint64_t us = (uint64_t)clk_mono_us() - t0;

	if (us > f->stats.loop_us_max)
		f->stats.loop_us_max = us;
}

/*
 * A save: written in the caller (no writer thread), or posted to the writer
 * and, when wait (or its queue is full), waited for; else fn is called back
 * once it ended (nothing with fn NULL).
 */
static enum statefile_result
statefile_queue(struct statefile *f, bool wait, statefile_done fn, void *arg, uint64_t a,
    uint64_t b)
{
	struct statefile_writer *w = f->w;
	uint64_t gen;
	size_t len;

	if (f->path == NULL)
		return STATEFILE_DURABLE;
	if (!statefile_snapshot(f, &gen, &len))
		return STATEFILE_FAILED;
	if (w == NULL)
		return statefile_direct(f, len, gen);
	statefile_post(f, len, gen);
	if (!wait && fn == NULL)
		return STATEFILE_QUEUED;
	if (wait || w->count == STATEFILE_WAIT_MAX)
		return statefile_wait_gen(f, gen) ? STATEFILE_DURABLE : STATEFILE_FAILED;
	w->q[(w->head + w->count++) % STATEFILE_WAIT_MAX] =
	    (struct statefile_wait){ gen, fn, arg, a, b, false, false };
	return STATEFILE_QUEUED;
}

bool
statefile_save(struct statefile *f)
{
	uint64_t t0 = (uint64_t)clk_mono_us();
	bool ok = statefile_queue(f, true, NULL, NULL, 0, 0) == STATEFILE_DURABLE;

	/* With the writer running, the caller is the loop, waiting for it (6.9). */
	if (f->w != NULL)
		statefile_held(f, t0);
	return ok;
}

enum statefile_result
statefile_save_then(struct statefile *f, statefile_done fn, void *arg, uint64_t a, uint64_t b)
{
	uint64_t t0 = (uint64_t)clk_mono_us();
	enum statefile_result r = statefile_queue(f, false, fn, arg, a, b);

	statefile_held(f, t0);
	return r;
}

/*
 * The writer: takes the newest snapshot waiting, writes it outside the lock,
 * publishes the outcome and wakes the loop; at stop, once nothing waits.
 */
static void *
statefile_writer_main(void *arg)
{
	struct statefile *f = arg;
	struct statefile_writer *w = f->w;
	static const uint64_t one = 1;
	char err[256], *t;
	struct sched_param sp = { 0 };
	uint64_t gen, t0;
	size_t len;
	bool ok, first;

	/*
	 * SCHED_BATCH: woken by the loop, the writer does not preempt it on a
	 * shared CPU (the loop could then wait behind other processes for its
	 * CPU: measured, 41 of 515 saves held the loop over 0.5 ms on a loaded
	 * machine, 8 with this; docs/design.md 6.9). Best effort.
	 */
	(void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	/* Named for top -H, and for tests that slow its fdatasync alone (strace -p). */
	(void)pthread_setname_np(pthread_self(), "idgen-state");
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->next_gen == 0 && !w->stop)
			pthread_cond_wait(&w->work, &w->mu);
		if (w->next_gen == 0)
			break;
		t = w->cur;
		w->cur = w->next;
		w->next = t;
		len = w->next_len;
		gen = w->next_gen;
		w->next_gen = 0;
		first = w->stats.writes == 0;
		pthread_mutex_unlock(&w->mu);
		t0 = (uint64_t)clk_mono_us();
		ok = statefile_write(f, w->slot, first, gen, w->cur, len, err, sizeof(err));
		if (ok)
			w->slot = 1 - w->slot;
		pthread_mutex_lock(&w->mu);
		statefile_count(&w->stats, ok, (uint64_t)clk_mono_us() - t0);
		if (ok)
			w->durable = gen;
		else
			w->failed = gen;
		statefile_outcome(w, gen, ok);
		snprintf(w->err, sizeof(w->err), "%s", err);
		pthread_cond_broadcast(&w->done);
		pthread_mutex_unlock(&w->mu);
		if (write(w->efd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
			/* The counter is not read yet: a wake-up is pending anyway. */
		}
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Calls back, in order, every queued save the first write at or above its
 * snapshot resolved: durable, or failed, and then the save is not covered
 * even if a later write succeeded (docs/design.md section 6.9).
 */
static void
statefile_deliver(struct statefile *f)
{
	struct statefile_writer *w = f->w;

	while (w != NULL && w->count > 0 && w->q[w->head].resolved) {
		struct statefile_wait q = w->q[w->head];

		w->head = (w->head + 1) % STATEFILE_WAIT_MAX;
		w->count--;
		q.fn(q.arg, q.ok, q.a, q.b);
		w = f->w;	/* a callback may have stopped the writer */
	}
}

/* On the loop: a write ended. */
static void
statefile_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct statefile *f = arg;
	uint64_t n;

	(void)what;
	if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n)) {
		/* Nothing to read: a wake-up already handled. */
	}
	pthread_mutex_lock(&f->w->mu);
	statefile_pull(f);
	pthread_mutex_unlock(&f->w->mu);
	statefile_deliver(f);
}

static void
statefile_writer_free(struct statefile_writer *w)
{
	if (w->ev != NULL)
		event_free(w->ev);
	if (w->efd >= 0)
		close(w->efd);
	pthread_cond_destroy(&w->done);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	free(w->next);
	free(w->cur);
	free(w);
}

bool
statefile_start(struct statefile *f, struct event_base *base, char *err, size_t errlen)
{
	struct statefile_writer *w;
	sigset_t all, old;
	int e;

	if (f->path == NULL || f->w != NULL)
		return true;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return check_fail(err, errlen, "state_file: out of memory");
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	w->slot = f->slot;
	w->stats = f->stats;
	w->durable = f->durable_gen;
	w->failed = f->failed_gen;
	w->next = malloc(STATEFILE_BUF);
	w->cur = malloc(STATEFILE_BUF);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd >= 0 && w->next != NULL && w->cur != NULL)
		w->ev = event_new(base, w->efd, EV_READ | EV_PERSIST, statefile_wake_cb, f);
	if (w->ev == NULL || event_add(w->ev, NULL) != 0) {
		snprintf(err, errlen, "state_file: cannot set up its writer: %s", strerror(errno));
		statefile_writer_free(w);
		return false;
	}
	f->w = w;
	/* Signals stay the loop's: the writer blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&w->thread, NULL, statefile_writer_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		snprintf(err, errlen, "state_file: cannot start its writer thread: %s",
		    strerror(e));
		f->w = NULL;
		statefile_writer_free(w);
		return false;
	}
	return true;
}

void
statefile_stop(struct statefile *f)
{
	struct statefile_writer *w = f->w;

	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->work);	/* not signal: see statefile_post */
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	statefile_pull(f);
	f->slot = w->slot;
	f->w = NULL;
	statefile_writer_free(w);
}
