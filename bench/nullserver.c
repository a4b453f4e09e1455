/*
 * nullserver.c - the benchmark floor: answers each line with the next counter.
 *
 * One thread, one epoll loop, no parsing: every '\n' a client sends is
 * answered with "<n>\n", n counting up from 1 across all connections.  A read
 * batch (everything available, up to a bound) gets one write, so what a
 * benchmark measures against this server is the kernel and the client.
 * Output per client is bounded: lines wait in the input buffer, and reading
 * pauses, until their replies fit.
 *
 * Two test aids: --repeat-every K makes it a broken server that repeats an ID
 * every K-th reply, which idbench's duplicate check must catch; --fake-idgen
 * answers ID, IDS n and BLOCK n as idgen does, so idbench can be tested
 * without idgen.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define NS_REPLY_MAX		21		/* "9223372036854775807\n" */
#define NS_FAKE_REPLY_MAX	(1000 * 21 + 64)	/* IDS 1000 */
#define NS_IN_CAP		(16 * 1024)
#define NS_OUT_CAP		(256 * 1024)
#define NS_READS_PER_EVENT	8		/* one client cannot starve others */
#define NS_WRITES_PER_EVENT	8
#define NS_ACCEPTS_PER_EVENT	64
#define NS_EVENTS		256
#define NS_BACKLOG		1024
#define NS_IDS_MAX		1000
#define NS_BLOCK_MAX		4096

struct ns_conn {
	int		 fd;
	bool		 eof;		/* no more input: flush, then close */
	uint32_t	 events;	/* current epoll interest */
	size_t		 inlen;
	size_t		 outoff;
	size_t		 outlen;
	struct ns_conn	*prev;
	struct ns_conn	*next;
	char		 in[NS_IN_CAP];
	char		 out[NS_OUT_CAP];
};

struct ns_config {
	const char	*host;
	const char	*port;
	long		 max_conns;
	uint64_t	 repeat_every;
	bool		 fake;
};

static int	ns_number(const char *, const char *, long long, long long,
		    long long *);
static void	ns_usage(FILE *);
static void	ns_parse_args(int, char **);
static int	ns_listen(void);
static int	ns_signals(void);
static void	ns_accept(void);
static void	ns_conn_want(struct ns_conn *, uint32_t);
static void	ns_conn_close(struct ns_conn *);
static size_t	ns_fmt_u64(char *, uint64_t);
static uint64_t	ns_take(uint64_t);
static void	ns_emit(struct ns_conn *, const char *);
static void	ns_fake_ids(struct ns_conn *, uint64_t);
static void	ns_fake_reply(struct ns_conn *, const char *, const char *);
static void	ns_conn_answer(struct ns_conn *);
static void	ns_conn_read(struct ns_conn *);
static void	ns_conn_flush(struct ns_conn *);
static void	ns_conn_event(struct ns_conn *, uint32_t);

static struct ns_config	 ns_cfg = { "127.0.0.1", "4299", 10000, 0, false };
static int		 ns_epfd = -1;
static int		 ns_lfd = -1;
static int		 ns_sfd = -1;
static struct ns_conn	*ns_conns;	/* every open connection, for shutdown */
static long		 ns_nconns;
static uint64_t		 ns_counter;	/* last value handed out */
static uint64_t		 ns_replies;
static uint64_t		 ns_accepted;
static uint64_t		 ns_rejected;

/* Parses a decimal integer within [min, max]; 0 on success, -1 with a message. */
static int
ns_number(const char *name, const char *s, long long min, long long max,
    long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "nullserver: %s must be an integer in %lld..%lld, "
		    "not \"%s\"\n", name, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Prints the command line help. */
static void
ns_usage(FILE *f)
{
	fprintf(f,
"usage: nullserver [--host ADDR] [--port PORT] [--max-conns N]\n"
"                  [--repeat-every K] [--fake-idgen]\n"
"\n"
"A TCP server that answers every '\\n'-terminated line with \"<n>\\n\", n\n"
"counting up from 1 across all connections: the floor row of the idgen\n"
"benchmark.\n"
"\n"
"  --host ADDR        address to listen on (default 127.0.0.1)\n"
"  --port PORT        TCP port (default 4299; 0 picks a free one, printed)\n"
"  --max-conns N      connections served at once (default 10000); more are\n"
"                     told \"ERR UNAVAILABLE\" and closed\n"
"  --repeat-every K   debug: every K-th reply starts at the previous reply's\n"
"                     last value, i.e. repeats an ID (tests duplicate\n"
"                     detection); 0 = never (default)\n"
"  --fake-idgen       speak idgen's text protocol from the same counter:\n"
"                     ID, IDS n (1..1000), BLOCK n (1..4096), PING; anything\n"
"                     else gets ERR BADREQ or ERR RANGE, like the real server\n"
"  --help             this text\n"
"\n"
"SIGTERM or SIGINT closes every connection and exits 0.\n");
}

/* Fills ns_cfg from the command line; exits 2 on a usage error. */
static void
ns_parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host",		required_argument,	NULL, 'H' },
		{ "port",		required_argument,	NULL, 'p' },
		{ "max-conns",		required_argument,	NULL, 'm' },
		{ "repeat-every",	required_argument,	NULL, 'r' },
		{ "fake-idgen",		no_argument,		NULL, 'f' },
		{ "help",		no_argument,		NULL, 'h' },
		{ NULL,			0,			NULL, 0 }
	};
	long long	 v;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			ns_cfg.host = optarg;
			break;
		case 'p':
			if (ns_number("--port", optarg, 0, 65535, &v) != 0)
				exit(2);
			ns_cfg.port = optarg;
			break;
		case 'm':
			if (ns_number("--max-conns", optarg, 1, 1000000, &v) != 0)
				exit(2);
			ns_cfg.max_conns = (long)v;
			break;
		case 'r':
			if (ns_number("--repeat-every", optarg, 0, INT64_MAX,
			    &v) != 0)
				exit(2);
			ns_cfg.repeat_every = (uint64_t)v;
			break;
		case 'f':
			ns_cfg.fake = true;
			break;
		case 'h':
			ns_usage(stdout);
			exit(0);
		default:
			ns_usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nullserver: unexpected argument \"%s\"\n",
		    argv[optind]);
		exit(2);
	}
}

/* Opens the nonblocking listening socket and prints where it listens. */
static int
ns_listen(void)
{
	struct addrinfo		 hints, *res;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof ss;
	char			 host[NI_MAXHOST], port[NI_MAXSERV];
	int			 fd, on = 1, rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(ns_cfg.host, ns_cfg.port, &hints, &res)) != 0) {
		fprintf(stderr, "nullserver: %s: %s\n", ns_cfg.host,
		    gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, NS_BACKLOG) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
		fprintf(stderr, "nullserver: listen on %s port %s: %s\n",
		    ns_cfg.host, ns_cfg.port, strerror(errno));
		if (fd != -1)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	if (getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof host, port,
	    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		fprintf(stderr, "nullserver: listening on %s port %s\n", host,
		    port);
	return fd;
}

/* Routes SIGTERM and SIGINT into the loop through a signalfd. */
static int
ns_signals(void)
{
	sigset_t	 set;
	int		 fd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		fprintf(stderr, "nullserver: signalfd: %s\n", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

/* Accepts pending connections (bounded); past --max-conns says why, closes. */
static void
ns_accept(void)
{
	static const char	 full[] =
	    "ERR UNAVAILABLE too many connections (--max-conns)\n";
	struct epoll_event	 ev;
	struct ns_conn		*c;
	int			 fd, i, on = 1;

	for (i = 0; i < NS_ACCEPTS_PER_EVENT; i++) {
		fd = accept4(ns_lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				fprintf(stderr, "nullserver: accept: %s\n",
				    strerror(errno));
			return;
		}
		if (ns_nconns >= ns_cfg.max_conns ||
		    (c = malloc(sizeof *c)) == NULL) {
			ns_rejected++;
			if (send(fd, full, sizeof full - 1, MSG_NOSIGNAL) < 0) {
				/* The client is gone already; nothing to tell. */
			}
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
		c->fd = fd;
		c->eof = false;
		c->events = EPOLLIN;
		c->inlen = c->outoff = c->outlen = 0;
		ev.events = c->events;
		ev.data.ptr = c;
		if (epoll_ctl(ns_epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			fprintf(stderr, "nullserver: epoll_ctl: %s\n",
			    strerror(errno));
			close(fd);
			free(c);
			continue;
		}
		c->prev = NULL;
		c->next = ns_conns;
		if (ns_conns != NULL)
			ns_conns->prev = c;
		ns_conns = c;
		ns_nconns++;
		ns_accepted++;
	}
}

/* Changes a connection's epoll interest when it differs from the current one. */
static void
ns_conn_want(struct ns_conn *c, uint32_t events)
{
	struct epoll_event	 ev;

	if (c->events == events)
		return;
	ev.events = events;
	ev.data.ptr = c;
	if (epoll_ctl(ns_epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = events;
}

/* Closes and frees a connection; the caller must not touch it afterwards. */
static void
ns_conn_close(struct ns_conn *c)
{
	close(c->fd);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		ns_conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	ns_nconns--;
	free(c);
}

/* Writes v in decimal to dst (room for 20 bytes); returns the length. */
static size_t
ns_fmt_u64(char *dst, uint64_t v)
{
	char	 tmp[20];
	size_t	 n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	return n;
}

/* Takes n values for a reply; every K-th reply reuses the previous last one. */
static uint64_t
ns_take(uint64_t n)
{
	uint64_t	 first;

	ns_replies++;
	if (ns_cfg.repeat_every != 0 && ns_counter != 0 &&
	    ns_replies % ns_cfg.repeat_every == 0)
		first = ns_counter;
	else
		first = ns_counter + 1;
	ns_counter = first + n - 1;
	return first;
}

/* Appends a constant reply line. */
static void
ns_emit(struct ns_conn *c, const char *s)
{
	size_t	 len = strlen(s);

	memcpy(c->out + c->outlen, s, len);
	c->outlen += len;
}

/* Appends "<id> <id+1> ...\n", incrementing the previous ID's digits. */
static void
ns_fake_ids(struct ns_conn *c, uint64_t n)
{
	uint64_t	 first = ns_take(n), i;
	char		*o = c->out + c->outlen, *prev = o;
	size_t		 len, k;

	len = ns_fmt_u64(o, first);
	o += len;
	for (i = 1; i < n; i++) {
		*o++ = ' ';
		memcpy(o, prev, len);
		for (k = len; k > 0 && o[k - 1] == '9'; k--)
			o[k - 1] = '0';
		if (k == 0)
			len = ns_fmt_u64(o, first + i);	/* one digit longer */
		else
			o[k - 1]++;
		prev = o;
		o += len;
	}
	*o++ = '\n';
	c->outlen = (size_t)(o - c->out);
}

/* Answers one line [p, nl) the way idgen would, from the shared counter. */
static void
ns_fake_reply(struct ns_conn *c, const char *p, const char *nl)
{
	const char	*e = nl, *arg;
	uint64_t	 n = 0, first;
	size_t		 wl;
	char		*o;
	bool		 hasarg;

	if (e > p && e[-1] == '\r')
		e--;
	for (arg = p; arg < e && *arg != ' '; arg++)
		;
	wl = (size_t)(arg - p);
	while (arg < e && *arg == ' ')
		arg++;
	hasarg = arg < e;
	for (; arg < e && *arg >= '0' && *arg <= '9' && n < 1000000; arg++)
		n = n * 10 + (uint64_t)(*arg - '0');
	if (arg < e) {
		ns_emit(c, "ERR BADREQ bad argument\n");
		return;
	}
	if (wl == 2 && strncasecmp(p, "ID", 2) == 0 && !hasarg)
		ns_fake_ids(c, 1);
	else if (wl == 3 && strncasecmp(p, "IDS", 3) == 0 && hasarg) {
		if (n < 1 || n > NS_IDS_MAX)
			ns_emit(c, "ERR RANGE IDS takes 1..1000\n");
		else
			ns_fake_ids(c, n);
	} else if (wl == 5 && strncasecmp(p, "BLOCK", 5) == 0 && hasarg) {
		if (n < 1 || n > NS_BLOCK_MAX) {
			ns_emit(c, "ERR RANGE BLOCK takes 1..4096\n");
			return;
		}
		first = ns_take(n);
		o = c->out + c->outlen;
		o += ns_fmt_u64(o, first);
		*o++ = ' ';
		o += ns_fmt_u64(o, n);
		*o++ = '\n';
		c->outlen = (size_t)(o - c->out);
	} else if (wl == 4 && strncasecmp(p, "PING", 4) == 0 && !hasarg)
		ns_emit(c, "PONG\n");
	else
		ns_emit(c, "ERR BADREQ unknown command\n");
}

/* Answers buffered lines while the largest reply still fits the output. */
static void
ns_conn_answer(struct ns_conn *c)
{
	char	*p = c->in, *end = c->in + c->inlen, *nl;
	size_t	 worst = ns_cfg.fake ? NS_FAKE_REPLY_MAX : NS_REPLY_MAX;
	uint64_t v;
	char	*o;

	while (NS_OUT_CAP - c->outlen >= worst &&
	    (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (ns_cfg.fake)
			ns_fake_reply(c, p, nl);
		else {
			v = ns_take(1);
			o = c->out + c->outlen;
			o += ns_fmt_u64(o, v);
			*o++ = '\n';
			c->outlen = (size_t)(o - c->out);
		}
		p = nl + 1;
	}
	c->inlen = (size_t)(end - p);
	if (c->inlen > 0 && p != c->in)
		memmove(c->in, p, c->inlen);
	/* A full buffer without '\n' is dropped; the fake closes, as idgen does. */
	if (c->inlen == NS_IN_CAP && memchr(c->in, '\n', c->inlen) == NULL) {
		c->inlen = 0;
		if (ns_cfg.fake && NS_OUT_CAP - c->outlen >= worst) {
			ns_emit(c, "ERR BADREQ line too long\n");
			c->eof = true;
		}
	}
}

/* Reads what is available, answering as it goes, then writes the answers once. */
static void
ns_conn_read(struct ns_conn *c)
{
	size_t	 room;
	ssize_t	 n;
	int	 i;

	for (i = 0; i < NS_READS_PER_EVENT && !c->eof; i++) {
		room = NS_IN_CAP - c->inlen;
		if (room == 0)
			break;	/* unanswered lines wait for the output */
		n = read(c->fd, c->in + c->inlen, room);
		if (n == 0) {
			c->eof = true;
			break;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			ns_conn_close(c);
			return;
		}
		c->inlen += (size_t)n;
		ns_conn_answer(c);
		if ((size_t)n < room || c->outlen > NS_OUT_CAP / 2)
			break;
	}
	ns_conn_flush(c);
}

/* Writes replies and answers held-back lines; after EOF, closes when done. */
static void
ns_conn_flush(struct ns_conn *c)
{
	ssize_t	 n;
	int	 i;

	for (i = 0; i < NS_WRITES_PER_EVENT && c->outlen > 0; i++) {
		while (c->outoff < c->outlen) {
			n = send(c->fd, c->out + c->outoff,
			    c->outlen - c->outoff, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN)
					break;
				ns_conn_close(c);
				return;
			}
			c->outoff += (size_t)n;
		}
		if (c->outoff < c->outlen) {
			ns_conn_want(c, EPOLLOUT);
			return;
		}
		c->outoff = c->outlen = 0;
		ns_conn_answer(c);
	}
	if (c->outlen > 0) {
		ns_conn_want(c, EPOLLOUT);	/* more to do: yield to others */
		return;
	}
	if (c->eof) {
		ns_conn_close(c);
		return;
	}
	ns_conn_want(c, EPOLLIN);
}

/* Dispatches one epoll event of a client connection. */
static void
ns_conn_event(struct ns_conn *c, uint32_t events)
{
	if (c->events & EPOLLOUT)
		ns_conn_flush(c);
	else if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		ns_conn_read(c);
}

/* Listens and serves until SIGTERM or SIGINT. */
int
main(int argc, char **argv)
{
	struct epoll_event	 ev[NS_EVENTS];
	struct signalfd_siginfo	 si;
	bool			 running = true;
	int			 i, n;

	ns_parse_args(argc, argv);
	if ((ns_sfd = ns_signals()) == -1 || (ns_lfd = ns_listen()) == -1)
		return 1;
	if ((ns_epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		fprintf(stderr, "nullserver: epoll_create1: %s\n",
		    strerror(errno));
		return 1;
	}
	ev[0].events = EPOLLIN;
	ev[0].data.ptr = &ns_lfd;
	ev[1].events = EPOLLIN;
	ev[1].data.ptr = &ns_sfd;
	if (epoll_ctl(ns_epfd, EPOLL_CTL_ADD, ns_lfd, &ev[0]) != 0 ||
	    epoll_ctl(ns_epfd, EPOLL_CTL_ADD, ns_sfd, &ev[1]) != 0) {
		fprintf(stderr, "nullserver: epoll_ctl: %s\n", strerror(errno));
		return 1;
	}

	while (running) {
		n = epoll_wait(ns_epfd, ev, NS_EVENTS, -1);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "nullserver: epoll_wait: %s\n",
			    strerror(errno));
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.ptr == &ns_lfd)
				ns_accept();
			else if (ev[i].data.ptr == &ns_sfd) {
				if (read(ns_sfd, &si, sizeof si) > 0)
					running = false;
			} else
				ns_conn_event(ev[i].data.ptr, ev[i].events);
		}
	}

	while (ns_conns != NULL)
		ns_conn_close(ns_conns);
	close(ns_lfd);
	close(ns_sfd);
	close(ns_epfd);
	fprintf(stderr, "nullserver: exiting: %" PRIu64 " replies, %" PRIu64
	    " connections accepted, %" PRIu64 " rejected (--max-conns)\n",
	    ns_replies, ns_accepted, ns_rejected);
	return 0;
}
