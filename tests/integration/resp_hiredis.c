/*
 * resp_hiredis.c - a hiredis client for test_resp.sh: pipelines N requests with
 * redisAppendCommand, reads them with redisGetReply, prints every ID it got.
 *
 *	resp_hiredis PORT N	N x "IDS 100" and N x "ID", interleaved
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

int
main(int argc, char **argv)
{
	redisContext *c;
	redisReply *r;
	int i, n;
	size_t k;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	c = redisConnect("127.0.0.1", atoi(argv[1]));
	if (c == NULL || c->err) {
		fprintf(stderr, "connect: %s\n", c ? c->errstr : "out of memory");
		return 1;
	}
	for (i = 0; i < n; i++) {
		redisAppendCommand(c, "IDS %d", 100);
		redisAppendCommand(c, "ID");
	}
	for (i = 0; i < 2 * n; i++) {
		if (redisGetReply(c, (void **)&r) != REDIS_OK) {
			fprintf(stderr, "reply %d: %s\n", i, c->errstr);
			return 1;
		}
		if (i % 2 == 0) {
			if (r->type != REDIS_REPLY_ARRAY || r->elements != 100) {
				fprintf(stderr, "reply %d: not an array of 100\n", i);
				return 1;
			}
			for (k = 0; k < r->elements; k++) {
				if (r->element[k]->type != REDIS_REPLY_INTEGER ||
				    (k > 0 && r->element[k]->integer <= r->element[k - 1]->integer)) {
					fprintf(stderr, "reply %d: element %zu\n", i, k);
					return 1;
				}
				printf("%lld\n", r->element[k]->integer);
			}
		} else {
			if (r->type != REDIS_REPLY_INTEGER || r->integer <= 0) {
				fprintf(stderr, "reply %d: not a positive integer\n", i);
				return 1;
			}
			printf("%lld\n", r->integer);
		}
		freeReplyObject(r);
	}
	redisFree(c);
	return 0;
}
