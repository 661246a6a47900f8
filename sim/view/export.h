/* export.h - a simulated run written in formats other tools open.
 *
 * cca_export_pickle() writes what PyTorch's _dump_snapshot() would have
 * written had the allocator run as the model did: a protocol-4 pickle in
 * torch 2.11's layout (segments with blocks, device_traces with the
 * model's own entries, allocator_settings, external_annotations), which
 * `python -m torch.cuda._memory_viz` and pytorch.org/memory_viz open.
 * cca_export_chrome() writes a Chrome/Perfetto JSON trace: a counter per
 * memory series, allocations as async events, annotations as slices and
 * instant events for cudaMalloc, cudaFree and OOMs.
 */
#ifndef CCA_EXPORT_H
#define CCA_EXPORT_H

#include <glib.h>

#include "replay.h"
#include "simdevice.h"
#include "settings.h"
#include "snapshot.h"

G_BEGIN_DECLS

/* What an export wrote. */
typedef struct {
	uint64_t entries;  /* trace entries written, all devices */
	uint64_t segments; /* final segments written */
	uint64_t blocks;
	gboolean matched; /* every entry matched the input trace (recorded run) */
	/* pickle: the run's cap (a --device-memory at least the default
	 * device's) is one no per_process_memory_fraction of the default
	 * device can record, so a replay of the file runs uncapped */
	gboolean cap_unrecorded;
} CcaExportResult;

/* Replays every device of SNAP once under OPTIONS (its device field and
 * hooks are ignored; keep_going is honoured) and writes the simulated run to
 * PATH as a PyTorch 2.11 memory-snapshot pickle.  Each trace entry the
 * model records is written with action, addr (device_free for an oom),
 * size and stream as the model recorded them, and time_us, frames,
 * compile_context and user_metadata of the input entry it reproduces (or,
 * once the run departs from the input, of the entry that caused it:
 * CcaReplayModelFunc; for the releases of an empty_cache() the program
 * called, the recorded release that shows the call).
 * Segments are the model's final state; blocks carry the frames of their
 * allocation.  allocator_settings describe the settings replayed; a cap
 * (OPTIONS->memory_fraction, OPTIONS->device_memory with capacity_set) is
 * written as the per_process_memory_fraction of PYTORCH_CUDA_ALLOC_CONF
 * that caps the default device (CCA_H200_TOTAL_MEMORY) at the same bytes,
 * so that the file replays as it ran (RESULT->cap_unrecorded when no
 * fraction can);
 * external_annotations are the input's.  Segment frames are always [];
 * trace entries have no "frames" key when the input has no stack at all
 * (PyTorch records none when recording captured no context).
 * The file is written to PATH.XXXXXX and renamed over PATH on success.
 * Returns FALSE with ERROR on bad input or I/O failure. */
gboolean cca_export_pickle(const CcaSnapshot *snap, const CcaReplayOptions *options,
			   const char *path, CcaExportResult *result, GError **error);

/* Replays every device of SNAP under OPTIONS and writes PATH as a
 * Chrome/Perfetto JSON trace (the Trace Event Format): per device a
 * process with one "C" counter per series, "reserved", "allocated" and
 * "active" (args {"bytes": N}, written when it changes; three counters,
 * since viewers stack the args of one), every allocation as an async
 * "b"/"e" pair named "allocation" (cat "allocation", one id per
 * allocation; args addr, size, stream, the trace entry "event", the
 * innermost "frame" and user_metadata when recorded) from its alloc to its
 * free_completed, "i" instant events "cudaMalloc", "cudaFree", "map",
 * "unmap" and "OOM" with addr, size, stream and the index of the trace
 * entry that caused it ("event"), at that entry's time, and on thread 1
 * ("annotations") the snapshot's external annotations: START/END pairs of
 * one name as "X" slices, other records as instants.  Timestamps are
 * microseconds since the device's first time_us, or the event index when
 * the trace has no times (then no annotations).  Atomic as above.  One
 * replay per device. */
gboolean cca_export_chrome(const CcaSnapshot *snap, const CcaReplayOptions *options,
			   const char *path, CcaExportResult *result, GError **error);

G_END_DECLS

#endif
