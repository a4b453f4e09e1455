/*
 * trim.c - a timer that returns freed heap pages after a flood.
 */
#include "trim.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include "clk.h"

static void	trim_cb(evutil_socket_t fd, short what, void *arg);
static void	trim_nop(evutil_socket_t fd, short what, void *arg);
static void	trim_arm(struct trim *t);

static void
trim_arm(struct trim *t)
{
	struct timeval tv = clk_tv_ms(t->interval_ms);

	evtimer_add(t->tick, &tv);
}

/*
 * Replies are built in buffers of tens of KB, freed after each write. With
 * glibc's defaults a free() at the heap's top gave the pages back (brk) and
 * the next reply faulted them in again: in a measurement after a flood of
 * BLOCK requests, /v1/ids?count=1000 cost 93 us of CPU instead of 61. The
 * timer below gives freed pages back once a flood is over, so free() itself
 * keeps up to free_bytes at the top, and allocations up to TRIM_MMAP_BYTES
 * come from the heap (setting the one turns off glibc's moving of the other).
 */
#define TRIM_MMAP_BYTES		(1024 * 1024)

bool
trim_init(struct trim *t, struct event_base *base, unsigned interval_ms, size_t free_bytes)
{
	if (interval_ms != 0) {
		(void)mallopt(M_TRIM_THRESHOLD, (int)free_bytes);
		(void)mallopt(M_MMAP_THRESHOLD, TRIM_MMAP_BYTES);
	}
	t->tick = NULL;
	t->interval_ms = interval_ms;
	t->free_bytes = free_bytes;
	t->kept = mallinfo2().fordblks;
	t->follow = false;
	t->used_at_trim = 0;
	t->trims = 0;
	t->trim_us_max = 0;
	if (interval_ms == 0)
		return true;
	t->tick = evtimer_new(base, trim_cb, t);
	if (t->tick == NULL)
		return false;
	trim_arm(t);
	return true;
}

void
trim_free(struct trim *t)
{
	if (t->tick != NULL)
		event_free(t->tick);
	t->tick = NULL;
}

/*
 * Trims when the free heap grew by free_bytes since the last trim and is more
 * than twice what is in use: a flood is over. Pages a trim gave back still
 * count as free to malloc, so "grew since" (not "is large") keeps a quiet
 * service from trimming again and again; "twice what is in use" keeps it from
 * trimming during a flood, where buffers churn and a trim (milliseconds on a
 * large heap) would stall every client. A flood's connections may close over
 * several ticks, and a trim may come when only part of its memory is free:
 * so at the tick after a trim, TRIM_FOLLOW_BYTES of growth trims again when
 * the heap in use shrank by as much since that trim (connections still
 * closing), until a tick finds none. Growth with the heap in use steady is
 * buffers churning at the heap's top: trimming it would only fault it in
 * again (docs/design.md section 8).
 */
bool
trim_due(struct trim *t, size_t free_now, size_t used)
{
	bool closing = t->follow && used + TRIM_FOLLOW_BYTES <= t->used_at_trim;
	size_t need = closing ? TRIM_FOLLOW_BYTES : t->free_bytes;

	if (free_now > t->kept + need && free_now / 2 > used) {
		t->used_at_trim = used;
		return true;
	}
	t->follow = false;
	if (free_now < t->kept)
		t->kept = free_now;	/* reuse: the next flood is measured from here */
	return false;
}

void
trim_done(struct trim *t, size_t free_after, uint64_t us)
{
	t->trims++;
	if (us > t->trim_us_max)
		t->trim_us_max = us;
	t->kept = free_after;
	t->follow = true;
}

static void
trim_cb(evutil_socket_t fd, short what, void *arg)
{
	struct trim *t = arg;
	struct mallinfo2 mi = mallinfo2();
	uint64_t t0;

	(void)fd;
	(void)what;
	if (trim_due(t, mi.fordblks, mi.uordblks)) {
		t0 = (uint64_t)clk_mono_us();
		malloc_trim(0);
		trim_done(t, mallinfo2().fordblks, (uint64_t)clk_mono_us() - t0);
	}
	trim_arm(t);
}

/* Never runs: the events of trim_reserve_fds() are deleted before the loop runs. */
static void
trim_nop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

unsigned
trim_reserve_fds(struct event_base *base, unsigned upto)
{
	struct event *ev;
	unsigned made = 0;
	int p[2], fd;

	if (pipe2(p, O_CLOEXEC) != 0)
		return 0;
	ev = event_new(base, -1, 0, trim_nop, NULL);
	for (fd = 0; ev != NULL && (unsigned)fd < upto; fd++) {
		/* Only free numbers: a pipe end lent under each, then given back. */
		if (fcntl(fd, F_GETFD) != -1 || dup3(p[0], fd, O_CLOEXEC) != fd)
			continue;
		if (event_assign(ev, base, fd, EV_READ, trim_nop, NULL) == 0 &&
		    event_add(ev, NULL) == 0) {
			event_del(ev);
			made++;
		}
		close(fd);
	}
	if (ev != NULL)
		event_free(ev);
	close(p[0]);
	close(p[1]);
	return made;
}
