/*
 * vpoll.c - the loop's poll without a system call when it has nothing to
 * poll: idsim defines epoll_ctl and epoll_wait itself (symbols of the
 * executable come before libc's, for libevent.so too, as vclock.c's clocks).
 * The simulated servers are timers, not sockets, so the loop registers no
 * file descriptor and its every non-blocking poll would ask the kernel for
 * nothing; a registered descriptor (none today) goes to the kernel as before
 * (docs/design.md section 14: speed).
 */
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

static long vpoll_fds;	/* descriptors registered, over every epoll instance */

/* Registers as the kernel does, counting what is registered. */
int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	long r = syscall(SYS_epoll_ctl, epfd, op, fd, ev);

	if (r == 0 && op == EPOLL_CTL_ADD)
		vpoll_fds++;
	else if (r == 0 && op == EPOLL_CTL_DEL)
		vpoll_fds--;
	return (int)r;
}

/* A poll that may not wait, with nothing registered, finds nothing. */
int
epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	if (timeout == 0 && vpoll_fds == 0)
		return 0;
	return epoll_pwait(epfd, events, maxevents, timeout, NULL);
}
