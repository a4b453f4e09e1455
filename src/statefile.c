/*
 * statefile.c - lock, load and atomically rewrite the local state file.
 */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATEFILE_READ_MAX	(STATE_MAX_LEN * 2)

static bool	statefile_lock(struct statefile *f, char *err, size_t errlen);
static void	statefile_load(struct statefile *f);
static bool	statefile_sync_dir(const char *path);
static uint64_t	statefile_now_us(void);

static uint64_t
statefile_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

bool
statefile_on(const struct statefile *f)
{
	return f->path != NULL;
}

/* Takes "<path>.lock" for this process; a holder's pid goes into the message. */
static bool
statefile_lock(struct statefile *f, char *err, size_t errlen)
{
	char lpath[4096], pid[32];
	ssize_t n;

	snprintf(lpath, sizeof(lpath), "%s.lock", f->path);
	f->lock_fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f->lock_fd < 0) {
		snprintf(err, errlen, "state_file: cannot open the lock file '%s': %s", lpath,
		    strerror(errno));
		return false;
	}
	if (flock(f->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		n = pread(f->lock_fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (e == EWOULDBLOCK)
			snprintf(err, errlen, "state_file '%s' is locked by another idserver "
			    "(pid %s): each process needs its own state_file", f->path,
			    pid[0] ? pid : "?");
		else
			snprintf(err, errlen, "state_file: cannot lock '%s': %s", lpath,
			    strerror(e));
		close(f->lock_fd);
		f->lock_fd = -1;
		return false;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(f->lock_fd, 0) != 0 || pwrite(f->lock_fd, pid, (size_t)n, 0) != n) {
		/* The pid is only for the message above: not worth refusing over. */
	}
	return true;
}

/* Reads and verifies the record; anything wrong leaves a fresh one and says why. */
static void
statefile_load(struct statefile *f)
{
	char buf[STATEFILE_READ_MAX], bad[4096];
	ssize_t n;
	int fd;

	memset(&f->rec, 0, sizeof(f->rec));
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		f->origin = STATEFILE_NEW;
		snprintf(f->why, sizeof(f->why), errno == ENOENT ? "no state file yet" :
		    "cannot read it: %s", strerror(errno));
		if (errno == ENOENT)
			return;
		f->origin = STATEFILE_CORRUPT;
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof(buf)) {
		snprintf(f->why, sizeof(f->why), n < 0 ? "read failed" : "too large");
	} else if (state_parse(buf, (size_t)n, &f->rec, f->why, sizeof(f->why))) {
		f->origin = STATEFILE_LOADED;
		return;
	}
	/* Keep the bad bytes for a post-mortem; the next save starts afresh. */
	f->origin = STATEFILE_CORRUPT;
	snprintf(bad, sizeof(bad), "%s.corrupt", f->path);
	if (rename(f->path, bad) != 0)
		unlink(f->path);
	memset(&f->rec, 0, sizeof(f->rec));
}

/* Opens, locks and loads; the caller's first save proves the file can be written. */
bool
statefile_open(struct statefile *f, const char *path, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->lock_fd = -1;
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
	if (f->lock_fd >= 0)
		close(f->lock_fd);
	f->lock_fd = -1;
	free(f->path);
	f->path = NULL;
}

/* fsyncs the directory holding path, so a rename is durable. */
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

/* Temporary file, fsync, rename, fsync of the directory: old or new, never torn. */
bool
statefile_save(struct statefile *f)
{
	char buf[STATE_MAX_LEN], tmp[4096];
	uint64_t t0, us;
	size_t len;
	int fd;

	if (f->path == NULL)
		return true;
	t0 = statefile_now_us();
	len = state_format(&f->rec, buf, sizeof(buf));
	if (len == 0) {
		snprintf(f->last_error, sizeof(f->last_error), "record does not format");
		f->stats.failures++;
		return false;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (write(fd, buf, len) != (ssize_t)len || fdatasync(fd) != 0) {
		int e = errno;

		close(fd);
		unlink(tmp);
		errno = e ? e : EIO;
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, f->path) != 0 || !statefile_sync_dir(f->path))
		goto fail;
	us = statefile_now_us() - t0;
	f->stats.writes++;
	f->stats.write_us_total += us;
	if (us > f->stats.write_us_max)
		f->stats.write_us_max = us;
	f->last_error[0] = '\0';
	return true;
fail:
	snprintf(f->last_error, sizeof(f->last_error), "cannot write '%s': %s", f->path,
	    strerror(errno));
	f->stats.failures++;
	return false;
}
