/* cmd_explain.c - `ccasim explain TRACE`: option parsing and output only. */
#include "config.h"

#include <stdio.h>

#include "inputargs.h"
#include "commands.h"
#include "explain.h"
#include "viewargs.h"

int
cca_cmd_explain(int argc, char **argv)
{
	CcaViewArgs args = {0};
	int limit = 20, top = 8;
	GOptionEntry entries[] = {
		{"limit", 'n', 0, G_OPTION_ARG_INT, &limit,
		 "cudaMalloc calls and OOMs explained one by one (default 20; 0: all)", "N"},
		{"top", 0, 0, G_OPTION_ARG_INT, &top,
		 "Rows of each ranking at the reserved peak (default 8)", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) octx = g_option_context_new("TRACE");
	g_option_context_set_summary(
		octx, "Explains a replay in plain language: why each cudaMalloc happened (no free\n"
		      "block on the stream, too small, the max_split_size rules, rounding), why\n"
		      "each retry and OOM happened, and which request sizes and call sites strand\n"
		      "free memory at the reserved peak.");
	cca_view_args_add(octx, &args, FALSE);
	g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_group(octx, cca_inputargs_group());
	GError *error = NULL;
	if (!g_option_context_parse(octx, &argc, &argv, &error)) {
		cca_view_print_error("explain", error);
		g_error_free(error);
		cca_view_args_clear(&args);
		return 2;
	}
	if (argc != 2) {
		fprintf(stderr, "ccasim explain: expected one TRACE (see --help)\n");
		cca_view_args_clear(&args);
		return 2;
	}
	if (!cca_view_check_int("explain", "--limit", limit, 0, G_MAXINT) ||
	    !cca_view_check_int("explain", "--top", top, 1, G_MAXINT)) {
		cca_view_args_clear(&args);
		return 2;
	}
	CcaReplayOptions opt;
	int status;
	g_autoptr(CcaSnapshot) snap = cca_view_args_load(&args, "explain", argv[1], &opt, &status);
	if (!snap) {
		cca_view_args_clear(&args);
		return status;
	}
	if (args.n_settings)
		opt.settings = &args.settings[0];
	g_autofree char *label = cca_view_settings_label(snap, &opt);
	GString *out = g_string_new(NULL);
	g_string_append_printf(
		out, "%s, device %d: %" G_GUINT64_FORMAT " events, %s, PyTorch %u.%u rules\n",
		argv[1], opt.device, snap->n_events[opt.device], label, opt.pytorch_version / 100,
		opt.pytorch_version % 100);
	CcaExplainParams params = {.limit = (guint)limit, .top = (guint)top};
	if (!cca_explain_run(snap, &opt, &params, out, &error)) {
		cca_view_print_error("explain", error);
		g_error_free(error);
		g_string_free(out, TRUE);
		cca_view_args_clear(&args);
		return 1;
	}
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	cca_view_args_clear(&args);
	return 0;
}
