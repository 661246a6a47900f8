/* cmd_step.c - `ccasim step TRACE`: walks through a replay in the
 * terminal.  Each view is one replay up to the entry (stepview.c); keys
 * move between entries.  With --at, or when stdin or stdout is not a
 * terminal, one view is printed and the command exits. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "lab.h"
#include "stepview.h"
#include "text.h"

static const char step_keys[] =
	"keys: n/space/enter next  b/N back  m next cudaMalloc  M previous cudaMalloc  "
	"o next OOM  g go to event  q quit";

/* The first index in INDICES after AT (FORWARD) or before it; AT if none. */
static uint64_t
jump(const GArray *indices, uint64_t at, gboolean forward)
{
	if (forward) {
		for (guint i = 0; i < indices->len; i++)
			if (g_array_index(indices, uint64_t, i) > at)
				return g_array_index(indices, uint64_t, i);
	} else {
		for (guint i = indices->len; i-- > 0;)
			if (g_array_index(indices, uint64_t, i) < at)
				return g_array_index(indices, uint64_t, i);
	}
	return at;
}

static int
show(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaStepParams *params, gboolean screen,
     const char *note)
{
	GString *out = g_string_new(NULL);
	GError *error = NULL;
	if (!cca_stepview_describe(snap, opt, params, out, &error)) {
		cca_cli_print_error("step", error);
		g_error_free(error);
		g_string_free(out, TRUE);
		return 1;
	}
	if (screen)
		fputs("\033[H\033[2J", stdout);
	GString *fitted = g_string_new(NULL);
	cca_text_fit(fitted, out->str, cca_text_fit_width(params->wide));
	fputs(fitted->str, stdout);
	g_string_free(fitted, TRUE);
	if (screen)
		printf("\n%s%s\n", note ? note : "", step_keys);
	fflush(stdout);
	g_string_free(out, TRUE);
	return 0;
}

/* The interactive loop: raw keys from the terminal on stdin. */
static int
interact(const CcaSnapshot *snap, const CcaReplayOptions *opt, CcaStepParams *params)
{
	struct termios cooked, raw;
	if (tcgetattr(STDIN_FILENO, &cooked) != 0)
		return show(snap, opt, params, FALSE, NULL);
	raw = cooked;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	uint64_t n = snap->n_events[opt->device];
	GArray *mallocs = NULL, *ooms = NULL;
	const char *note = NULL;
	int status = show(snap, opt, params, TRUE, NULL);
	while (status == 0) {
		int c = getchar();
		uint64_t at = params->at;
		note = NULL;
		if (c == EOF || c == 'q' || c == 'Q')
			break;
		if (c == 'm' || c == 'M' || c == 'o') {
			if (!mallocs) {
				mallocs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
				ooms = g_array_new(FALSE, FALSE, sizeof(uint64_t));
				GError *error = NULL;
				if (!cca_stepview_index(snap, opt, mallocs, ooms, &error)) {
					cca_cli_print_error("step", error);
					g_error_free(error);
					status = 1;
					break;
				}
			}
			at = jump(c == 'o' ? ooms : mallocs, at, c != 'M');
			if (at == params->at)
				note = c == 'o' ? "(no further OOM)\n"
						: "(no further cudaMalloc)\n";
		} else if (c == 'n' || c == ' ' || c == '\n') {
			if (at + 1 < n)
				at++;
		} else if (c == 'b' || c == 'N' || c == 'p' || c == 127) {
			if (at > 0)
				at--;
		} else if (c == 'g') {
			tcsetattr(STDIN_FILENO, TCSANOW, &cooked);
			printf("go to event (0..%" G_GUINT64_FORMAT "): ", n - 1);
			fflush(stdout);
			char line[64];
			if (fgets(line, sizeof line, stdin)) {
				guint64 v;
				if (g_ascii_string_to_unsigned(g_strstrip(line), 10, 0, n - 1, &v,
							       NULL))
					at = v;
				else
					note = "(not an event number)\n";
			}
			tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		} else {
			note = "";
		}
		params->at = at;
		status = show(snap, opt, params, TRUE, note);
	}
	tcsetattr(STDIN_FILENO, TCSANOW, &cooked);
	if (mallocs) {
		g_array_free(mallocs, TRUE);
		g_array_free(ooms, TRUE);
	}
	return status;
}

int
cca_cmd_step(const CcaCliCommand *cmd, int argc, char **argv)
{
	g_auto(CcaCliArgs) args = {0};
	gint64 at = -1, line = -1; /* not given */
	g_autofree char *at_text = NULL, *line_text = NULL;
	int max_segments = 24, width = -1; /* -1: as COLUMNS leaves room */
	gboolean wide = FALSE;
	GOptionEntry entries[] = {
		{"wide", 'w', 0, G_OPTION_ARG_NONE, &wide,
		 "Whole lines (default: wrapped to COLUMNS, or to the terminal's width)", NULL},
		{"at", 0, 0, G_OPTION_ARG_STRING, &at_text,
		 "Print the view at this event and exit (no keys)", "EVENT"},
		{"line", 0, 0, G_OPTION_ARG_STRING, &line_text,
		 "A lab: print the view at the first request (else the first event) that lab line N "
		 "made, and exit",
		 "N"},
		{"max-segments", 0, 0, G_OPTION_ARG_INT, &max_segments,
		 "Segments listed (default 24; 0: all)", "N"},
		{"width", 0, 0, G_OPTION_ARG_INT, &width,
		 "Characters of each segment's bar (default 48, less where COLUMNS is narrower "
		 "than a segment's line)",
		 "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int status = cca_cli_parse(
		cmd, entries,
		"Walks through a replay one trace event at a time: the event, what the\n"
		"allocator did and why, and the pools and segments after it.  In a terminal:\n"
		"n/space next, b back, m next cudaMalloc, o next OOM, g go to, q quit.",
		NULL, &args, &argc, &argv);
	if (status >= 0)
		return status;
	if (argc != 2)
		return cca_cli_usage(cmd, "expected one TRACE (see --help)");
	if (!cca_cli_check_int("step", "--max-segments", max_segments, 0, G_MAXINT) ||
	    (width != -1 && !cca_cli_check_int("step", "--width", width, 8, 10000)) ||
	    !cca_cli_parse_int("step", "--at", at_text, 0, G_MAXINT64, &at) ||
	    !cca_cli_parse_int("step", "--line", line_text, 1, G_MAXINT64, &line))
		return 2;
	if (at_text && line_text)
		return cca_cli_usage(cmd, "--at and --line name the same thing: give one");
	CcaReplayOptions opt;
	g_autoptr(CcaSnapshot) snap = cca_cli_load(&args, "step", argv[1], &opt, &status);
	if (!snap)
		return status;
	if (args.n_settings)
		opt.settings = &args.settings[0];
	/* a segment's line holds some 80 columns besides its bar */
	guint fit = cca_text_fit_width(wide);
	if (width == -1)
		width = fit == G_MAXUINT ? 48 : (int)CLAMP((gint64)fit - 80, 8, 48);
	CcaStepParams params = {
		.at = at >= 0 ? (uint64_t)at : 0,
		.max_segments = (guint)max_segments,
		.bar_width = (guint)width,
		.wide = wide,
	};
	if (snap->n_events[opt.device] == 0) {
		g_autofree char *shown = cca_text_path(argv[1]);
		fprintf(stderr, "ccasim step: %s: device %d has no events\n", shown, opt.device);
		return 1;
	}
	if (line > 0) {
		g_autoptr(GError) error = NULL;
		uint64_t index = 0;
		if (!cca_lab_find_line(snap, opt.device, (uint64_t)line, true, &index, &error)) {
			g_autofree char *shown = cca_text_path(argv[1]);
			fprintf(stderr, "ccasim step: %s: --line: %s\n", shown, error->message);
			return 2;
		}
		params.at = index;
		at_text = g_strdup("");
	}
	if (params.at >= snap->n_events[opt.device])
		return cca_cli_usage(cmd,
				     "--at %" G_GUINT64_FORMAT
				     " is past the trace's end (%" G_GUINT64_FORMAT " events)",
				     params.at, snap->n_events[opt.device]);
	if (at_text == NULL && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		return interact(snap, &opt, &params);
	return show(snap, &opt, &params, FALSE, NULL);
}
