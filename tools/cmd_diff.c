/* cmd_diff.c - `ccasim diff`: option parsing and output only. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "inputargs.h"
#include "commands.h"
#include "diff.h"
#include "engine.h"
#include "settings.h"
#include "snapshot.h"
#include "viewargs.h"
#include "whatif_cli.h"

typedef struct {
	char **configs;
	char *memory_fraction;
	char *device_memory;
	char *address_model;
	int device;
	char *pytorch_version;
	int top;
	gboolean json;
} DiffArgs;

static void
diff_args_clear(DiffArgs *a)
{
	g_strfreev(a->configs);
	g_free(a->memory_fraction);
	g_free(a->device_memory);
	g_free(a->address_model);
	g_free(a->pytorch_version);
}

/* One side: its trace, settings and label. */
typedef struct {
	CcaSnapshot *snap; /* owned or shared (see owns_snap) */
	bool owns_snap;
	CcaSettings settings;
	bool has_settings; /* --config given for this side */
	char *label;
	CcaReplayOptions opt;
} Side;

static void
side_clear(Side *s)
{
	if (s->owns_snap)
		cca_snapshot_free(s->snap);
	cca_settings_clear(&s->settings);
	g_free(s->label);
}

/* Parses CONF for side S; prints the usage error and returns FALSE. */
static gboolean
side_settings(Side *s, const char *conf, uint32_t version)
{
	GError *error = NULL;
	cca_settings_init(&s->settings);
	s->settings.pytorch_version = version;
	if (!cca_settings_parse(&s->settings, conf, &error)) {
		fprintf(stderr, "ccasim diff: --config %s: %s\n", conf, error->message);
		g_error_free(error);
		return FALSE;
	}
	s->has_settings = true;
	return TRUE;
}

int
cca_cmd_diff(int argc, char **argv)
{
	DiffArgs args = {0};
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &args.configs,
		 "Settings of A, then of B (PYTORCH_CUDA_ALLOC_CONF syntax; once: of B with one "
		 "trace, of both with two)",
		 "STRING"},
		{"memory-fraction", 0, 0, G_OPTION_ARG_STRING, &args.memory_fraction,
		 "set_per_process_memory_fraction(F) for both replays", "F"},
		{"device-memory", 0, 0, G_OPTION_ARG_STRING, &args.device_memory,
		 "Device memory for both replays; alone, cudaMalloc fails past it", "BYTES"},
		{"address-model", 0, 0, G_OPTION_ARG_STRING, &args.address_model,
		 "Addresses of what-if segments: driver (default), ascending or descending",
		 "MODEL"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &args.device,
		 "Which device of the traces (default 0)", "N"},
		{"pytorch-version", 0, 0, G_OPTION_ARG_STRING, &args.pytorch_version,
		 "Replay by the rules of this release, 2.0 to 2.11 (default: guessed)", "X.Y"},
		{"top", 'n', 0, G_OPTION_ARG_INT, &args.top,
		 "List this many segment and request sizes (default 10)", "N"},
		{"json", 0, 0, G_OPTION_ARG_NONE, &args.json, "Print one JSON object", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	g_autoptr(GOptionContext) octx = g_option_context_new("TRACE [TRACE_B]");
	g_option_context_set_summary(
		octx, "Replays one trace under two settings (--config A --config B), or two\n"
		      "traces, side by side: the first event after which their reserved memory\n"
		      "differs, and where the difference in the peak comes from (segments by\n"
		      "size, live blocks by requested size).");
	g_option_context_add_main_entries(octx, entries, NULL);
	g_option_context_add_group(octx, cca_inputargs_group());
	GError *error = NULL;
	if (!g_option_context_parse(octx, &argc, &argv, &error)) {
		cca_view_print_error("diff", error);
		g_error_free(error);
		diff_args_clear(&args);
		return 2;
	}
	CcaWhatifCommon common = {
		.command = "diff",
		.memory_fraction_text = args.memory_fraction,
		.device_memory = args.device_memory,
		.pytorch_version = args.pytorch_version,
		.device = args.device,
	};
	guint n_configs = args.configs ? g_strv_length(args.configs) : 0;
	CcaAddressModel model = CCA_ADDRESS_DRIVER;
	int status = 0;
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "ccasim diff: expected TRACE --config A --config B, or two traces "
				"(see --help)\n");
		status = 2;
	} else if (n_configs > 2) {
		fprintf(stderr, "ccasim diff: at most two --config\n");
		status = 2;
	} else if (argc == 2 && n_configs == 0) {
		fprintf(stderr, "ccasim diff: one trace needs --config (B's settings, or A's and "
				"B's)\n");
		status = 2;
	} else if (!cca_view_check_int("diff", "--top", args.top, 0, G_MAXINT)) {
		status = 2;
	} else if (args.address_model && (!cca_address_model_parse(args.address_model, &model) ||
					  model == CCA_ADDRESS_RECORDED)) {
		fprintf(stderr,
			"ccasim diff: --address-model: unknown model '%s' (driver, ascending, "
			"descending)\n",
			args.address_model);
		status = 2;
	} else if (!cca_whatif_common_check(&common)) {
		status = 2;
	}
	if (status) {
		diff_args_clear(&args);
		return status;
	}
	Side a = {0}, b = {0};
	a.snap = cca_snapshot_load(argv[1], &error);
	a.owns_snap = true;
	if (a.snap && argc == 3) {
		b.snap = cca_snapshot_load(argv[2], &error);
		b.owns_snap = true;
	} else {
		b.snap = a.snap;
	}
	if (!a.snap || !b.snap) {
		cca_view_print_error("diff", error);
		g_error_free(error);
		side_clear(&a);
		side_clear(&b);
		diff_args_clear(&args);
		return 1;
	}
	uint32_t va = common.version ? common.version : cca_replay_guess_pytorch_version(a.snap);
	uint32_t vb = common.version ? common.version : cca_replay_guess_pytorch_version(b.snap);
	gboolean ok = TRUE;
	if (n_configs == 2)
		ok = side_settings(&a, args.configs[0], va) &&
		     side_settings(&b, args.configs[1], vb);
	else if (n_configs == 1 && argc == 3)
		ok = side_settings(&a, args.configs[0], va) &&
		     side_settings(&b, args.configs[0], vb);
	else if (n_configs == 1)
		ok = side_settings(&b, args.configs[0], vb);
	for (int s = 0; ok && s < 2; s++) {
		Side *side = s ? &b : &a;
		if (!cca_view_check_device("diff", side->snap, side->snap->source, args.device,
					   &status)) {
			ok = FALSE;
			break;
		}
		cca_replay_options_init(&side->opt);
		side->opt.settings = side->has_settings ? &side->settings : NULL;
		side->opt.memory_fraction = common.memory_fraction;
		side->opt.device_memory = common.device_memory_bytes;
		side->opt.capacity_set = common.capacity_set;
		side->opt.address_model = model;
		side->opt.device = args.device;
		side->opt.pytorch_version = s ? vb : va;
		g_autofree char *conf =
			side->has_settings ? cca_settings_to_string(&side->settings) : NULL;
		const char *trace = argv[s && argc == 3 ? 2 : 1];
		if (!conf)
			side->label = g_strdup_printf("%s, recorded settings", trace);
		else if (!*conf)
			side->label = g_strdup_printf("%s, PyTorch's defaults", trace);
		else
			side->label = g_strdup_printf("%s, \"%s\"", trace, conf);
	}
	if (!ok) {
		side_clear(&a);
		side_clear(&b);
		diff_args_clear(&args);
		return status ? status : 2;
	}
	CcaDiff diff;
	if (!cca_diff_run(a.snap, &a.opt, b.snap, &b.opt, &diff, &error)) {
		cca_view_print_error("diff", error);
		g_error_free(error);
		cca_diff_clear(&diff);
		side_clear(&a);
		side_clear(&b);
		diff_args_clear(&args);
		return 1;
	}
	CcaDiffReport report = {.label_a = a.label, .label_b = b.label, .top = (guint)args.top};
	GString *out = g_string_new(NULL);
	if (args.json) {
		cca_diff_print_json(&diff, &report, out);
		g_string_append_c(out, '\n');
	} else {
		cca_diff_print_text(&diff, &report, out);
	}
	fputs(out->str, stdout);
	g_string_free(out, TRUE);
	cca_diff_clear(&diff);
	side_clear(&a);
	side_clear(&b);
	diff_args_clear(&args);
	return 0;
}
