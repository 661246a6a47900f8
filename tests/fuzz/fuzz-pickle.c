/* fuzz-pickle.c - libFuzzer target for the pickle snapshot reader.
 *
 * Inputs are whole files as torch.cuda.memory._dump_snapshot() writes them
 * (protocols 2-5), possibly xz- or gzip-compressed: the loader sniffs the
 * format, so this target also reaches the decompressors.  Hostile pickles
 * (GLOBAL/REDUCE of os.system and friends) must be refused, never run.
 */
#include "config.h"

#include "fuzz.h"

const char cca_fuzz_target[] = "pickle";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cca_fuzz_load_snapshot(data, size);
	return 0;
}
