/*
 * disk.c - simulated disks under the state files (disk.h).
 */
#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vclock.h"

enum { DISK_CLEAN, DISK_DIRTY, DISK_DROPPED };

#define DISK_MAX	8	/* disks attached at once */

struct disk_counts disk_counts;

static struct {
	bool			on;
	struct rng_state	rng;		/* the disks' own generator */
	unsigned		eio_pm;		/* a sync fails with EIO */
	unsigned		last_pm;	/* a sync is the host's last act */
	unsigned		power_pm;	/* a crash on the file is a power loss */
	unsigned		event_pm;	/* an event takes a host's power */
	unsigned		slow_pm;	/* a sync takes up to slow_ms of virtual time */
	unsigned		slow_ms;
	uint64_t		spell_us;	/* after an EIO every sync fails for up to this */
	uint64_t		failing_until;	/* virtual us: the disk fails every sync */
	struct disk		*at[DISK_MAX];
	/* Every simulated file's ctime this schedule, by inode (disk_ctime). */
	struct {
		uint64_t	dev, ino;
		int64_t		us;		/* virtual unix us */
	}			files[DISK_FILES];
	unsigned		nfiles;
	bool			untracked;
	/* Each real inode's simulated number this schedule, in the order seen (disk_ino). */
	struct {
		uint64_t	dev, ino;
	}			inos[DISK_INOS];
	unsigned		ninos;
} D;

static uint64_t	disk_draw(uint64_t n);
static struct disk *disk_of(int fd);
static bool	disk_read(struct disk *d, const char *path);
static uint64_t	disk_ino(uint64_t dev, uint64_t ino);
static void	disk_touch(const struct stat *st);

/* Each state file descriptor's device and inode (disk_fd); set: told since the process began. */
#define DISK_FDS	1024
static struct {
	uint64_t	dev, ino;
	bool		set;
} disk_fds[DISK_FDS];

/* A draw from the disks' own generator; the schedule's is left as it was. */
static uint64_t
disk_draw(uint64_t n)
{
	return rng_draw_from(&D.rng, n);
}

bool
disk_schedule(uint64_t seed, int mode)
{
	/* Nothing of the last schedule: its files, its attachments (all detached). */
	D.nfiles = 0;
	D.ninos = 0;
	D.untracked = false;
	memset(D.at, 0, sizeof(D.at));
	D.on = mode == 1 || (mode == 0 && (rng_mix(seed ^ UINT64_C(0x6469736b2d666c74)) & 1));
	if (!D.on)
		return false;
	/* "disk-rng" */
	rng_seed_state(&D.rng, rng_mix(seed) ^ UINT64_C(0x6469736b2d726e67));
	/* Each schedule its weather: some disks fail often, some never. */
	D.eio_pm = disk_draw(4) == 0 ? 0 : (unsigned)(1 + disk_draw(150));
	D.last_pm = (unsigned)disk_draw(20);
	D.power_pm = (unsigned)(200 + disk_draw(801));
	D.event_pm = (unsigned)disk_draw(30);
	D.slow_pm = disk_draw(2) == 0 ? 0 : (unsigned)disk_draw(200);
	D.slow_ms = (unsigned)(1 + disk_draw(300));
	D.spell_us = disk_draw(2) == 0 ? 0 : 1000 * (1 + disk_draw(3000));
	D.failing_until = 0;
	disk_counts.schedules++;
	return true;
}

bool
disk_on(void)
{
	return D.on;
}

static struct disk *
disk_of(int fd)
{
	for (unsigned k = 0; k < DISK_MAX; k++)
		if (D.at[k] != NULL && D.at[k]->fd == fd)
			return D.at[k];
	return NULL;
}

/*
 * The file's contents as both cache and platter: all of it durable, and
 * zeros past it. A sector dropped under the file's synced length kept what
 * the platter held before: the bytes of an earlier schedule's file, so a
 * seed's trace hung on what ran before it in the process (seed 17879 after
 * 17878).
 */
static bool
disk_read(struct disk *d, const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	d->cache_len = d->platter_len = 0;
	memset(d->state, DISK_CLEAN, sizeof(d->state));
	memset(d->cache, 0, sizeof(d->cache));
	memset(d->platter, 0, sizeof(d->platter));
	if (fd < 0)
		return errno == ENOENT;
	n = disk_pread(fd, d->cache, DISK_BYTES, 0);
	close(fd);
	if (n < 0)
		return false;
	memcpy(d->platter, d->cache, (size_t)n);
	d->cache_len = d->platter_len = (size_t)n;
	return true;
}

void
disk_attach(struct disk *d, int fd, const char *path)
{
	if (!d->valid)
		d->valid = disk_read(d, path);
	d->fd = fd;
	d->doomed = false;
	for (unsigned k = 0; k < DISK_MAX; k++)
		if (D.at[k] == d)
			return;
	for (unsigned k = 0; k < DISK_MAX; k++)
		if (D.at[k] == NULL) {
			D.at[k] = d;
			return;
		}
}

void
disk_detach(struct disk *d)
{
	d->fd = -1;
	for (unsigned k = 0; k < DISK_MAX; k++)
		if (D.at[k] == d)
			D.at[k] = NULL;
}

void
disk_forget(struct disk *d)
{
	d->valid = false;
}

/* Written into the cache (and the real file, which reads show): dirty until synced. */
ssize_t
disk_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct disk *d = disk_of(fd);
	ssize_t w = pwrite(fd, buf, n, off);
	struct stat st;

	if (w >= 0 && fd >= 0 && fd < DISK_FDS && disk_fds[fd].set) {
		memset(&st, 0, sizeof(st));
		st.st_dev = (dev_t)disk_fds[fd].dev;
		st.st_ino = (ino_t)disk_fds[fd].ino;
		disk_touch(&st);
	} else if (w >= 0 && fstat(fd, &st) == 0)
		disk_touch(&st);
	if (d == NULL || !d->valid || w < 0)
		return w;
	if ((size_t)off + (size_t)w > DISK_BYTES) {
		d->valid = false;	/* outside the model: the file is read afresh */
		return w;
	}
	memcpy(d->cache + off, buf, (size_t)w);
	if ((size_t)off + (size_t)w > d->cache_len)
		d->cache_len = (size_t)off + (size_t)w;
	for (size_t s = (size_t)off / DISK_SECTOR; s * DISK_SECTOR < (size_t)off + (size_t)w; s++)
		d->state[s] = DISK_DIRTY;
	return w;
}

void
disk_fd(int fd, uint64_t *dev, uint64_t *ino)
{
	if (fd >= 0 && fd < DISK_FDS) {
		disk_fds[fd].dev = *dev;
		disk_fds[fd].ino = *ino;
		disk_fds[fd].set = true;
	}
	*ino = disk_ino(*dev, *ino);
	*dev = DISK_DEV;
}

/*
 * The simulated inode number of real inode ino on device dev: DISK_INO0 and
 * up in the order this schedule first asks, the same for every run of the
 * seed. The real numbers differ from run to run (tmpfs counts its inodes
 * over the machine), and the stamp's check hashes them: a stamp torn across
 * a dropped sector kept or lost its tail by them (seed 3232).
 */
static uint64_t
disk_ino(uint64_t dev, uint64_t ino)
{
	unsigned k;

	for (k = 0; k < D.ninos && k < DISK_INOS; k++)
		if (D.inos[k].dev == dev && D.inos[k].ino == ino)
			return DISK_INO0 + k;
	/* Past the table's end a number is used again: never within one schedule's few files. */
	k = D.ninos++ % DISK_INOS;
	D.inos[k].dev = dev;
	D.inos[k].ino = ino;
	return DISK_INO0 + k;
}

/*
 * Every dirty sector written to the platter, or EIO: each dirty sector
 * written or not (drawn), the ones not written dropped (never written by a
 * later sync unless written again). A sync that succeeds may be the host's
 * last act (doomed: the driver takes its power away at once).
 */
int
disk_datasync(int fd)
{
	struct disk *d = disk_of(fd);
	bool eio;

	if (d == NULL || !d->valid)
		return 0;
	disk_counts.syncs++;
	/*
	 * A slow sync: its caller waits while virtual time passes. Saves
	 * write in their caller here (no writer thread): the whole process
	 * waits, as an idserver without its writer would (design 14).
	 */
	if (D.slow_pm > 0 && disk_draw(1000) < D.slow_pm) {
		uint64_t us = 1000 * (1 + disk_draw(D.slow_ms));

		vclock_advance_us(us);
		disk_counts.slow++;
		disk_counts.slow_us += us;
	}
	eio = vclock_now_us() < D.failing_until || (D.eio_pm > 0 && disk_draw(1000) < D.eio_pm);
	if (eio && vclock_now_us() >= D.failing_until && D.spell_us > 0)
		D.failing_until = vclock_now_us() + disk_draw(D.spell_us);
	for (size_t s = 0; s < DISK_SECTORS; s++) {
		if (d->state[s] != DISK_DIRTY)
			continue;
		if (eio && disk_draw(2) == 0) {
			d->state[s] = DISK_DROPPED;
			continue;
		}
		memcpy(d->platter + s * DISK_SECTOR, d->cache + s * DISK_SECTOR, DISK_SECTOR);
		d->state[s] = DISK_CLEAN;
	}
	if (d->cache_len > d->platter_len && !eio)
		d->platter_len = d->cache_len;
	if (eio) {
		disk_counts.eio++;
		errno = EIO;
		return -1;
	}
	if (D.last_pm > 0 && disk_draw(1000) < D.last_pm) {
		d->doomed = true;
		disk_counts.last_acts++;
	}
	return 0;
}

bool
disk_power_drawn(void)
{
	return D.on && disk_draw(1000) < D.power_pm;
}

int
disk_power_event(unsigned hosts)
{
	if (!D.on || disk_draw(1000) >= D.event_pm)
		return -1;
	return (int)disk_draw(hosts);
}

bool
disk_power_loss(struct disk *d, const char *path, char *what, size_t whatlen)
{
	unsigned mode = (unsigned)disk_draw(3);	/* 0 all kept, 1 all lost, 2 torn */
	uint64_t kept = 0, lost = 0;
	size_t len;

	if (!d->valid) {
		snprintf(what, whatlen, "nothing modelled");
		return true;
	}
	len = d->platter_len;
	/* Past the synced length the file's bytes are zeros unless a sector was kept. */
	if (d->cache_len > len)
		memset(d->platter + len, 0, d->cache_len - len);
	for (size_t s = 0; s < DISK_SECTORS; s++) {
		bool keep;

		if (d->state[s] == DISK_CLEAN || s * DISK_SECTOR >= d->cache_len)
			continue;
		keep = mode == 0 || (mode == 2 && disk_draw(2) == 0);
		if (keep) {
			size_t end = (s + 1) * DISK_SECTOR < d->cache_len ?
			    (s + 1) * DISK_SECTOR : d->cache_len;

			memcpy(d->platter + s * DISK_SECTOR, d->cache + s * DISK_SECTOR,
			    end - s * DISK_SECTOR);
			if (end > len)
				len = end;
			kept++;
		} else {
			lost++;
		}
		d->state[s] = DISK_CLEAN;
	}
	d->platter_len = len;
	memcpy(d->cache, d->platter, len);
	d->cache_len = len;
	d->doomed = false;
	disk_counts.power_losses++;
	disk_counts.kept += kept;
	disk_counts.lost += lost;
	disk_counts.torn += kept > 0 && lost > 0;
	snprintf(what, whatlen, "%llu unsynced sectors kept, %llu lost",
	    (unsigned long long)kept, (unsigned long long)lost);
	return disk_write_file(path, d->platter, len);
}

bool
disk_write_file(const char *path, const void *buf, size_t len)
{
	static const unsigned char zero[DISK_SECTOR];
	const unsigned char *b = buf;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok = fd >= 0;

	for (size_t at = 0; ok && at < len;) {
		size_t end = at;

		while (end < len && memcmp(b + end, zero, len - end < DISK_SECTOR ? len - end :
		    DISK_SECTOR) != 0)
			end += len - end < DISK_SECTOR ? len - end : DISK_SECTOR;
		if (end > at)
			ok = pwrite(fd, b + at, end - at, (off_t)at) == (ssize_t)(end - at);
		at = end < len ? end + (len - end < DISK_SECTOR ? len - end : DISK_SECTOR) : end;
	}
	ok = ok && ftruncate(fd, (off_t)len) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* st's file changed now (virtual time); a new one takes the slot changed longest ago. */
static void
disk_touch(const struct stat *st)
{
	unsigned k, old = 0;

	for (k = 0; k < D.nfiles; k++) {
		if (D.files[k].dev == (uint64_t)st->st_dev &&
		    D.files[k].ino == (uint64_t)st->st_ino)
			break;
		if (D.files[k].us < D.files[old].us)
			old = k;
	}
	if (k == D.nfiles && D.nfiles == DISK_FILES)
		k = old;
	else if (k == D.nfiles)
		D.nfiles++;
	D.files[k].dev = (uint64_t)st->st_dev;
	D.files[k].ino = (uint64_t)st->st_ino;
	D.files[k].us = vclock_unix_us();
}

void
disk_changed(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		disk_touch(&st);
}

bool
disk_now(int64_t *sec, long *nsec)
{
	int64_t us = vclock_unix_us();

	*sec = us / 1000000;
	*nsec = (long)(us % 1000000) * 1000;
	return true;
}

bool
disk_ctime(int fd, struct statefile_ctime *c)
{
	int64_t us = vclock_unix_us();
	struct stat st;
	bool seen = false;

	if (fstat(fd, &st) != 0)
		return false;
	for (unsigned k = 0; k < D.nfiles && !seen; k++)
		if (D.files[k].dev == (uint64_t)st.st_dev &&
		    D.files[k].ino == (uint64_t)st.st_ino) {
			us = D.files[k].us;
			seen = true;
		}
	/* Outside the model: changed now, as far as the stamp can tell (said by disk_untracked). */
	D.untracked = D.untracked || !seen;
	c->dev = DISK_DEV;
	c->ino = disk_ino((uint64_t)st.st_dev, (uint64_t)st.st_ino);
	c->sec = us / 1000000;
	c->nsec = (long)(us % 1000000) * 1000;
	return true;
}

bool
disk_untracked(void)
{
	bool was = D.untracked;

	D.untracked = false;
	return was;
}

/*
 * pread, holes read as zeros here rather than copied by the kernel: a state
 * file's slot 1 starts 260 KiB in, and the gap before it is a hole (tmpfs
 * keeps it so), read at every open. The bytes are pread's.
 */
ssize_t
disk_pread(int fd, void *buf, size_t n, off_t off)
{
	unsigned char *b = buf;
	struct stat st;
	off_t at = off, end;

	if (fstat(fd, &st) != 0)
		return pread(fd, buf, n, off);
	if (off >= st.st_size)
		return 0;
	end = st.st_size - off < (off_t)n ? st.st_size : off + (off_t)n;
	while (at < end) {
		off_t data = lseek(fd, at, SEEK_DATA), hole;
		ssize_t r;

		if (data < 0 && errno != ENXIO)
			return pread(fd, buf, n, off);
		if (data < 0 || data >= end) {
			/* A hole to the end. */
			memset(b + (at - off), 0, (size_t)(end - at));
			break;
		}
		memset(b + (at - off), 0, (size_t)(data - at));
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return pread(fd, buf, n, off);
		if (hole > end)
			hole = end;
		while (data < hole) {
			r = pread(fd, b + (data - off), (size_t)(hole - data), data);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return r < 0 ? r : data - off;
			data += r;
		}
		at = hole;
	}
	return end - off;
}
