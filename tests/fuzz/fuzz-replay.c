/* fuzz-replay.c - libFuzzer target for the replay of a loaded trace.
 *
 * The readers only promise well-formed events; whether those events make
 * sense to the allocator model (addresses, sizes, frees of live blocks,
 * segments that do not overlap) is the engine's to check.  This target
 * loads a pickle or msgpack trace from the fuzz bytes and replays every
 * device three ways: under the recorded settings with --check and the
 * invariant walker, as a what-if, and as a what-if under a small cap.  Any
 * GLib warning or critical aborts (it would be reachable from input), as
 * do crashes and sanitizer reports; errors and OOMs are results.
 */
#include "config.h"

#include "fuzz.h"

const char cca_fuzz_target[] = "replay";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cca_fuzz_replay_snapshot(data, size);
	return 0;
}
