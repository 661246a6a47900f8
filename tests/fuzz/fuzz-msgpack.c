/* fuzz-msgpack.c - libFuzzer target for ccasim's msgpack trace reader.
 *
 * Inputs are msgpack traces as `ccasim convert` writes them
 * (doc/trace-format.md).  The loader streams events from the mapped file,
 * so the cursor walk in cca_fuzz_load_snapshot() is where most of the
 * decoding happens.  Counts claimed by the input (msgpack-c 4 would try to
 * allocate 256 GiB for `df ff ff ff ff ...`) must be checked against the
 * bytes that remain.
 */
#include "config.h"

#include "fuzz.h"

const char cca_fuzz_target[] = "msgpack";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cca_fuzz_load_snapshot(data, size);
	return 0;
}
