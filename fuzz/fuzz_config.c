/*
 * fuzz_config.c - libFuzzer harness: the INI configuration and the flags. The
 * input is split at the first NUL: before it an INI file, after it flags
 * separated by newlines.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	char *copy, *argv[40], *p, err[512];
	const uint8_t *nul = memchr(data, 0, size);
	size_t ini = nul != NULL ? (size_t)(nul - data) : size;
	struct config cfg;
	bool exit_now;
	int argc = 0;
	FILE *f;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/idgen-fuzz-config-%d.ini", (int)getpid());
	f = fopen(path, "w");
	if (f == NULL)
		return 0;
	fwrite(data, 1, ini, f);
	fclose(f);
	copy = malloc(size - ini + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + ini, size - ini);
	copy[size - ini] = '\0';
	argv[argc++] = (char *)"idserver";
	argv[argc++] = (char *)"--config";
	argv[argc++] = path;
	/* Never a real password file or state file from fuzzed input. */
	for (p = strtok(copy + (nul != NULL), "\n"); p != NULL && argc < 38; p = strtok(NULL, "\n"))
		if (strstr(p, "help") == NULL && strstr(p, "password") == NULL)
			argv[argc++] = p;
	argv[argc] = NULL;
	/* Accepted or refused, whatever it allocated is freed. */
	(void)config_load(&cfg, argc, argv, &exit_now, err, sizeof(err));
	config_free(&cfg);
	free(copy);
	return 0;
}
