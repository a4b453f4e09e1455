/*
 * errmsg.h - the message of each thread's last failed call, read back by
 * idgen_last_error() (like errno: per thread; the library prints nothing).
 */
#ifndef IDGEN_ERRMSG_H
#define IDGEN_ERRMSG_H

/* Records this thread's message for a failed call and returns code. */
int	errmsg_set(int code, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
