/*
 * notify.h - systemd's readiness protocol (sd_notify(3)) without libsystemd:
 * one datagram of "KEY=value" lines to the unix socket $NOTIFY_SOCKET names
 * (abstract when it begins with '@'). Nothing at all when it is not set.
 */
#ifndef IDGEN_NOTIFY_H
#define IDGEN_NOTIFY_H

#include <stdbool.h>

/* Reads $NOTIFY_SOCKET once; false (logged) when it is set but unusable. */
bool	notify_init(void);

/* Sends one message ("READY=1\nSTATUS=..."); a failure is logged once, never fatal. */
void	notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void	notify_free(void);

#endif
