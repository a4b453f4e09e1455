/*
 * statefile.h - the local state file: one owner, written in place, never torn.
 *
 * Holds one record, a state_rec (state.h) and the namespace marks
 * (state_ns), in one of two fixed slots (docs/design.md section 6.10). Every
 * save writes the record into the slot not holding its newest copy and
 * fdatasyncs, so a crash leaves the old record or the new one, never a mix.
 * The earlier format's records (two of them, version 1 or 2 and idgen-ns) are
 * read, never written. The file keeps its inode: the
 * process holds flock on the file itself for its lifetime, so neither deleting
 * a side file nor a second process can share it. A copy of the file is not
 * locked; it is told apart by the owner the record names (state_owner_dead).
 * With no path the record lives in memory only and saves succeed without
 * writing (docs/design.md section 6).
 *
 * Once statefile_start() ran, one writer thread does every write: a save
 * formats a numbered snapshot of the record on the caller's thread, the writer
 * writes the newest snapshot waiting, and statefile_save_then() callers hear
 * on the event loop when a write covering their snapshot is durable or failed
 * (docs/design.md section 6.9).
 */
#ifndef IDGEN_STATEFILE_H
#define IDGEN_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "state.h"

/*
 * Bytes per slot; slot 1 starts here. Exactly the largest file of the
 * earlier format, read in slot 0's area (docs/design.md section 6.10).
 */
#define STATEFILE_SLOT	266240

enum statefile_origin {
	STATEFILE_OFF,		/* no path: nothing is written */
	STATEFILE_NEW,		/* no file yet, or an empty one */
	STATEFILE_LOADED,	/* read and verified */
	STATEFILE_CORRUPT,	/* unreadable record, copied aside to <path>.corrupt */
	STATEFILE_FOREIGN,	/* written on another machine: moved aside to
				 * <path>.foreign, its marks kept in foreign[] only */
};

struct statefile_counters {
	uint64_t	snapshots;	/* saves asked for; writes <= snapshots (coalesced) */
	uint64_t	writes;
	uint64_t	failures;
	uint64_t	write_us_total;
	uint64_t	write_us_max;
	uint64_t	loop_us_max;	/* longest a save held the loop (waits included) */
};

struct statefile {
	char				*path;		/* NULL when off */
	int				 fd;		/* the file, locked; -1 when off */
	int				 slot;		/* the slot holding the newest record */
	enum statefile_origin		 origin;
	unsigned			 loaded_version;	/* of the record read at open */
	struct state_rec		 rec;		/* the record; callers edit, then save */
	struct state_ns			 ns;		/* namespace marks; callers raise, then save */
	enum statefile_origin		 ns_origin;	/* NEW: none; CORRUPT: an earlier
							 * format's idgen-ns record was */
	char				 ns_why[256];	/* why that record was not loaded */
	char				*buf;		/* the caller's snapshot */
	struct state_owner		 me;		/* this process, stamped on the record */
	uint64_t			 dev, ino;	/* the file's, stamped on every write */
	struct state_mark		 foreign[SERVER_MAX];	/* a foreign file's marks:
							 * refuse in this process only,
							 * never copied, never saved */
	bool				 stamped;	/* the newest record was its last write */
	char				 stamp_why[256];	/* why not */
	struct statefile_counters	 stats;
	char				 why[1024];	/* why a file was not loaded */
	char				 last_error[256];
	uint64_t			 durable_gen;	/* newest snapshot written */
	uint64_t			 failed_gen;	/* newest snapshot whose write failed */
	int				(*datasync)(int fd);	/* fdatasync; tests replace it */
	/* pwrite; the simulation replaces it to own the bytes its disks hold. */
	ssize_t				(*pwrite)(int fd, const void *buf, size_t n, off_t off);
	/* Whether a process (pid, start time) still runs; the simulation replaces it. */
	bool				(*running)(uint64_t pid, uint64_t start);
	struct statefile_writer		*w;		/* NULL: saves write in the caller */
};

/* What became of a save: durable now, queued on the writer, or failed now. */
enum statefile_result {
	STATEFILE_DURABLE,
	STATEFILE_QUEUED,
	STATEFILE_FAILED,
};

/* Called on the loop once a write covering the snapshot is durable (ok) or failed. */
typedef void (*statefile_done)(void *arg, bool ok, uint64_t a, uint64_t b);

/*
 * Opens and locks path (NULL or "" = off) and loads the record (or the
 * earlier format's two). False with a reason when the file cannot be locked
 * (another process has it), created or read: the service must not start then.
 * A record that is corrupt is set aside (<path>.corrupt) and starts empty; of
 * the earlier format's two, the other is kept (origin, ns_origin).
 */
bool	statefile_open(struct statefile *f, const char *path, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
void	statefile_close(struct statefile *f);

/*
 * Writes the record durably, waiting for the writer when it runs (the wait
 * counted in loop_us_max); false (last_error says why) when it could not.
 */
bool	statefile_save(struct statefile *f) __attribute__((warn_unused_result));

/*
 * Takes a snapshot of the record. Without a writer (or with too many queued)
 * it is written now: DURABLE or FAILED, and fn is not called. Else QUEUED:
 * fn(arg, ok, a, b) runs on the loop once a write covering it is durable or
 * failed, in the order of the saves.
 */
enum statefile_result statefile_save_then(struct statefile *f, statefile_done fn, void *arg,
	    uint64_t a, uint64_t b) __attribute__((warn_unused_result));

/*
 * Starts the writer thread, its completions delivered on base's loop; false
 * with a reason when it cannot. statefile_stop() writes the newest snapshot,
 * joins the thread and drops what is still queued (never called back).
 */
bool	statefile_start(struct statefile *f, struct event_base *base, char *err,
	    size_t errlen) __attribute__((warn_unused_result));
void	statefile_stop(struct statefile *f);

bool	statefile_on(const struct statefile *f);

/*
 * True when the loaded record's owner is provably dead, so its lease may be
 * resumed; false with the reason otherwise (docs/design.md section 6.8).
 */
bool	statefile_owner_dead(const struct statefile *f, char *why, size_t whylen)
	    __attribute__((warn_unused_result));

/* This process's identity as the record stores it (machine, boot, pid namespace, pid). */
void	statefile_whoami(struct state_owner *me);

/*
 * What statefile_open takes this process's identity from: statefile_whoami
 * but in the simulation, which opens files thousands of times in one process
 * and reads the identity once (docs/design.md section 14: speed).
 */
extern void	(*statefile_whoami_fn)(struct state_owner *me);

/*
 * What statefile_open makes the file's missing directory with: mkdir(2) but
 * in the simulation, whose directory is made once per process and would
 * otherwise be asked for again at each of its thousands of opens.
 */
extern int	(*statefile_mkdir_fn)(const char *dir, mode_t mode);

/*
 * What a file's first write makes its name durable with: an fsync of the
 * directory holding path, but in the simulation, whose one directory
 * outlives every file in it and whose files' durability is the simulated
 * disk's (sim/disk.h).
 */
extern bool	(*statefile_sync_dir_fn)(const char *path);

/* A file as the stamp judges it: its device, inode and ctime. */
struct statefile_ctime {
	uint64_t	dev, ino;
	int64_t		sec;
	long		nsec;
};

/*
 * The stamp's two clocks (docs/design.md section 6.8, rule 4): the time a
 * write is stamped with (statefile_now_fn), and the file as it is now
 * (statefile_ctime_fn; false with errno). Both the kernel's, by system call,
 * so that no process-level time shim offsets one from the other; the
 * simulation gives both from its virtual time and its simulated disks, so
 * that a stall of the real clock cannot change a trace (section 14).
 */
extern bool	(*statefile_now_fn)(int64_t *sec, long *nsec);
extern bool	(*statefile_ctime_fn)(int fd, struct statefile_ctime *c);

/*
 * How the file is read at open: pread, but in the simulation, which opens
 * files hundreds of thousands of times and reads their holes as zeros
 * without asking the kernel to copy them (docs/design.md section 14: speed).
 */
extern ssize_t	(*statefile_pread_fn)(int fd, void *buf, size_t n, off_t off);

#endif
