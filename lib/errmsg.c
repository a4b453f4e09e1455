/*
 * errmsg.c - libidgen's errors: each code's description, and each thread's
 * last message.
 */
#include "errmsg.h"

#include "client.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char	 errmsg_msg[IDGEN_ERR_LEN];

/* A fixed description of a code. */
IDGEN_EXPORT const char *
idgen_strerror(int code)
{
	switch (code) {
	case IDGEN_OK:
		return "success";
	case IDGEN_EINVAL:
		return "invalid argument";
	case IDGEN_EUNAVAILABLE:
		return "no idserver could give IDs";
	case IDGEN_ETIMEOUT:
		return "no IDs arrived within timeout_ms";
	case IDGEN_ENOMEM:
		return "out of memory";
	case IDGEN_ENONS:
		return "the idservers do not serve this namespace";
	}
	return "unknown error";
}

/* This thread's last message, kept until its next failed call. */
IDGEN_EXPORT const char *
idgen_last_error(void)
{
	return errmsg_msg[0] ? errmsg_msg : "no error";
}

/* Formats into this thread's buffer: a caller's message never meets another's. */
int
errmsg_set(int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(errmsg_msg, sizeof(errmsg_msg), fmt, ap);
	va_end(ap);
	return code;
}
