/* va_probe.c - records where the CUDA driver places cudaMalloc segments.
 *
 * Reads a script of requests from standard input, one per line:
 *   a SIZE    cudaMalloc(SIZE); the segment gets the next id (0, 1, ...)
 *   f ID      cudaFree of segment ID
 * and prints, for every line, "a ID SIZE ADDRESS" or "f ID SIZE ADDRESS"
 * (ADDRESS in hex, and relative to the first segment's base).  Run each
 * script in a fresh process: the driver's choice depends on what the
 * process did before.  doc/driver-va.md says what the results show.
 *
 * Built only with CUDA (gpu/local.mk); needs only the driver at run time
 * when linked with cudart_static.
 */
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGMENTS 65536

int
main(void)
{
	static void *ptrs[MAX_SEGMENTS];
	static size_t sizes[MAX_SEGMENTS];
	int n = 0;
	char line[256];
	uintptr_t first = 0;
	size_t free_before = 0, total = 0;

	cudaError_t rc = cudaFree(0); /* create the context */
	if (rc != cudaSuccess) {
		fprintf(stderr, "va_probe: no CUDA device: %s\n", cudaGetErrorString(rc));
		return 2;
	}
	cudaMemGetInfo(&free_before, &total);
	printf("# total %zu free %zu\n", total, free_before);
	while (fgets(line, sizeof line, stdin)) {
		char op;
		unsigned long long arg;
		if (line[0] == '#' || sscanf(line, " %c %llu", &op, &arg) != 2)
			continue;
		if (op == 'a') {
			if (n == MAX_SEGMENTS) {
				fprintf(stderr, "va_probe: too many segments\n");
				return 1;
			}
			rc = cudaMalloc(&ptrs[n], (size_t)arg);
			if (rc != cudaSuccess) {
				printf("a %d %llu OOM\n", n, arg);
				cudaGetLastError();
				ptrs[n] = NULL;
				sizes[n++] = 0;
				continue;
			}
			uintptr_t p = (uintptr_t)ptrs[n];
			if (!first)
				first = p;
			sizes[n] = (size_t)arg;
			printf("a %d %llu 0x%" PRIxPTR " %" PRIdPTR "\n", n, arg, p,
			       (intptr_t)(p - first));
			n++;
		} else if (op == 'f') {
			if (arg >= (unsigned long long)n || !ptrs[arg]) {
				fprintf(stderr, "va_probe: bad free of %llu\n", arg);
				return 1;
			}
			uintptr_t p = (uintptr_t)ptrs[arg];
			cudaFree(ptrs[arg]);
			printf("f %llu %zu 0x%" PRIxPTR " %" PRIdPTR "\n", arg, sizes[arg], p,
			       (intptr_t)(p - first));
			ptrs[arg] = NULL;
		}
	}
	return 0;
}
