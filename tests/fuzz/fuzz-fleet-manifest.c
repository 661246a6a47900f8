/* fuzz-fleet-manifest.c - libFuzzer target for the fleet manifest reader.
 *
 * The bytes are a manifest ("PATH [gpu=NAME] [cap=SIZE] [fraction=F]" a
 * line) named fuzz/jobs.manifest, read by cca_fleet_manifest_parse() as
 * `fleet run` reads one.  A failure must come with one line of error naming
 * the manifest; every job read must have a path (under fuzz/ when it was
 * relative), a known GPU or none, and a cap or a fraction in (0, 1] but not
 * both.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "fleet.h"
#include "fuzz.h"

const char cca_fuzz_target[] = "fleet-manifest";

#define NAME "fuzz/jobs.manifest"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GPtrArray) jobs =
		g_ptr_array_new_with_free_func((GDestroyNotify)cca_fleet_job_free);
	g_autoptr(GError) error = NULL;
	gboolean ok = cca_fleet_manifest_parse((const char *)data, size, NAME, jobs, &error);

	if (!ok && (error == NULL || !g_str_has_prefix(error->message, NAME ":") ||
		    strchr(error->message, '\n') != NULL))
		abort(); /* one line naming the manifest, always */
	if (ok && error != NULL)
		abort();
	for (guint i = 0; i < jobs->len; i++) {
		const CcaFleetJob *job = g_ptr_array_index(jobs, i);
		if (job->path == NULL || !*job->path ||
		    (!g_str_has_prefix(job->path, "fuzz/") && job->path[0] != '/'))
			abort();
		if (!ok && i == jobs->len - 1)
			continue; /* the line at fault may stop halfway */
		if (job->gpu && !cca_fit_gpu_preset_find(job->gpu, NULL))
			abort();
		if ((job->cap && job->fraction) || job->fraction < 0 || job->fraction > 1)
			abort();
	}
	return 0;
}
