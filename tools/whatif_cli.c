/* whatif_cli.c - option handling shared by the what-if commands.
 *
 * Usage errors (bad options, settings PyTorch would reject, a device the
 * trace lacks) exit 2 with one line on stderr; unreadable input exits 1.
 */
#include "config.h"

#include "whatif_cli.h"

#include <stdio.h>

#include "settings.h"
#include "sizes.h"
#include "viewargs.h"

gboolean
cca_whatif_common_check(CcaWhatifCommon *c)
{
	/* -j 0 is the default: one thread per core */
	return cca_view_check_int(c->command, "--jobs", c->jobs, 0, G_MAXINT) &&
	       cca_view_check_int(c->command, "--device", c->device, 0, G_MAXINT) &&
	       cca_view_parse_limits(c->command, c->memory_fraction_text, &c->memory_fraction,
				     c->device_memory, c->pytorch_version, &c->device_memory_bytes,
				     &c->capacity_set, &c->version);
}

int
cca_whatif_build_grid(const CcaWhatifCommon *c, const CcaSnapshot *snap, int device,
		      const char *const *configs, const char *const *sets, gboolean default_grid,
		      CcaSweep **out)
{
	GError *error = NULL;
	int status;
	if (!cca_view_check_device(c->command, snap, snap->source, device, &status))
		return status;
	CcaSweep *sweep = cca_sweep_new(snap, device, c->version, &error);
	if (!sweep) {
		cca_view_print_error(c->command, error);
		g_error_free(error);
		return 1;
	}
	for (const char *const *p = configs; p && *p; p++)
		if (!cca_sweep_add_config(sweep, *p, "--config", &error)) {
			fprintf(stderr, "ccasim %s: --config %s: %s\n", c->command, *p,
				error->message);
			g_error_free(error);
			cca_sweep_free(sweep);
			return 2;
		}
	guint n_sets = sets ? g_strv_length((char **)sets) : 0;
	if (!cca_sweep_add_sets(sweep, sets, n_sets, &error)) {
		cca_view_print_error(c->command, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return 2;
	}
	if (default_grid && !cca_sweep_add_default_grid(sweep, c->memory_fraction > 0, &error)) {
		cca_view_print_error(c->command, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return 1;
	}
	*out = sweep;
	return 0;
}

void
cca_whatif_progress(void *data, guint done, guint total)
{
	CcaWhatifProgress *p = data;
	enum {
		WIDTH = 30
	};
	guint filled = total ? done * WIDTH / total : WIDTH;
	char bar[WIDTH + 1];
	for (guint i = 0; i < WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[WIDTH] = '\0';
	fprintf(stderr, "\rccasim %s: [%s] %u/%u replays", p->command, bar, done, total);
	fflush(stderr);
	p->shown = true;
}

void
cca_whatif_progress_end(CcaWhatifProgress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}
