/* whatif_cli.c - option handling shared by the what-if commands.
 *
 * Usage errors (bad options, settings PyTorch would reject, a device the
 * trace lacks) exit 2 with one line on stderr; unreadable input exits 1.
 */
#include "config.h"

#include "whatif_cli.h"

#include <stdio.h>

#include "settings.h"
#include "size.h"
#include "viewargs.h"

int
cca_whatif_build_grid(const char *cmd, const CcaCliArgs *args, const CcaSnapshot *snap, int device,
		      const char *const *configs, const char *const *sets, gboolean default_grid,
		      CcaSweep **out)
{
	GError *error = NULL;
	int status;
	if (!cca_view_check_device(cmd, snap, snap->source, device, &status))
		return status;
	CcaSweep *sweep = cca_sweep_new(snap, device, args->pytorch_version, &error);
	if (!sweep) {
		cca_view_print_error(cmd, error);
		g_error_free(error);
		return 1;
	}
	for (const char *const *p = configs; p && *p; p++)
		if (!cca_sweep_add_config(sweep, *p, "--config", &error)) {
			fprintf(stderr, "ccasim %s: --config %s: %s\n", cmd, *p, error->message);
			g_error_free(error);
			cca_sweep_free(sweep);
			return 2;
		}
	guint n_sets = sets ? g_strv_length((char **)sets) : 0;
	if (!cca_sweep_add_sets(sweep, sets, n_sets, &error)) {
		cca_view_print_error(cmd, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return 2;
	}
	if (default_grid && !cca_sweep_add_default_grid(sweep, args->memory_fraction > 0, &error)) {
		cca_view_print_error(cmd, error);
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
