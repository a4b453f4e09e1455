/*
 * notify.c - READY=1, RELOADING=1, STOPPING=1 and STATUS= to systemd for a
 * Type=notify unit (docs/operations.md, Install): a datagram to the socket of
 * $NOTIFY_SOCKET, as sd_notify(3) sends it, so no libsystemd is linked.
 */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

static int			 notify_fd = -1;
static struct sockaddr_un	 notify_addr;
static socklen_t		 notify_len;
static bool			 notify_failed;	/* a send failed: said once */

bool
notify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n;

	if (path == NULL || path[0] == '\0')
		return true;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(notify_addr.sun_path)) {
		log_warn("NOTIFY_SOCKET '%s' is not a unix socket path or @name: systemd is "
		    "not told when idserver is ready", path);
		return false;
	}
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, path, n);
	/* An abstract name: a NUL first, and the length says where it ends. */
	if (path[0] == '@')
		notify_addr.sun_path[0] = '\0';
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (path[0] == '@' ? 0 : 1));
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (notify_fd < 0) {
		log_warn("NOTIFY_SOCKET: socket: %s: systemd is not told when idserver is ready",
		    strerror(errno));
		return false;
	}
	return true;
}

void
notify_send(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	if (notify_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	log_debug("NOTIFY_SOCKET: %.*s", n, msg);
	if (sendto(notify_fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&notify_addr,
	    notify_len) < 0 && !notify_failed) {
		notify_failed = true;
		log_warn("NOTIFY_SOCKET: cannot send to systemd: %s (said once)", strerror(errno));
	}
}

void
notify_free(void)
{
	if (notify_fd >= 0)
		close(notify_fd);
	notify_fd = -1;
}
