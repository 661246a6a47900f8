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
#include "parallel.h"
#include "rules.h"
#include "plan.h"
#include "size.h"
#include "text.h"

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
	{"A100-40GB", "", GIB(39.50), "reported",
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
	{"V100-16GB", "", GIB(15.78), "reported", "PyTorch OOM message in kchengiva/Shift-GCN#34"},
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

/* PRESET's name or one of its aliases, as gpu_key()s, meets KEY: equal
 * (EXACT) or beginning with it (!EXACT). */
static bool
gpu_matches(const CcaGpuPreset *preset, const char *key, bool exact)
{
	const char *names[2] = {preset->name, preset->aliases};
	for (guint n = 0; n < 2; n++)
		for (const char *a = names[n]; *a;) {
			const char *end = n ? strchr(a, ',') : NULL;
			size_t len = end ? (size_t)(end - a) : strlen(a);
			g_autofree char *k = gpu_key(a, len);
			if (exact ? strcmp(k, key) == 0 : g_str_has_prefix(k, key))
				return true;
			a += len + (end ? 1 : 0);
		}
	return false;
}

const CcaGpuPreset *
cca_fit_gpu_preset_find(const char *name, GError **error)
{
	g_autofree char *want = gpu_key(name, strlen(name));
	for (guint i = 0; i < G_N_ELEMENTS(presets); i++)
		if (gpu_matches(&presets[i], want, true))
			return &presets[i];
	g_autoptr(GString) list = g_string_new(NULL);
	guint n = 0;
	for (guint i = 0; *want && i < G_N_ELEMENTS(presets); i++)
		if (gpu_matches(&presets[i], want, false))
			g_string_append_printf(list, "%s%s", n++ ? ", " : "", presets[i].name);
	g_autofree char *shown = cca_text_display(name, -1, 64);
	if (n > 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "ambiguous GPU '%s': it could be %s (give one of them)", shown,
			    list->str);
		return NULL;
	}
	if (n == 1) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "unknown GPU '%s': did you mean %s?", shown, list->str);
		return NULL;
	}
	for (guint i = 0; i < G_N_ELEMENTS(presets); i++)
		g_string_append_printf(list, "%s%s", i ? ", " : "", presets[i].name);
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "unknown GPU '%s': the presets are %s (fit --list-gpus)", shown, list->str);
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
	int *twin_of;		   /* per row: the row it may share runs with (-1: none) */
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

/* The options of a replay of JOB on a device of CAPACITY bytes into O;
 * FALSE with ERROR (CCA_SWEEP_ERROR_CANCELLED) once JOB is cancelled. */
static gboolean
capacity_options(const FitJob *job, uint64_t capacity, bool count_ties, CcaSweepOptions *o,
		 GError **error)
{
	*o = (CcaSweepOptions){
		.device_memory = capacity,
		.capacity_set = true,
		.address_sensitivity = count_ties,
		.threads = 1,
		.recorded_memory_fraction = job->options->recorded_memory_fraction,
		.cancel = job->options->cancel,
	};
	if (job->options->cancel && *job->options->cancel) {
		g_set_error(error, CCA_SWEEP_ERROR, CCA_SWEEP_ERROR_CANCELLED, "interrupted");
		return FALSE;
	}
	return TRUE;
}

/* Replays ROW under MODEL on a device of CAPACITY bytes into RUN, counting
 * its decisions by address alone (RUN->address_ties) when COUNT_TIES; a
 * replay of the search OUT (its replays and reach). */
static gboolean
replay_at(const FitJob *job, const CcaSweepRow *row, CcaAddressModel model, uint64_t capacity,
	  bool count_ties, CcaSweepRun *run, CcaFitRun *out, GError **error)
{
	CcaSweepOptions o;
	if (!capacity_options(job, capacity, count_ties, &o, error))
		return FALSE;
	out->replays++;
	if (!cca_sweep_replay(job->sweep, row, &o, model, run, error))
		return FALSE;
	out->reach = MAX(out->reach, run->reach);
	return TRUE;
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
	if (!replay_at(job, row, model, hint->capacity, false, &at, out, error))
		return FALSE;
	if (!fits(&at))
		return TRUE;
	if (!replay_at(job, row, model, hint->capacity - CCA_FIT_STEP, false, &below, out, error))
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

/* Whether HINT, the first address model's answer (FIRST), is MODEL's
 * without a replay: its replays at the answer and a step below decided
 * nothing by address alone, so that every placement gives the same two
 * runs, or MODEL decides every tie of both as they did (their same_under,
 * shadow.h) (doc/driver-va.md, "The cost"; sweep.c shares a row's run the
 * same way).  The trace's own addresses are not a what-if model. */
static bool
hint_shared(const CcaFitRun *hint, CcaAddressModel first, CcaAddressModel model)
{
	bool tie_free = hint->at.address_ties == 0 && hint->below.address_ties == 0;
	bool same = hint->at.same_under & hint->below.same_under & 1u << model;
	return first != CCA_ADDRESS_RECORDED && hint->found && hint->below_run &&
	       !hint->below_fits && (tie_free || same);
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
	/* the first model's search counts its ties: the others may share it */
	bool ties = hint == NULL;
	CcaSweepRun probe, run;
	if (!replay_at(job, row, model, CCA_FIT_LIMIT, ties, &probe, out, error))
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
	else if (!replay_at(job, row, model, hi, ties, &at, out, error))
		return FALSE;
	while (!fits(&at)) { /* not monotone: look upwards */
		hi = hi * 2 < CCA_FIT_LIMIT ? hi * 2 : CCA_FIT_LIMIT;
		if (hi == CCA_FIT_LIMIT) {
			at = probe;
			break;
		}
		if (!replay_at(job, row, model, hi, ties, &at, out, error))
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
		if (!replay_at(job, row, model, mid, ties, &run, out, error))
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
	if (!lo_replayed && !replay_at(job, row, model, lo, ties, &out->below, out, error))
		return FALSE;
	out->below_run = true;
	out->below_fits = fits(&out->below);
	return TRUE;
}

/* Whether ROW under MODEL runs at CAPACITY under every completion timing
 * (cca_timing_all_fit()); FAILED gets the one that ran out. */
static gboolean
all_timings_fit_at(const FitJob *job, CcaFitRow *frow, CcaAddressModel model, uint64_t capacity,
		   gboolean *fits, char failed[32], GError **error)
{
	CcaSweepOptions o;
	if (!capacity_options(job, capacity, false, &o, error))
		return FALSE;
	CcaReplayOptions ro;
	cca_sweep_replay_options(job->sweep, frow->row, &o, model, &ro);
	frow->timing_probes++;
	GError *e = NULL;
	if (cca_timing_all_fit(job->sweep->snap, &ro, fits, failed, &e))
		return TRUE;
	if (g_error_matches(e, CCA_TIMING_ERROR, CCA_TIMING_ERROR_CANCELLED)) {
		g_error_free(e);
		g_set_error(error, CCA_SWEEP_ERROR, CCA_SWEEP_ERROR_CANCELLED, "interrupted");
	} else {
		g_propagate_error(error, e);
	}
	return FALSE;
}

/* The smallest capacity, from the first run's answer up, at which ROW runs
 * under every completion timing (doc/whatif.md, "Stream timing"): the
 * answer itself when it holds, else doubling until one holds and a
 * bisection below it, in 2 MiB steps. */
static gboolean
fit_timing(const FitJob *job, CcaFitRow *frow, CcaAddressModel model, GError **error)
{
	const CcaFitRun *first = &frow->runs[0];
	frow->timed = true;
	gboolean fits;
	char failed[32];
	uint64_t hi = first->capacity;
	if (!all_timings_fit_at(job, frow, model, hi, &fits, failed, error))
		return FALSE;
	if (fits) {
		frow->timing_found = true;
		frow->timing_capacity = hi;
		/* a step below, the recorded timing itself runs out */
		g_strlcpy(frow->timing_failed, first->below_run ? "recorded" : "",
			  sizeof frow->timing_failed);
		return TRUE;
	}
	uint64_t lo = hi;
	g_strlcpy(frow->timing_failed, failed, sizeof frow->timing_failed);
	for (;;) {
		hi = hi < CCA_FIT_LIMIT / 2 ? MAX(hi * 2, CCA_FIT_STEP) : CCA_FIT_LIMIT;
		if (!all_timings_fit_at(job, frow, model, hi, &fits, failed, error))
			return FALSE;
		if (fits)
			break;
		lo = hi;
		g_strlcpy(frow->timing_failed, failed, sizeof frow->timing_failed);
		if (hi == CCA_FIT_LIMIT)
			return TRUE; /* no capacity fits every timing */
	}
	while (hi - lo > CCA_FIT_STEP) {
		uint64_t mid = lo + (hi - lo) / CCA_FIT_STEP / 2 * CCA_FIT_STEP;
		if (!all_timings_fit_at(job, frow, model, mid, &fits, failed, error))
			return FALSE;
		if (fits) {
			hi = mid;
		} else {
			lo = mid;
			g_strlcpy(frow->timing_failed, failed, sizeof frow->timing_failed);
		}
	}
	frow->timing_found = true;
	frow->timing_capacity = hi;
	return TRUE;
}

bool
cca_fit_row_capacity(const CcaFitRow *row, uint64_t *capacity)
{
	if (row->timed) {
		*capacity = row->timing_capacity;
		return row->timing_found;
	}
	*capacity = row->runs[0].capacity;
	return row->runs[0].found;
}

/* A phase's progress as the whole search's. */
static void
fit_progress(void *data, guint done, guint total)
{
	const FitJob *job = data;
	(void)total;
	job->progress(job->progress_data, job->offset + done, job->n_tasks);
}

/* Whether the run in slot SLOT of TWIN (cca_sweep_twin(), searched already) is
 * FROW's under MODEL too: no replay of it reserved max_split_size of
 * either row, so that FROW's replays at the same capacities are the same
 * runs (cca_settings_same_model_below()); the first slot of a timed row
 * goes on to its own timings, and is not shared. */
static bool
twin_serves(const CcaFitRow *twin, const CcaFitRow *frow, guint slot, CcaAddressModel model)
{
	const CcaFitRun *t = &twin->runs[slot];
	return slot < twin->n_runs && !(slot == 0 && twin->timed) && t->at.model == model &&
	       cca_settings_same_model_below(&twin->row->settings, &frow->row->settings, t->reach);
}

static void
fit_task(void *data, guint i)
{
	FitJob *job = data;
	i += job->offset;
	CcaFitRow *frow = &job->rows[job->row_of[i]];
	CcaAddressModel model = job->model_of[i];
	CcaFitRun *out = &frow->runs[job->run_of[i]];
	int twin = job->twin_of[job->row_of[i]];
	if (twin >= 0 && twin_serves(&job->rows[twin], frow, job->run_of[i], model)) {
		const CcaFitRun *t = &job->rows[twin].runs[job->run_of[i]];
		*out = *t;
		cca_sweep_run_share(&out->at, &t->at, frow->row);
		cca_sweep_run_share(&out->below, &t->below, frow->row);
		out->replays = 0;
		return;
	}
	/* the other address models start from the first one's answer */
	const CcaFitRun *hint = job->run_of[i] > 0 ? &frow->runs[0] : NULL;
	if (hint && hint_shared(hint, frow->runs[0].at.model, model)) {
		*out = *hint;
		out->at.model = out->below.model = model;
		out->at.replayed = out->below.replayed = false;
		out->replays = 0;
	} else if (!fit_search(job, frow->row, model, hint, out, &job->errors[i])) {
		return;
	}
	const CcaFitOptions *o = job->options;
	bool timed = job->run_of[i] == 0 && !o->no_timing_bounds && out->found && out->at.whatif &&
		     out->at.deferred_frees > 0;
	if (timed && !fit_timing(job, frow, model, &job->errors[i]))
		return;
	for (guint g = 0; g < o->n_gpus && g < CCA_FIT_MAX_GPUS; g++) {
		uint64_t usable = cca_fit_gpu_usable(o->gpus[g], o->context);
		CcaSweepRun run;
		if (usable == 0) {
			out->gpu_fits[g] = 0;
			continue;
		}
		if (!replay_at(job, frow->row, model, usable, false, &run, out, &job->errors[i]))
			return;
		out->gpu_fits[g] = fits(&run) ? 1 : 0;
		gboolean all = FALSE;
		char failed[32];
		if (timed && out->gpu_fits[g] &&
		    !all_timings_fit_at(job, frow, model, usable, &all, failed, &job->errors[i]))
			return;
		/* only the timed run answers: the row's other address models
		 * (tasks of their own, in any order) must not clear it */
		if (timed)
			frow->timing_gpu_fits[g] = all ? 1 : 0;
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
		/* without bounds: the primary model alone (and the trace's own
		 * addresses for the recorded row) */
		if (options->no_timing_bounds)
			rows[r].n_runs = MIN(rows[r].n_runs, rows[r].row->recorded ? 2u : 1u);
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
	job.twin_of = g_new(int, n_rows);
	for (guint r = 0; r < n_rows; r++)
		job.twin_of[r] = cca_sweep_twin(sweep, r);
	/* in four phases: each row's first address model, then the others,
	 * which start from its answer (fit_try_hint()); in each, the rows
	 * that may share a twin's run (cca_sweep_twin()) after the others */
	guint k = 0, phase_end[4];
	for (guint phase = 0; phase < 4; phase++) {
		for (guint m = 0; m < CCA_SWEEP_MAX_MODELS; m++)
			for (guint r = 0; r < n_rows; r++) {
				if (m >= rows[r].n_runs || (m == 0) != (phase < 2) ||
				    (job.twin_of[r] >= 0) != (phase % 2 == 1))
					continue;
				job.row_of[k] = r;
				job.run_of[k] = m;
				job.model_of[k++] = models[r * CCA_SWEEP_MAX_MODELS + m];
			}
		phase_end[phase] = k;
	}
	g_assert(k == n_tasks);
	g_free(models);
	job.progress = options->progress;
	job.progress_data = options->progress_data;
	job.n_tasks = n_tasks;
	for (guint phase = 0; phase < 4; phase++) {
		job.offset = phase ? phase_end[phase - 1] : 0;
		cca_parallel_run(phase_end[phase] - job.offset, options->threads, fit_task, &job,
				 options->progress ? fit_progress : NULL, &job);
	}
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
	g_free(job.twin_of);
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
	uint64_t ca, cb;
	bool fa = cca_fit_row_capacity(a, &ca), fb = cca_fit_row_capacity(b, &cb);
	if (fa != fb)
		return fa ? -1 : 1;
	if (ca != cb)
		return ca < cb ? -1 : 1;
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

/* Where RUN ran out of memory, for the "2 MiB less" column. */
static char *
oom_words(const CcaSweepRun *run)
{
	if (run->oom_before_window)
		return g_strdup("OOM before the window");
	return g_strdup_printf("OOM at event %" G_GUINT64_FORMAT, run->oom_event);
}

#define FIT_COLUMN_SETTINGS 1
#define FIT_COLUMN_ADDRESS 5
#define FIT_COLUMN_GPU 6 /* the first GPU's */

/* The answer of ROW on GPU number G over its address models: "yes", "no"
 * or "depends". */
static const char *
gpu_answer(const CcaFitRow *f, guint g)
{
	bool any_yes = false, any_no = false;
	for (guint m = 0; m < f->n_runs; m++) {
		any_yes |= f->runs[m].gpu_fits[g] == 1;
		any_no |= f->runs[m].gpu_fits[g] != 1;
	}
	/* fits with the recorded completions, runs out under another timing */
	if (f->timed && any_yes && f->timing_gpu_fits[g] != 1)
		return "may not";
	return any_yes && any_no ? "depends" : any_yes ? "yes" : "no";
}

/* Column C of row F ranked RANK; with RANGES the fit is "lo..hi" where the
 * address models disagree. */
static char *
fit_cell(const CcaFitRow *f, guint c, guint rank, bool ranges)
{
	const CcaFitRun *r = &f->runs[0];
	switch (c) {
	case 0:
		return g_strdup_printf("%u", rank);
	case FIT_COLUMN_SETTINGS:
		return g_strdup_printf("%s%s", conf_label(f->row->conf),
				       f->row->recorded ? " (recorded)" : "");
	case 2:
		if (!r->found || (f->timed && !f->timing_found))
			return g_strdup("> 1 TiB");
		if (f->timed && f->timing_capacity != r->capacity) {
			/* the recorded completions' answer..every timing's */
			g_autofree char *a = mib(r->capacity), *b = mib(f->timing_capacity);
			return ranges ? g_strdup_printf("%s..%s", a, b) : g_strdup(b);
		}
		if (ranges && f->lo != f->hi) {
			g_autofree char *a = mib(f->lo), *b = mib(f->hi);
			return g_strdup_printf("%s..%s", a, b);
		}
		return mib(r->capacity);
	case 3:
		return g_strdup_printf("%.1f",
				       r->at.value[CCA_SWEEP_FIG_PEAK_RESERVED] / (double)CCA_MIB);
	case 4:
		if (!r->found)
			return oom_words(&r->at);
		if (!r->below_run)
			return g_strdup("-");
		if (r->below_fits)
			return g_strdup("fits (!)");
		return oom_words(&r->below);
	case FIT_COLUMN_ADDRESS:
		return g_strdup(f->sensitive ? "varies" : "stable");
	default:
		break;
	}
	return g_strdup(gpu_answer(f, c - FIT_COLUMN_GPU));
}

/* The line under row F in the narrow table (NULL when its answers do not
 * depend on the address model). */
static char *
fit_sensitivity_line(const CcaFitRow *f, const CcaFitOptions *o)
{
	if (!f->sensitive)
		return NULL;
	GString *l = g_string_new("address choice varies:");
	const char *sep = " ";
	if (f->lo != f->hi) {
		g_autofree char *a = mib(f->lo), *b = mib(f->hi);
		g_string_append_printf(l, " fits in %s..%s MiB", a, b);
		sep = ", ";
	}
	for (guint m = 1; m < f->n_runs; m++)
		if (f->runs[m].found != f->runs[0].found) {
			g_string_append_printf(l, "%sno fit under some models", sep);
			sep = ", ";
			break;
		}
	for (guint g = 0; g < o->n_gpus && g < CCA_FIT_MAX_GPUS; g++)
		if (strcmp(gpu_answer(f, g), "depends") == 0) {
			g_string_append_printf(l, "%sfits on %s under some models", sep,
					       o->gpus[g]->name);
			sep = ", ";
		}
	return g_string_free(l, FALSE);
}

/* The stream-timing line under row F (NULL when it was not timed). */
static char *
fit_timing_line(const CcaFitRow *f)
{
	if (!f->timed)
		return NULL;
	g_autofree char *a = mib(f->runs[0].capacity);
	if (!f->timing_found)
		return g_strdup_printf(
			"stream timing: fits in %s MiB with the recorded completions "
			"of its deferred frees, in no device up to 1 TiB under "
			"every timing (%s runs out)",
			a, f->timing_failed);
	if (f->timing_capacity == f->runs[0].capacity)
		return g_strdup("stream timing: the answer holds under every completion timing "
				"of its deferred frees");
	g_autofree char *b = mib(f->timing_capacity), *c = mib(f->timing_capacity - CCA_FIT_STEP);
	return g_strdup_printf("stream timing: fits in %s MiB with the recorded completions of "
			       "its deferred frees, but needs %s MiB under every timing (at %s "
			       "MiB the timing %s runs out)",
			       a, b, c, f->timing_failed);
}

/* Appends one line of the CELLS of the N_COLS columns, those SHOWN, each
 * padded to WIDTH. */
static void
fit_table_line(GString *out, char *const *cells, const bool *shown, const guint *width,
	       guint n_cols)
{
	g_autoptr(GString) l = g_string_new(NULL);
	bool first = true;
	for (guint c = 0; c < n_cols; c++) {
		if (!shown[c])
			continue;
		if (!first)
			g_string_append(l, "  ");
		first = false;
		bool left = c == FIT_COLUMN_SETTINGS || c == 4 || c == FIT_COLUMN_ADDRESS;
		cca_text_pad(l, cells[c], width[c], !left);
	}
	g_strchomp(l->str);
	g_string_append_printf(out, "%s\n", l->str);
}

/* The GPU answers as a matrix, a line per GPU and a column per row rank
 * ("y", "n", "?"), in blocks of ranks that fit CCA_TEXT_COLUMNS. */
static void
fit_gpu_matrix(GString *out, const CcaFitRow *rows, guint n, const CcaFitOptions *o)
{
	guint name_w = 3;
	for (guint g = 0; g < o->n_gpus; g++)
		name_w = MAX(name_w, cca_text_width(o->gpus[g]->name));
	char usable[32];
	g_snprintf(usable, sizeof usable, "%u", n);
	guint rank_w = (guint)strlen(usable);
	guint lead = 2 + name_w + 2 + 10 + 1; /* "  NAME  USABLE " */
	guint per_line = MAX(1u, (CCA_TEXT_COLUMNS - lead) / (rank_w + 1));
	cca_text_wrap(out,
		      "fits on each GPU (a replay at its usable memory; y: yes, n: no, ?: depends "
		      "on the address model), by row #:",
		      CCA_TEXT_COLUMNS, 2);
	for (guint first = 0; first < n; first += per_line) {
		guint last = MIN(n, first + per_line);
		g_autoptr(GString) l = g_string_new("  ");
		cca_text_pad(l, "GPU", name_w, FALSE);
		g_string_append(l, "  ");
		cca_text_pad(l, "usable", 10, TRUE);
		for (guint r = first; r < last; r++)
			g_string_append_printf(l, " %*u", (int)rank_w, r + 1);
		g_string_append_printf(out, "%s\n", l->str);
		for (guint g = 0; g < o->n_gpus; g++) {
			g_string_assign(l, "  ");
			cca_text_pad(l, o->gpus[g]->name, name_w, FALSE);
			g_string_append(l, "  ");
			cca_text_pad(
				l,
				cca_size_format(cca_fit_gpu_usable(o->gpus[g], o->context), usable),
				10, TRUE);
			for (guint r = first; r < last; r++) {
				const char *a = gpu_answer(&rows[r], g);
				g_string_append_printf(l, " %*s", (int)rank_w,
						       a[0] == 'd'   ? "?"
						       : a[0] == 'y' ? "y"
								     : "n");
			}
			g_string_append_printf(out, "%s\n", l->str);
		}
	}
}

void
cca_fit_print_text(const CcaSweep *sweep, const CcaFitRow *rows, guint n,
		   const CcaFitReport *report, GString *out)
{
	const CcaFitOptions *o = report->options;
	bool wide = report->wide;
	guint n_cols = FIT_COLUMN_GPU + o->n_gpus;
	const char *head[FIT_COLUMN_GPU] = {"#",	   "settings",
					    "fits in MiB", "peak reserved MiB",
					    "2 MiB less",  "address choice"};
	guint *width = g_new0(guint, n_cols);
	bool *shown = g_new0(bool, n_cols);
	char **heads = g_new0(char *, n_cols + 1);
	for (guint c = 0; c < n_cols; c++) {
		heads[c] = c < FIT_COLUMN_GPU ? g_strdup(head[c])
					      : g_strdup(o->gpus[c - FIT_COLUMN_GPU]->name);
		width[c] = cca_text_width(heads[c]);
		shown[c] = wide || c != FIT_COLUMN_ADDRESS;
	}
	char ***cells = g_new0(char **, n);
	for (guint r = 0; r < n; r++) {
		cells[r] = g_new0(char *, n_cols + 1);
		for (guint c = 0; c < n_cols; c++) {
			cells[r][c] = fit_cell(&rows[r], c, r + 1, wide);
			width[c] = MAX(width[c], cca_text_width(cells[r][c]));
		}
	}
	bool matrix = false;
	gboolean abbreviated = FALSE;
	if (!wide) {
		/* the settings take what the other columns leave; GPU columns
		 * that would leave them less than 24 go to a matrix below */
		guint others = 0, gpus = 0;
		for (guint c = 0; c < n_cols; c++)
			if (shown[c] && c != FIT_COLUMN_SETTINGS)
				*(c < FIT_COLUMN_GPU ? &others : &gpus) += width[c] + 2;
		guint want = MIN(width[FIT_COLUMN_SETTINGS], 24);
		if (o->n_gpus && others + gpus + want > CCA_TEXT_COLUMNS) {
			matrix = true;
			for (guint c = FIT_COLUMN_GPU; c < n_cols; c++)
				shown[c] = false;
		} else {
			others += gpus;
		}
		guint room = others + 12 < CCA_TEXT_COLUMNS ? CCA_TEXT_COLUMNS - others : 12;
		if (width[FIT_COLUMN_SETTINGS] > room) {
			width[FIT_COLUMN_SETTINGS] = room;
			for (guint r = 0; r <= n; r++) {
				char **p = r < n ? &cells[r][FIT_COLUMN_SETTINGS]
						 : &heads[FIT_COLUMN_SETTINGS];
				char *cut = r < n ? cca_settings_cell(*p, room, &abbreviated)
						  : cca_text_ellipsize(*p, room);
				g_free(*p);
				*p = cut;
			}
		}
	}
	g_autoptr(GString) p = g_string_new(NULL);
	g_autofree char *trace = cca_text_path(report->trace);
	g_string_append_printf(p,
			       "%s, device %d: the smallest device memory (to 2 MiB) at which the "
			       "trace runs without OOM; each answer is a replay that fits, and 2 "
			       "MiB less is a replay that runs out of memory%s",
			       trace, sweep->device,
			       cca_rules_for(sweep->pytorch_version)->unvalidated
				       ? " (PyTorch's rules unvalidated: modelled from source, "
					 "doc/versions.md)"
				       : "");
	cca_text_wrap(out, p->str, wide ? G_MAXUINT : CCA_TEXT_COLUMNS, 2);
	fit_table_line(out, heads, shown, width, n_cols);
	for (guint r = 0; r < n; r++) {
		fit_table_line(out, cells[r], shown, width, n_cols);
		char *lines[2] = {wide ? NULL : fit_sensitivity_line(&rows[r], o),
				  fit_timing_line(&rows[r])};
		for (guint k = 0; k < 2; k++) {
			if (!lines[k])
				continue;
			g_string_assign(p, "");
			for (guint i = 0; i < width[0] + 2; i++)
				g_string_append_c(p, ' ');
			g_string_append(p, lines[k]);
			cca_text_wrap(out, p->str, CCA_TEXT_COLUMNS, width[0] + 4);
			g_free(lines[k]);
		}
		g_strfreev(cells[r]);
	}
	g_free(cells);
	g_strfreev(heads);
	g_free(width);
	g_free(shown);
	if (o->no_timing_bounds)
		g_string_assign(
			p, "address choice (--no-bounds): each what-if row is searched with "
			   "the driver's placement alone, the recorded settings first with the "
			   "trace's own addresses; another placement may need more.");
	else {
		g_autofree char *names = cca_simdevice_bound_models_text();
		g_string_printf(p,
				"address choice: each row is searched with each address model (%s; "
				"the recorded settings first with the trace's own addresses, as "
				"replay --device-memory does); the first is shown, lo..hi is the "
				"range where they differ%s.",
				names,
				wide ? ""
				     : ", on a line under the row; rows without one are stable");
	}
	cca_text_wrap(out, p->str, wide ? G_MAXUINT : CCA_TEXT_COLUMNS, 2);
	if (o->n_gpus) {
		char a[32], b[32], c[32];
		g_string_printf(p,
				"GPU %s: a replay with the GPU's total memory less %s outside "
				"the caching allocator (the CUDA context and libraries; %s)%s",
				matrix ? "answers" : "columns", cca_size_format(o->context, c),
				o->context_source ? o->context_source : CCA_GPU_CONTEXT_SOURCE,
				wide ? ":" : "; sources of the figures: fit --list-gpus.");
		cca_text_wrap(out, p->str, wide ? G_MAXUINT : CCA_TEXT_COLUMNS, 2);
		for (guint g = 0; wide && g < o->n_gpus; g++)
			g_string_append_printf(
				out, "  %-10s %s total, %s usable (%s: %s)\n", o->gpus[g]->name,
				cca_size_format(o->gpus[g]->total_memory, a),
				cca_size_format(cca_fit_gpu_usable(o->gpus[g], o->context), b),
				o->gpus[g]->kind, o->gpus[g]->source);
	}
	if (matrix)
		fit_gpu_matrix(out, rows, n, o);
	if (!wide)
		cca_text_wrap(out,
			      "--wide shows every column, whole settings and the GPUs' sources; "
			      "--json too.",
			      CCA_TEXT_COLUMNS, 2);
	if (abbreviated) {
		g_string_truncate(p, 0);
		cca_settings_append_brief_note(p);
		cca_text_wrap(out, p->str, CCA_TEXT_COLUMNS, 2);
	}
	g_autoptr(GPtrArray) notes = cca_sweep_notes(sweep);
	for (guint i = 0; i < notes->len; i++) {
		g_string_printf(p, "note: %s", (const char *)g_ptr_array_index(notes, i));
		cca_text_wrap(out, p->str, wide ? G_MAXUINT : CCA_TEXT_COLUMNS, 2);
	}
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
	json_object_set_new(doc, "window", cca_sweep_window_json(sweep, NULL));
	json_object_set_new(doc, "unvalidated",
			    cca_json_bool(cca_rules_for(sweep->pytorch_version)->unvalidated));
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
		json_t *timing = json_null();
		if (f->timed) {
			/* the answer under every completion timing of the
			 * deferred frees; device_memory is the recorded one's */
			timing = json_object();
			json_object_set_new(timing, "device_memory",
					    f->timing_found ? cca_json_uint(f->timing_capacity)
							    : json_null());
			json_object_set_new(timing, "runs_out_below",
					    *f->timing_failed ? cca_json_string(f->timing_failed)
							      : json_null());
			json_object_set_new(timing, "probes", json_integer(f->timing_probes));
			json_t *g2 = json_object();
			for (guint g = 0; g < o->n_gpus; g++)
				json_object_set_new(
					g2, o->gpus[g]->name,
					cca_json_bool(run->gpu_fits[g] && f->timing_gpu_fits[g]));
			json_object_set_new(timing, "gpus", g2);
		}
		json_object_set_new(row, "timing", timing);
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
