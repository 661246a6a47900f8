/* fit.c - bisecting the device memory a trace needs.
 *
 * Models `ccasim replay --device-memory C` for varying C: the simulated
 * device refuses a cudaMalloc (or a page map) that would take its used
 * bytes past C, the allocator frees its cache and retries as PyTorch does,
 * and the trace "fits" when no request fails (num_ooms == 0: a recorded
 * OOM must succeed too, since the program died there).
 *
 * The search keeps two bounds: LO, a capacity known to fail (replayed, or
 * below the peak of allocated bytes, which every run that fits reaches),
 * and HI, one known to fit (replayed).  It halves [LO, HI] on 2 MiB
 * multiples until HI - LO = 2 MiB and replays LO if it never did, so both
 * answers are backed by a replay.  Fitting need not be monotone in C (a
 * smaller cache can fragment differently); the answer is then a boundary,
 * not the only one, and a below-run that fits is flagged.
 */
#include "config.h"

#include "fit.h"

#include <string.h>

#include "calls.h"
#include "json.h"
#include "plan.h"
#include "size.h"

/* X GiB, as PyTorch prints it (two decimals), to the nearest MiB */
#define GIB(x) ((uint64_t)((x)*1024.0 + 0.5) * CCA_MIB)

/* totalGlobalMem of common GPUs.  "reported" figures come from PyTorch's
 * own OOM message ("GPU 0 has a total capacity of X GiB", two decimals,
 * so +-5 MiB) quoted in public issues on a card of that model. */
static const CcaGpuPreset presets[] = {
	{"H200", "h200-141gb", CCA_H200_TOTAL_MEMORY, "measured",
	 "torch.cuda.get_device_properties(0).total_memory of the H200 that recorded "
	 "traces/pytorch-2.11"},
	{"H100-80GB", "h100", GIB(79.11), "reported",
	 "PyTorch OOM message on an H100 in vllm-project/vllm#27508"},
	{"A100-80GB", "", GIB(79.25), "reported",
	 "PyTorch OOM messages in levihsu/OOTDiffusion#235 and HiDream-ai/VAREdit#6 (79.14 GiB "
	 "in lianqi1008/Control-GIC#6: variants differ)"},
	{"A100-40GB", "a100", GIB(39.50), "reported",
	 "PyTorch OOM message in TianheWu/CoSeR#10 (39.59 GiB in raoyongming/DenseCLIP#52: "
	 "variants differ)"},
	{"L40S", "", GIB(44.53), "reported", "PyTorch OOM message in Wan-Video/Wan2.1#205"},
	{"A10G", "", GIB(22.49), "reported",
	 "PyTorch OOM message in AUTOMATIC1111/stable-diffusion-webui#1259"},
	{"L4", "", GIB(22.49), "estimate",
	 "no report found; assumed equal to the A10G (24 GB of GDDR6 with ECC on both)"},
	{"RTX-4090", "4090", GIB(23.64), "reported",
	 "PyTorch OOM message in 3DTopia/Phidias-Diffusion#8 (23.65 GiB in "
	 "TRI-ML/packnet-sfm#250); a display attached takes more"},
	{"RTX-3090", "3090", GIB(23.70), "reported",
	 "PyTorch OOM messages in GaoLii/DSP#10 and xiaoxiangAQ/GAS-Net#7"},
	{"V100-32GB", "", GIB(31.74), "reported",
	 "PyTorch OOM messages in liucongg/ChatGLM-Finetuning#73 and haotian-liu/LLaVA#812"},
	{"V100-16GB", "v100", GIB(15.78), "reported",
	 "PyTorch OOM message in kchengiva/Shift-GCN#34"},
	{"T4", "", GIB(14.75), "reported",
	 "PyTorch OOM messages in hpcaitech/Open-Sora#697 and googlecolab/colabtools#3439"},
};

const CcaGpuPreset *
cca_fit_gpu_presets(guint *n)
{
	*n = G_N_ELEMENTS(presets);
	return presets;
}

/* NAME lower-cased without ' ', '-', '_'. */
static char *
gpu_key(const char *name, size_t len)
{
	GString *k = g_string_new(NULL);
	for (size_t i = 0; i < len && name[i]; i++)
		if (name[i] != ' ' && name[i] != '-' && name[i] != '_')
			g_string_append_c(k, g_ascii_tolower(name[i]));
	return g_string_free(k, FALSE);
}

const CcaGpuPreset *
cca_fit_gpu_preset_find(const char *name)
{
	g_autofree char *want = gpu_key(name, strlen(name));
	for (guint i = 0; i < G_N_ELEMENTS(presets); i++) {
		g_autofree char *k = gpu_key(presets[i].name, strlen(presets[i].name));
		if (strcmp(k, want) == 0)
			return &presets[i];
		for (const char *a = presets[i].aliases; *a;) {
			const char *end = strchr(a, ',');
			size_t len = end ? (size_t)(end - a) : strlen(a);
			g_autofree char *ak = gpu_key(a, len);
			if (strcmp(ak, want) == 0)
				return &presets[i];
			a += len + (end ? 1 : 0);
		}
	}
	return NULL;
}

gboolean
cca_fit_recorded_context(const CcaSnapshot *snap, int device, uint64_t *bytes, const char **source,
			 GError **error)
{
	if (device < 0 || device >= snap->n_devices || !cca_calls_present(snap, device))
		return FALSE;
	g_autoptr(CcaCalls) calls = cca_calls_parse(snap, device, error);
	if (!calls)
		return FALSE;
	static const struct {
		CcaSampleWhen when;
		const char *source;
	} order[] = {
		{CCA_SAMPLE_PEAK, "recorded by ccasim-record at the peak sample"},
		{CCA_SAMPLE_DUMP, "recorded by ccasim-record at the dump"},
		{CCA_SAMPLE_START, "recorded by ccasim-record at the start"},
	};
	for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
		const CcaCall *s = cca_calls_sample(calls, order[i].when);
		if (s) {
			*bytes = cca_calls_outside_bytes(s);
			*source = order[i].source;
			return TRUE;
		}
	}
	return FALSE;
}

uint64_t
cca_fit_gpu_usable(const CcaGpuPreset *gpu, uint64_t context)
{
	return gpu->total_memory > context ? gpu->total_memory - context : 0;
}

/* ------------------------------------------------------------ search */

typedef struct {
	const CcaSweep *sweep;
	const CcaFitOptions *options;
	CcaFitRow *rows;
	guint *row_of, *run_of;	   /* per task: the row, and the slot in its runs */
	CcaAddressModel *model_of; /* per task */
	GError **errors;	   /* per task */
	guint offset;		   /* the phase's first task */
	/* progress over both phases */
	CcaSweepProgress progress;
	void *progress_data;
	guint n_tasks;
} FitJob;

static bool
fits(const CcaSweepRun *run)
{
	return run->value[CCA_SWEEP_FIG_OOM] == 0;
}

static gboolean
replay_at(const FitJob *job, const CcaSweepRow *row, CcaAddressModel model, uint64_t capacity,
	  CcaSweepRun *run, guint *replays, GError **error)
{
	CcaSweepOptions o = {.device_memory = capacity, .capacity_set = true, .threads = 1};
	(*replays)++;
	return cca_sweep_replay(job->sweep, row, &o, model, run, error);
}

static uint64_t
round_up_step(double bytes)
{
	uint64_t b = (uint64_t)bytes;
	return (b + CCA_FIT_STEP - 1) / CCA_FIT_STEP * CCA_FIT_STEP;
}

/* The answer HINT (another address model's fit of the row) checked under
 * MODEL: when the replay at its capacity fits and the one a step below
 * does not, that is a boundary of this model too, backed by both replays
 * (stored in OUT; returns TRUE with *DONE set).  Else *DONE stays FALSE
 * and the bisection runs. */
static gboolean
fit_try_hint(const FitJob *job, const CcaSweepRow *row, CcaAddressModel model,
	     const CcaFitRun *hint, CcaFitRun *out, bool *done, GError **error)
{
	*done = false;
	if (!hint || !hint->found || hint->capacity <= CCA_FIT_STEP)
		return TRUE;
	CcaSweepRun at, below;
	if (!replay_at(job, row, model, hint->capacity, &at, &out->replays, error))
		return FALSE;
	if (!fits(&at))
		return TRUE;
	if (!replay_at(job, row, model, hint->capacity - CCA_FIT_STEP, &below, &out->replays,
		       error))
		return FALSE;
	if (fits(&below))
		return TRUE;
	out->found = true;
	out->capacity = hint->capacity;
	out->at = at;
	out->below_run = true;
	out->below = below;
	out->below_fits = false;
	*done = true;
	return TRUE;
}

/* The bisection for one row and model; HINT (NULL: none) is tried first
 * (fit_try_hint()). */
static gboolean
fit_search(const FitJob *job, const CcaSweepRow *row, CcaAddressModel model, const CcaFitRun *hint,
	   CcaFitRun *out, GError **error)
{
	memset(out, 0, sizeof *out);
	bool done = false;
	if (!fit_try_hint(job, row, model, hint, out, &done, error))
		return FALSE;
	if (done)
		return TRUE;
	CcaSweepRun probe, run;
	if (!replay_at(job, row, model, CCA_FIT_LIMIT, &probe, &out->replays, error))
		return FALSE;
	if (!fits(&probe)) {
		out->at = probe;
		return TRUE;
	}
	out->found = true;
	uint64_t hi = round_up_step(probe.value[CCA_SWEEP_FIG_PEAK_RESERVED]);
	double peak_allocated = probe.value[CCA_SWEEP_FIG_PEAK_ALLOCATED];
	if (hi == 0) { /* nothing is ever reserved */
		out->capacity = 0;
		out->at = probe;
		return TRUE;
	}
	/* The probe's cudaMallocs all succeeded when the largest request
	 * (rounded up: at most 64 MiB more) fits beside its peak below the
	 * limit; then each took the device to at most its peak reserved,
	 * and a device of HI bytes refuses none of them: the replay at HI is
	 * the probe. */
	CcaSweepRun at;
	const CcaPlan *plan = job->sweep->plan;
	if (plan && plan->max_request <= CCA_FIT_LIMIT / 2 &&
	    hi + plan->max_request + 64 * CCA_MIB <= CCA_FIT_LIMIT)
		at = probe;
	else if (!replay_at(job, row, model, hi, &at, &out->replays, error))
		return FALSE;
	while (!fits(&at)) { /* not monotone: look upwards */
		hi = hi * 2 < CCA_FIT_LIMIT ? hi * 2 : CCA_FIT_LIMIT;
		if (hi == CCA_FIT_LIMIT) {
			at = probe;
			break;
		}
		if (!replay_at(job, row, model, hi, &at, &out->replays, error))
			return FALSE;
	}
	/* every run that fits reaches the peak of allocated bytes, so a
	 * capacity below it fails without a replay */
	uint64_t lo = peak_allocated > 0
			      ? ((uint64_t)peak_allocated - 1) / CCA_FIT_STEP * CCA_FIT_STEP
			      : 0;
	if (lo >= hi)
		lo = hi - CCA_FIT_STEP;
	bool lo_replayed = false;
	while (hi - lo > CCA_FIT_STEP) {
		uint64_t mid = lo + (hi - lo) / CCA_FIT_STEP / 2 * CCA_FIT_STEP;
		if (!replay_at(job, row, model, mid, &run, &out->replays, error))
			return FALSE;
		if (fits(&run)) {
			hi = mid;
			at = run;
		} else {
			lo = mid;
			out->below = run;
			lo_replayed = true;
		}
	}
	out->capacity = hi;
	out->at = at;
	if (lo == 0)
		return TRUE; /* 2 MiB fits: below it there is no device to replay */
	if (!lo_replayed && !replay_at(job, row, model, lo, &out->below, &out->replays, error))
		return FALSE;
	out->below_run = true;
	out->below_fits = fits(&out->below);
	return TRUE;
}

/* A phase's progress as the whole search's. */
static void
fit_progress(void *data, guint done, guint total)
{
	const FitJob *job = data;
	(void)total;
	job->progress(job->progress_data, job->offset + done, job->n_tasks);
}

static void
fit_task(void *data, guint i)
{
	FitJob *job = data;
	i += job->offset;
	CcaFitRow *frow = &job->rows[job->row_of[i]];
	CcaAddressModel model = job->model_of[i];
	CcaFitRun *out = &frow->runs[job->run_of[i]];
	/* the other address models start from the first one's answer */
	const CcaFitRun *hint = job->run_of[i] > 0 ? &frow->runs[0] : NULL;
	if (!fit_search(job, frow->row, model, hint, out, &job->errors[i]))
		return;
	const CcaFitOptions *o = job->options;
	for (guint g = 0; g < o->n_gpus && g < CCA_FIT_MAX_GPUS; g++) {
		uint64_t usable = cca_fit_gpu_usable(o->gpus[g], o->context);
		CcaSweepRun run;
		if (usable == 0) {
			out->gpu_fits[g] = 0;
			continue;
		}
		if (!replay_at(job, frow->row, model, usable, &run, &out->replays, &job->errors[i]))
			return;
		out->gpu_fits[g] = fits(&run) ? 1 : 0;
	}
}

CcaFitRow *
cca_fit_run(CcaSweep *sweep, const CcaFitOptions *options, GError **error)
{
	if (!cca_sweep_plan(sweep, error))
		return NULL;
	guint n_rows = sweep->rows->len, n_tasks = 0;
	CcaFitRow *rows = g_new0(CcaFitRow, n_rows);
	CcaAddressModel *models = g_new(CcaAddressModel, n_rows * CCA_SWEEP_MAX_MODELS);
	for (guint r = 0; r < n_rows; r++) {
		rows[r].row = g_ptr_array_index(sweep->rows, r);
		/* a capacity near the answer always acts: recorded rows get
		 * the what-if models too */
		rows[r].n_runs =
			cca_sweep_row_models(rows[r].row, true, &models[r * CCA_SWEEP_MAX_MODELS]);
		n_tasks += rows[r].n_runs;
	}
	FitJob job = {
		.sweep = sweep,
		.options = options,
		.rows = rows,
		.row_of = g_new(guint, n_tasks),
		.run_of = g_new(guint, n_tasks),
		.model_of = g_new(CcaAddressModel, n_tasks),
		.errors = g_new0(GError *, n_tasks),
	};
	/* first each row's first address model, then the others, which start
	 * from its answer (fit_try_hint()) */
	guint k = 0;
	for (guint m = 0; m < CCA_SWEEP_MAX_MODELS; m++)
		for (guint r = 0; r < n_rows; r++) {
			if (m >= rows[r].n_runs)
				continue;
			job.row_of[k] = r;
			job.run_of[k] = m;
			job.model_of[k++] = models[r * CCA_SWEEP_MAX_MODELS + m];
		}
	g_free(models);
	job.progress = options->progress;
	job.progress_data = options->progress_data;
	job.n_tasks = n_tasks;
	cca_sweep_parallel(n_rows, options->threads, fit_task, &job,
			   options->progress ? fit_progress : NULL, &job);
	job.offset = n_rows;
	cca_sweep_parallel(n_tasks - n_rows, options->threads, fit_task, &job,
			   options->progress ? fit_progress : NULL, &job);
	gboolean ok = TRUE;
	for (guint i = 0; i < n_tasks; i++) {
		if (job.errors[i] && ok) {
			g_propagate_error(error, job.errors[i]);
			ok = FALSE;
		} else if (job.errors[i]) {
			g_error_free(job.errors[i]);
		}
	}
	g_free(job.row_of);
	g_free(job.run_of);
	g_free(job.model_of);
	g_free(job.errors);
	if (!ok) {
		g_free(rows);
		return NULL;
	}
	for (guint r = 0; r < n_rows; r++) {
		CcaFitRow *f = &rows[r];
		f->lo = f->hi = f->runs[0].capacity;
		for (guint m = 1; m < f->n_runs; m++) {
			const CcaFitRun *a = &f->runs[0], *b = &f->runs[m];
			f->lo = MIN(f->lo, b->capacity);
			f->hi = MAX(f->hi, b->capacity);
			if (a->found != b->found ||
			    memcmp(a->gpu_fits, b->gpu_fits, sizeof a->gpu_fits) != 0)
				f->sensitive = true;
		}
		if (f->lo != f->hi)
			f->sensitive = true;
	}
	return rows;
}

static gint
compare_fit_rows(gconstpointer pa, gconstpointer pb)
{
	const CcaFitRow *a = pa, *b = pb;
	if (a->runs[0].found != b->runs[0].found)
		return a->runs[0].found ? -1 : 1;
	if (a->runs[0].capacity != b->runs[0].capacity)
		return a->runs[0].capacity < b->runs[0].capacity ? -1 : 1;
	return strcmp(a->row->conf, b->row->conf);
}

void
cca_fit_sort(CcaFitRow *rows, guint n)
{
	qsort(rows, n, sizeof *rows, compare_fit_rows);
}

/* ---------------------------------------------------------- printing */

static const char *
conf_label(const char *conf)
{
	return *conf ? conf : "(PyTorch defaults)";
}

static char *
mib(uint64_t bytes)
{
	return g_strdup_printf("%" G_GUINT64_FORMAT, bytes >> 20);
}

static char *
fit_cell(const CcaFitRow *f, guint c, guint rank)
{
	const CcaFitRun *r = &f->runs[0];
	switch (c) {
	case 0:
		return g_strdup_printf("%u", rank);
	case 1:
		return g_strdup_printf("%s%s", conf_label(f->row->conf),
				       f->row->recorded ? " (recorded)" : "");
	case 2:
		if (!r->found)
			return g_strdup("> 1 TiB");
		if (f->lo != f->hi) {
			g_autofree char *a = mib(f->lo), *b = mib(f->hi);
			return g_strdup_printf("%s..%s", a, b);
		}
		return mib(r->capacity);
	case 3:
		return g_strdup_printf("%.1f",
				       r->at.value[CCA_SWEEP_FIG_PEAK_RESERVED] / (double)CCA_MIB);
	case 4:
		if (!r->found)
			return g_strdup_printf("OOM at event %" G_GUINT64_FORMAT, r->at.oom_event);
		if (!r->below_run)
			return g_strdup("-");
		if (r->below_fits)
			return g_strdup("fits (!)");
		return g_strdup_printf("OOM at event %" G_GUINT64_FORMAT, r->below.oom_event);
	case 5:
		return g_strdup(f->sensitive ? "varies" : "stable");
	default:
		break;
	}
	guint g = c - 6;
	bool any_yes = false, any_no = false;
	for (guint m = 0; m < f->n_runs; m++) {
		any_yes |= f->runs[m].gpu_fits[g] == 1;
		any_no |= f->runs[m].gpu_fits[g] != 1;
	}
	return g_strdup(any_yes && any_no ? "depends" : any_yes ? "yes" : "no");
}

void
cca_fit_print_text(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
		   const CcaFitReport *report, GString *out)
{
	const CcaFitOptions *o = report->options;
	guint n_cols = 6 + o->n_gpus;
	const char *head[6] = {"#",	     "settings",      "fits in MiB", "peak reserved MiB",
			       "2 MiB less", "address choice"};
	guint *width = g_new0(guint, n_cols);
	char **heads = g_new0(char *, n_cols);
	for (guint c = 0; c < n_cols; c++) {
		heads[c] = c < 6 ? g_strdup(head[c]) : g_strdup(o->gpus[c - 6]->name);
		width[c] = (guint)strlen(heads[c]);
	}
	char ***cells = g_new0(char **, n);
	for (guint r = 0; r < n; r++) {
		cells[r] = g_new0(char *, n_cols);
		for (guint c = 0; c < n_cols; c++) {
			cells[r][c] = fit_cell(&rows[r], c, r + 1);
			width[c] = MAX(width[c], (guint)g_utf8_strlen(cells[r][c], -1));
		}
	}
	g_string_append_printf(out,
			       "%s, device %d: the smallest device memory (to 2 MiB) at which the "
			       "trace runs without OOM;\n"
			       "each answer is a replay that fits, and 2 MiB less is a replay "
			       "that runs out of memory\n",
			       report->trace, sweep->device);
	for (guint r = 0; r <= n; r++) {
		GString *l = g_string_new(NULL);
		for (guint c = 0; c < n_cols; c++) {
			const char *s = r == 0 ? heads[c] : cells[r - 1][c];
			bool left = c == 1 || c == 4 || c == 5;
			guint len = (guint)g_utf8_strlen(s, -1);
			if (c)
				g_string_append(l, "  ");
			if (!left)
				for (guint i = len; i < width[c]; i++)
					g_string_append_c(l, ' ');
			g_string_append(l, s);
			if (left)
				for (guint i = len; i < width[c]; i++)
					g_string_append_c(l, ' ');
		}
		g_strchomp(l->str);
		g_string_append_printf(out, "%s\n", l->str);
		g_string_free(l, TRUE);
	}
	for (guint r = 0; r < n; r++) {
		for (guint c = 0; c < n_cols; c++)
			g_free(cells[r][c]);
		g_free(cells[r]);
	}
	g_free(cells);
	for (guint c = 0; c < n_cols; c++)
		g_free(heads[c]);
	g_free(heads);
	g_free(width);
	guint n_models;
	const CcaAddressModel *models = cca_sweep_address_models(&n_models);
	g_string_append(out, "address choice: each row is searched with each address model (");
	for (guint m = 0; m < n_models; m++)
		g_string_append_printf(out, "%s%s", m ? ", " : "",
				       cca_simdevice_address_model_name(models[m]));
	g_string_append(out, "; the recorded settings first with the trace's own addresses, as "
			     "replay --device-memory does); the first is shown, lo..hi is the "
			     "range where they differ.\n");
	if (o->n_gpus) {
		char a[32], b[32], c[32];
		g_string_append_printf(
			out,
			"GPU columns: a replay with the GPU's total memory less %s outside "
			"the caching allocator (the CUDA context and libraries; %s):\n",
			cca_size_format(o->context, c),
			o->context_source ? o->context_source : CCA_GPU_CONTEXT_SOURCE);
		for (guint g = 0; g < o->n_gpus; g++)
			g_string_append_printf(
				out, "  %-10s %s total, %s usable (%s: %s)\n", o->gpus[g]->name,
				cca_size_format(o->gpus[g]->total_memory, a),
				cca_size_format(cca_fit_gpu_usable(o->gpus[g], o->context), b),
				o->gpus[g]->kind, o->gpus[g]->source);
	}
	g_autoptr(GPtrArray) notes = cca_sweep_notes(sweep);
	for (guint i = 0; i < notes->len; i++)
		g_string_append_printf(out, "note: %s\n",
				       (const char *)g_ptr_array_index(notes, i));
}

static json_t *
run_json(const CcaSweepRun *run, uint64_t capacity)
{
	bool oom = run->value[CCA_SWEEP_FIG_OOM] != 0;
	json_t *o = json_object();
	json_object_set_new(o, "device_memory", cca_json_uint(capacity));
	json_object_set_new(o, "oom", cca_json_bool(oom));
	json_object_set_new(o, "oom_event", oom ? cca_json_uint(run->oom_event) : json_null());
	json_object_set_new(o, "events", cca_json_uint(run->events));
	json_object_set_new(o, "peak_reserved",
			    cca_json_uint((uint64_t)run->value[CCA_SWEEP_FIG_PEAK_RESERVED]));
	json_object_set_new(o, "peak_allocated",
			    cca_json_uint((uint64_t)run->value[CCA_SWEEP_FIG_PEAK_ALLOCATED]));
	return o;
}

json_t *
cca_fit_to_json(const CcaSweep *sweep, const CcaFitRow *rows, guint n, const CcaFitReport *report)
{
	const CcaFitOptions *o = report->options;
	json_t *doc = json_object();
	json_object_set_new(doc, "trace", cca_json_string(report->trace));
	json_object_set_new(doc, "device", json_integer(sweep->device));
	json_object_set_new(doc, "step", cca_json_uint(CCA_FIT_STEP));
	json_object_set_new(doc, "limit", cca_json_uint(CCA_FIT_LIMIT));
	json_object_set_new(doc, "context", cca_json_uint(o->context));
	json_object_set_new(
		doc, "context_source",
		cca_json_string(o->context_source ? o->context_source : CCA_GPU_CONTEXT_SOURCE));
	json_t *gpus = json_array();
	for (guint g = 0; g < o->n_gpus; g++) {
		json_t *gpu = json_object();
		json_object_set_new(gpu, "name", cca_json_string(o->gpus[g]->name));
		json_object_set_new(gpu, "total_memory", cca_json_uint(o->gpus[g]->total_memory));
		json_object_set_new(gpu, "usable",
				    cca_json_uint(cca_fit_gpu_usable(o->gpus[g], o->context)));
		json_object_set_new(gpu, "kind", cca_json_string(o->gpus[g]->kind));
		json_object_set_new(gpu, "source", cca_json_string(o->gpus[g]->source));
		json_array_append_new(gpus, gpu);
	}
	json_object_set_new(doc, "gpus", gpus);
	g_autoptr(GPtrArray) notes = cca_sweep_notes(sweep);
	json_object_set_new(doc, "notes", cca_json_strings(notes));
	json_t *list = json_array();
	for (guint r = 0; r < n; r++) {
		const CcaFitRow *f = &rows[r];
		const CcaFitRun *run = &f->runs[0];
		json_t *row = json_object();
		json_object_set_new(row, "rank", json_integer(r + 1));
		json_object_set_new(row, "settings", cca_json_string(f->row->conf));
		json_object_set_new(row, "origin", cca_json_string(f->row->origin));
		json_object_set_new(row, "recorded", cca_json_bool(f->row->recorded));
		json_object_set_new(row, "found", cca_json_bool(run->found));
		json_object_set_new(row, "device_memory",
				    run->found ? cca_json_uint(run->capacity) : json_null());
		json_t *range = json_null();
		if (f->lo != f->hi) {
			range = json_array();
			json_array_append_new(range, cca_json_uint(f->lo));
			json_array_append_new(range, cca_json_uint(f->hi));
		}
		json_object_set_new(row, "device_memory_range", range);
		json_object_set_new(row, "address_sensitive", cca_json_bool(f->sensitive));
		json_object_set_new(row, "replays", json_integer(run->replays));
		json_object_set_new(row, "at",
				    run_json(&run->at, run->found ? run->capacity : CCA_FIT_LIMIT));
		json_object_set_new(row, "below",
				    run->below_run
					    ? run_json(&run->below, run->capacity - CCA_FIT_STEP)
					    : json_null());
		json_t *fits = json_object();
		for (guint g = 0; g < o->n_gpus; g++)
			json_object_set_new(fits, o->gpus[g]->name,
					    cca_json_bool(run->gpu_fits[g]));
		json_object_set_new(row, "gpus", fits);
		json_array_append_new(list, row);
	}
	json_object_set_new(doc, "rows", list);
	return doc;
}

void
cca_fit_print_json(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
		   const CcaFitReport *report, GString *out)
{
	cca_json_append(out, cca_fit_to_json(sweep, rows, n, report));
}

void
cca_fit_gpu_presets_print(uint64_t context, GString *out)
{
	char a[32], b[32], c[32];
	g_string_append_printf(out,
			       "GPU presets for fit --gpu: usable = totalGlobalMem - %s (CUDA "
			       "context and libraries: measured on the H200 with torch 2.11 / "
			       "CUDA 13, assumed for the others; --context changes it)\n",
			       cca_size_format(context, c));
	g_string_append_printf(out, "  %-10s %14s %12s %12s  %-9s %s\n", "name", "bytes", "total",
			       "usable", "kind", "source");
	for (guint i = 0; i < G_N_ELEMENTS(presets); i++)
		g_string_append_printf(out, "  %-10s %14" G_GUINT64_FORMAT " %12s %12s  %-9s %s\n",
				       presets[i].name, presets[i].total_memory,
				       cca_size_format(presets[i].total_memory, a),
				       cca_size_format(cca_fit_gpu_usable(&presets[i], context), b),
				       presets[i].kind, presets[i].source);
	g_string_append(out, "  \"reported\": GiB to two decimals from PyTorch's OOM message in "
			     "the public issue named (+-5 MiB);\n  \"estimate\": no figure was "
			     "found, the value is an assumption.\n");
}
