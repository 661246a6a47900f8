/* fuzz.h - what every fuzz target provides and the helpers they share.
 *
 * Each tests/fuzz/fuzz-<reader>.c defines LLVMFuzzerTestOneInput for one
 * reader and names its corpus.  The same object links two ways: with
 * libFuzzer (-fsanitize=fuzzer, --enable-fuzzing, clang) into
 * tests/fuzz/fuzz-<reader>, and with the plain driver replay-corpus.c into
 * tests/fuzz/replay-<reader>, which `make check` runs over the committed
 * corpus tests/fuzz/corpus-<reader>/.
 */
#ifndef CCA_FUZZ_H
#define CCA_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: runs one input through the target's reader.
 * Must not crash, leak or abort on any DATA; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The target's name ("pickle", "msgpack", "settings"); its seeds live in
 * tests/fuzz/corpus-<name>/. */
extern const char cca_fuzz_target[];

/* Loads SIZE bytes at DATA as a snapshot file through cca_snapshot_load()
 * (from an in-memory file, so the real path-based loader runs), then walks
 * every event of every device and the recorded settings, and frees it all.
 * Errors are expected and ignored; only crashes and sanitizer reports
 * count. */
void cca_fuzz_load_snapshot(const uint8_t *data, size_t size);

/* Loads SIZE bytes at DATA as cca_fuzz_load_snapshot() does, then replays
 * each device under the recorded settings (with check and the invariant
 * walker), as a what-if, and as a what-if under a 1 GiB device, with GLib
 * warnings and criticals made fatal.  Errors and OOMs are results. */
void cca_fuzz_replay_snapshot(const uint8_t *data, size_t size);

#endif
