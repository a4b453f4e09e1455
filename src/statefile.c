/*
 * statefile.c - lock, load and rewrite in place the local state file.
 */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clk.h"

#define STATEFILE_SLOT	STATE_MAX_LEN		/* bytes per slot; the file holds two */

static bool	statefile_lock(struct statefile *f, char *err, size_t errlen);
static void	statefile_load(struct statefile *f);
static bool	statefile_read(int fd, char *buf, size_t len, size_t *got);
static int	statefile_pick(const char *buf, size_t n, struct state_rec *rec, char *why,
		    size_t whylen);
static void	statefile_set_aside(struct statefile *f, const char *buf, size_t n);
static bool	statefile_sync_dir(const char *path);
static void	statefile_id_file(const char *path, char *out, size_t outlen);
static bool	statefile_proc(uint64_t pid, uint64_t *start, char *st);
static bool	statefile_running(uint64_t pid, uint64_t start);

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
	int field;
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
	p += 2;
	*st = *p;
	/* Field 3 is the state; the start time is field 22. */
	for (field = 3; field < 22 && p != NULL; field++) {
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL || sscanf(p, "%llu", &v) != 1)
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

bool
statefile_owner_dead(const struct statefile *f, char *why, size_t whylen)
{
	return state_owner_dead(&f->rec.owner, &f->me, statefile_running, why, whylen);
}

/* Reads up to len bytes from the start of the file. */
static bool
statefile_read(int fd, char *buf, size_t len, size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = pread(fd, buf + *got, len - *got, (off_t)*got);
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
 * Picks the newest valid record of the two slots (a version 1 file is one
 * record at the start, read only when no slot holds a newer one); returns its
 * slot, or -1 with the reason of slot 0.
 */
static int
statefile_pick(const char *buf, size_t n, struct state_rec *rec, char *why, size_t whylen)
{
	struct state_rec r;
	char w[128];
	int slot, best = -1;

	memset(rec, 0, sizeof(*rec));
	for (slot = 0; slot < 2; slot++) {
		size_t off = (size_t)slot * STATEFILE_SLOT, len;

		if (off >= n)
			break;
		len = strnlen(buf + off, n - off < STATEFILE_SLOT ? n - off : STATEFILE_SLOT);
		if (!state_parse(buf + off, len, &r, w, sizeof(w))) {
			if (slot == 0)
				snprintf(why, whylen, "%s", w);
			continue;
		}
		if (best < 0 || r.gen > rec->gen) {
			*rec = r;
			best = slot;
		}
	}
	return best;
}

/* Keeps the bad bytes for a post-mortem in <path>.corrupt; the next save starts afresh. */
static void
statefile_set_aside(struct statefile *f, const char *buf, size_t n)
{
	char bad[4096];
	int fd;

	snprintf(bad, sizeof(bad), "%s.corrupt", f->path);
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, buf, n) != (ssize_t)n || fsync(fd) != 0) {
			/* Only a post-mortem copy: the file itself is what matters. */
		}
		close(fd);
	}
	if (ftruncate(f->fd, 0) != 0) {
		/* The next save overwrites the slots anyway. */
	}
}

/* Reads and verifies the record; anything wrong leaves a fresh one and says why. */
static void
statefile_load(struct statefile *f)
{
	char buf[2 * STATEFILE_SLOT + 1];
	size_t n;

	memset(&f->rec, 0, sizeof(f->rec));
	f->origin = STATEFILE_NEW;
	f->slot = 1;		/* the first save goes to slot 0 */
	if (!statefile_read(f->fd, buf, sizeof(buf), &n)) {
		snprintf(f->why, sizeof(f->why), "cannot read it: %s", strerror(errno));
		f->origin = STATEFILE_CORRUPT;
		return;
	}
	if (n == 0) {
		snprintf(f->why, sizeof(f->why), "no state file yet");
		return;
	}
	if (n == sizeof(buf))
		snprintf(f->why, sizeof(f->why), "too large");
	else if ((f->slot = statefile_pick(buf, n, &f->rec, f->why, sizeof(f->why))) >= 0) {
		f->origin = STATEFILE_LOADED;
		f->loaded_version = f->rec.gen == 0 && f->rec.owner.pid == 0 ? 1 : STATE_VERSION;
		return;
	}
	f->origin = STATEFILE_CORRUPT;
	f->slot = 1;
	statefile_set_aside(f, buf, n);
	memset(&f->rec, 0, sizeof(f->rec));
}

/*
 * Takes flock on the file itself: its inode lives as long as the file, since
 * saves write in place. A holder's pid, read from its record, goes into the message.
 */
static bool
statefile_lock(struct statefile *f, char *err, size_t errlen)
{
	char buf[2 * STATEFILE_SLOT + 1], why[64];
	struct state_rec r;
	size_t n;
	int e;

	f->fd = open(f->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f->fd < 0) {
		snprintf(err, errlen, "state_file: cannot open '%s': %s", f->path,
		    strerror(errno));
		return false;
	}
	if (flock(f->fd, LOCK_EX | LOCK_NB) == 0)
		return true;
	e = errno;
	if (e == EWOULDBLOCK) {
		if (!statefile_read(f->fd, buf, sizeof(buf) - 1, &n) ||
		    statefile_pick(buf, n, &r, why, sizeof(why)) < 0)
			r.owner.pid = 0;
		snprintf(err, errlen, "state_file '%s' is locked by another idserver (pid %"
		    PRIu64 "): each process needs its own state_file", f->path, r.owner.pid);
	} else {
		snprintf(err, errlen, "state_file: cannot lock '%s': %s", f->path, strerror(e));
	}
	close(f->fd);
	f->fd = -1;
	return false;
}

/* Opens, locks and loads; the caller's first save proves the file can be written. */
bool
statefile_open(struct statefile *f, const char *path, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	statefile_whoami(&f->me);
	if (path == NULL || path[0] == '\0') {
		f->origin = STATEFILE_OFF;
		return true;
	}
	f->path = strdup(path);
	if (f->path == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	{
		/* One level of missing directory is created (e.g. /var/lib/idgen). */
		char *dup = strdup(path), *dir;

		if (dup == NULL) {
			snprintf(err, errlen, "out of memory");
			statefile_close(f);
			return false;
		}
		dir = dirname(dup);
		if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "state_file: cannot create its directory '%s': %s",
			    dir, strerror(errno));
			free(dup);
			statefile_close(f);
			return false;
		}
		free(dup);
	}
	if (!statefile_lock(f, err, errlen)) {
		statefile_close(f);
		return false;
	}
	statefile_load(f);
	return true;
}

void
statefile_close(struct statefile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	f->path = NULL;
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

/*
 * Writes the record into the slot that does not hold the newest one, padded
 * to the whole slot, and fdatasyncs it: a crash tears at most that slot, and
 * the other still holds the previous record.
 */
bool
statefile_save(struct statefile *f)
{
	char buf[STATEFILE_SLOT];
	uint64_t t0, us, gen;
	size_t len;
	off_t off;

	if (f->path == NULL)
		return true;
	t0 = (uint64_t)clk_mono_us();
	gen = f->rec.gen;
	f->rec.gen = gen + 1;
	memset(buf, 0, sizeof(buf));
	len = state_format(&f->rec, buf, sizeof(buf));
	if (len == 0) {
		f->rec.gen = gen;
		snprintf(f->last_error, sizeof(f->last_error), "record does not format");
		f->stats.failures++;
		return false;
	}
	/* Never over the newest record (a version 1 record sits in slot 0). */
	off = (off_t)((1 - f->slot) * STATEFILE_SLOT);
	if (pwrite(f->fd, buf, sizeof(buf), off) != (ssize_t)sizeof(buf) ||
	    fdatasync(f->fd) != 0)
		goto fail;
	/* Once: the name of a file this process created must survive a crash too. */
	if (f->stats.writes == 0 && !statefile_sync_dir(f->path))
		goto fail;
	f->slot = 1 - f->slot;
	us = (uint64_t)clk_mono_us() - t0;
	f->stats.writes++;
	f->stats.write_us_total += us;
	if (us > f->stats.write_us_max)
		f->stats.write_us_max = us;
	f->last_error[0] = '\0';
	return true;
fail:
	f->rec.gen = gen;
	snprintf(f->last_error, sizeof(f->last_error), "cannot write '%s': %s", f->path,
	    strerror(errno ? errno : EIO));
	f->stats.failures++;
	return false;
}
