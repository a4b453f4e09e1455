/*
 * disk.h - a simulated disk under each idserver's state file (docs/design.md
 * section 14, simulated disks): statefile.c's pwrite and fdatasync go through
 * it, and it keeps what the page cache holds and what the platter holds, per
 * 512-byte sector. fdatasync may fail with EIO (the sectors it did not write
 * are dropped from the cache's dirty set, as Linux does, so a later sync
 * does not write them), be slow (virtual time passes while its caller
 * waits) or be the host's last act; a power loss keeps, loses
 * or tears (sector by sector, in any order) what was never synced. Its draws
 * come from a generator of its own, seeded from the schedule's seed, so a
 * schedule without disk faults draws nothing more.
 */
#ifndef IDSIM_DISK_H
#define IDSIM_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rng.h"
#include "statefile.h"	/* STATEFILE_SLOT */

#define DISK_SECTOR	512
#define DISK_BYTES	(2 * STATEFILE_SLOT)	/* statefile.c's largest file: two slots */
#define DISK_SECTORS	(DISK_BYTES / DISK_SECTOR)
#define DISK_FILES	256	/* inodes whose ctime a schedule keeps */
#define DISK_INOS	1024	/* inodes a schedule numbers (disk_fd, disk_ctime) */
/* The simulated device and first inode number: a tmpfs's widths, so a stamp's length is a real one's. */
#define DISK_DEV	UINT64_C(0x1b)
#define DISK_INO0	UINT64_C(10000001)

/* One file's disk: the cache (what reads see) and the platter (what survives). */
struct disk {
	int		fd;		/* the file's descriptor while open; -1 */
	bool		valid;		/* cache and platter describe the file */
	size_t		cache_len, platter_len;
	unsigned char	cache[DISK_BYTES];
	unsigned char	platter[DISK_BYTES];
	unsigned char	state[DISK_SECTORS];	/* DISK_CLEAN, DISK_DIRTY, DISK_DROPPED */
	bool		doomed;		/* its last fdatasync was the host's last act */
};

/* Over all schedules, or this one (disk_schedule resets what it says). */
struct disk_counts {
	uint64_t	schedules;	/* with disk faults on */
	uint64_t	syncs, eio, last_acts, power_losses;
	uint64_t	slow, slow_us;	/* slow syncs, and the virtual time they took */
	uint64_t	kept, lost;	/* unsynced sectors at a power loss */
	uint64_t	torn;		/* power losses keeping some of them, not all */
};

extern struct disk_counts disk_counts;

/*
 * This schedule's disks: on with mode 1 (all), off with 2 (none), else in
 * half the schedules by the seed's own mix; the weather (rates of EIO, last
 * acts, power losses) drawn from the disks' own generator. True: on.
 */
bool	disk_schedule(uint64_t seed, int mode);
bool	disk_on(void);

/* d serves the file open as fd at path (its contents read when not valid). */
void	disk_attach(struct disk *d, int fd, const char *path);
void	disk_detach(struct disk *d);
/* The file was replaced or edited outside the disk (the driver's cp): read afresh. */
void	disk_forget(struct disk *d);

/*
 * statefile.h's seams: the disk attached with fd, else the real calls.
 * disk_pwrite is every simulated state file's, disks or not: a write
 * changes its file's simulated ctime.
 */
ssize_t	disk_pwrite(int fd, const void *buf, size_t n, off_t off);
int	disk_datasync(int fd);

/*
 * fd is a state file's descriptor, open on inode *ino of device *dev (its
 * statefile's dev and ino, as statefile_open's fstat found them):
 * disk_pwrite's writes to it move that inode's ctime without an fstat each.
 * Told at every open whose file is written through disk_pwrite, so a
 * descriptor number used again is told afresh. *dev and *ino become the
 * simulated ones (DISK_DEV, disk_ctime's numbering), which the stamps carry.
 */
void	disk_fd(int fd, uint64_t *dev, uint64_t *ino);

/*
 * The stamp's clocks in virtual time (statefile.h's statefile_now_fn and
 * statefile_ctime_fn; docs/design.md section 14): the time is the true
 * virtual wall clock (the kernel's, which no idserver's skew moves), and a
 * file's ctime the virtual time of the last change made to it, kept per
 * inode over the schedule: each write through disk_pwrite, and each change
 * the driver makes outside the state file's code (disk_changed: a copy
 * renamed into place, older contents put back). A power loss changes no
 * ctime: the inode keeps the one of its last change. Device and inode are
 * simulated: DISK_DEV, and the real file's inode numbered in the order the
 * schedule first sees it (tmpfs: new inodes for new files, so a copy renamed
 * into place is a new number), for the real numbers differ from run to run.
 */
bool	disk_now(int64_t *sec, long *nsec);
bool	disk_ctime(int fd, struct statefile_ctime *c);
void	disk_changed(const char *path);
/* A ctime asked of a file no change was seen to (outside the model), since the last call. */
bool	disk_untracked(void);

/* pread, the file's holes read as zeros without the kernel's copy (statefile_pread_fn). */
ssize_t	disk_pread(int fd, void *buf, size_t n, off_t off);
/*
 * The file at path (created, or cut to nothing) becomes len bytes of buf:
 * its sectors of zeros left as holes, which read as the zeros they are and
 * cost the kernel nothing (most of a state file: slot 1 starts 260 KiB in).
 */
bool	disk_write_file(const char *path, const void *buf, size_t len);

/* Whether a crash of the host on d's file is a power loss (drawn). */
bool	disk_power_drawn(void);
/* At an event: the host (of hosts) that loses its power now, or -1 (drawn). */
int	disk_power_event(unsigned hosts);
/*
 * A power loss: the file at path becomes what d's platter holds plus the
 * unsynced sectors kept (all, none, or each drawn: torn). what says which.
 */
bool	disk_power_loss(struct disk *d, const char *path, char *what, size_t whatlen);

#endif
