/*
 * statefile.h - the local state file: locked for one process, written atomically.
 *
 * Holds a state_rec (state.h). Every save writes a temporary file, fsyncs it,
 * renames it over the file and fsyncs the directory, so a crash leaves either
 * the old or the new record, never a mix. A lock on "<path>.lock" (flock) keeps
 * a second process off the same file. With no path the record lives in memory
 * only and saves succeed without writing (docs/design.md section 6).
 */
#ifndef IDGEN_STATEFILE_H
#define IDGEN_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

enum statefile_origin {
	STATEFILE_OFF,		/* no path: nothing is written */
	STATEFILE_NEW,		/* no file yet */
	STATEFILE_LOADED,	/* read and verified */
	STATEFILE_CORRUPT,	/* unreadable record, moved aside to <path>.corrupt */
};

struct statefile_counters {
	uint64_t	writes;
	uint64_t	failures;
	uint64_t	write_us_total;
	uint64_t	write_us_max;
};

struct statefile {
	char				*path;		/* NULL when off */
	int				 lock_fd;
	enum statefile_origin		 origin;
	struct state_rec		 rec;		/* the record; callers edit, then save */
	struct statefile_counters	 stats;
	char				 why[256];	/* why a file was not loaded */
	char				 last_error[256];
};

/*
 * Opens and locks path (NULL or "" = off) and loads the record. False with a
 * reason when the file cannot be locked (another process has it), created or
 * written: the service must not start then.
 */
bool	statefile_open(struct statefile *f, const char *path, char *err, size_t errlen)
	    __attribute__((warn_unused_result));
void	statefile_close(struct statefile *f);

/* Writes the record durably; false (last_error says why) when it could not. */
bool	statefile_save(struct statefile *f) __attribute__((warn_unused_result));

bool	statefile_on(const struct statefile *f);

#endif
