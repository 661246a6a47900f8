/* test-gpu.c - the GPU validation mode.
 *
 * /gpu/engine/...: the engine's device hooks (make_device, the optional
 * set_refuse op) with simulated devices: a replay through make_device
 * must equal a plain replay.  These run everywhere.
 * /gpu/cuda/...: the CUDA device, the GPU replay against the simulation
 * and the calibration, on GPU 0.  They SKIP without CUDA or without a GPU;
 * /gpu/cuda/no-device checks the message in that case instead.
 */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "device.h"
#include "simdevice.h"
#include "replay.h"
#include "settings.h"
#include "snapshot.h"
#include "stats.h"
#include "testutil.h"

#ifdef HAVE_CUDA
#include "../../gpu/calibrate.h"
#include "../../gpu/cudadevice.h"
#include "../../gpu/gpureplay.h"
#endif

typedef struct {
	const CcaStats *other;
	guint differences;
} StatsCompare;

static void
compare_stat(const char *name, int64_t value, void *data)
{
	StatsCompare *c = data;
	int64_t other = 0;
	g_assert_true(cca_stats_lookup(c->other, name, &other));
	if (other != value) {
		g_test_message("%s: %" G_GINT64_FORMAT " != %" G_GINT64_FORMAT, name, value, other);
		c->differences++;
	}
}

static void
assert_same_stats(const CcaStats *a, const CcaStats *b)
{
	StatsCompare c = {.other = b};
	cca_stats_foreach(a, compare_stat, &c);
	g_assert_cmpuint(c.differences, ==, 0);
}

/* ---------------------------------------------------- engine hooks */

typedef struct {
	guint calls;
	bool without_refuse;
	CcaAddressModel last_model;
	CcaDeviceOps ops; /* without_refuse: the devices' ops less set_refuse */
} Factory;

/* Makes a simulated device; with F->without_refuse, one whose set_refuse
 * op is missing (as a device that cannot be told to refuse would have),
 * every other op its own. */
static CcaDevice *
factory(void *data, const CcaSimDeviceConfig *cfg)
{
	Factory *f = data;
	f->calls++;
	f->last_model = cfg->address_model;
	CcaDevice *sim = cca_simdevice_new(cfg);
	if (!f->without_refuse)
		return sim;
	f->ops = *sim->ops;
	f->ops.set_refuse = NULL;
	sim->ops = &f->ops;
	return sim;
}

/* Replays NAME under CONF (NULL: recorded) and FRACTION twice, plainly and
 * through the factory; the results must be equal. */
static void
check_factory(const char *name, const char *conf, double fraction, Factory *f, guint expected_calls)
{
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(name);
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaReplayOptions opt;
	cca_replay_options_init(&opt);
	opt.memory_fraction = fraction;
	opt.pytorch_version = cca_replay_guess_pytorch_version(snap);
	GError *error = NULL;
	if (conf) {
		settings.pytorch_version = opt.pytorch_version;
		g_assert_true(cca_settings_parse(&settings, conf, &error));
		opt.settings = &settings;
	}
	CcaReplayResult plain, hooked;
	g_assert_true(cca_replay_run(snap, &opt, &plain, &error));
	g_assert_no_error(error);
	opt.make_device = factory;
	opt.make_device_data = f;
	g_assert_true(cca_replay_run(snap, &opt, &hooked, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(f->calls, ==, expected_calls);
	assert_same_stats(&plain.stats, &hooked.stats);
	g_assert_cmpuint(plain.events, ==, hooked.events);
	cca_replay_result_clear(&plain);
	cca_replay_result_clear(&hooked);
	cca_settings_clear(&settings);
}

/* A run under the recorded settings is one pass: one device. */
static void
test_factory_recorded(void)
{
	Factory f = {0};
	check_factory("multistream.default", NULL, 0.0, &f, 1);
	g_assert_cmpint(f.last_model, ==, CCA_ADDRESS_RECORDED);
}

/* A what-if's first pass (finding empty_cache calls in the recording)
 * keeps the simulated device: the factory serves the replay itself. */
static void
test_factory_whatif(void)
{
	Factory f = {0};
	check_factory("seedfrag.default", "max_split_size_mb:128", 0.0, &f, 1);
	f = (Factory){0};
	check_factory("dyninfer.default", "expandable_segments:True", 0.0, &f, 1);
}

/* Without set_refuse the engine goes on; under a memory fraction the
 * device is never asked to refuse, so the results are the same. */
static void
test_factory_without_refuse(void)
{
	Factory f = {.without_refuse = true};
	g_autofree char *path = cca_test_trace_path("pytorch-2.11/dyninfer.cap.json");
	char *json = NULL;
	g_assert_true(g_file_get_contents(path, &json, NULL, NULL));
	gint64 cap = 0, total = 0;
	g_assert_true(cca_test_json_int(json, "cap_bytes", &cap));
	g_assert_true(cca_test_json_int(json, "total_memory", &total));
	g_free(json);
	check_factory("dyninfer.cap", NULL, (double)cap / (double)total, &f, 1);
}

/* The simulated device provides set_refuse. */
static void
test_simdevice_refuse_op(void)
{
	CcaSimDeviceConfig cfg = {0};
	CcaDevice *dev = cca_simdevice_new(&cfg);
	g_assert_nonnull(dev->ops->set_refuse);
	uint64_t ptr = 0;
	dev->ops->set_refuse(dev, true);
	g_assert_false(dev->ops->segment_alloc(dev, 2097152, 0, &ptr));
	g_assert_true(dev->ops->would_refuse(dev, 2097152));
	dev->ops->set_refuse(dev, false);
	g_assert_true(dev->ops->segment_alloc(dev, 2097152, 0, &ptr));
	cca_device_free(dev);
}

/* ------------------------------------------------------------ CUDA */

#ifdef HAVE_CUDA

/* Skips the test when there is no GPU; returns TRUE when there is one. */
static gboolean
have_gpu(void)
{
	CcaCudaInfo info;
	GError *error = NULL;
	if (!cca_cudadevice_info(0, &info, &error)) {
		g_test_skip(error->message);
		g_error_free(error);
		return FALSE;
	}
	g_free(info.name);
	return TRUE;
}

static void
test_no_device(void)
{
	CcaCudaInfo info;
	GError *error = NULL;
	if (cca_cudadevice_info(0, &info, &error)) {
		g_free(info.name);
		g_test_skip("a GPU is present");
		return;
	}
	g_assert_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_NO_DEVICE);
	g_assert_true(g_str_has_prefix(error->message, "no CUDA device: "));
	g_assert_null(strchr(error->message, '\n'));
	g_clear_error(&error);
	/* the device constructor says the same */
	CcaCudaRecord rec;
	cca_cudadevice_record_init(&rec);
	CcaCudaDeviceConfig cfg = {.record = &rec};
	g_assert_null(cca_cudadevice_new(&cfg, &error));
	g_assert_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_NO_DEVICE);
	g_error_free(error);
	cca_cudadevice_record_clear(&rec);
}

/* Segments and pages: addresses, the record, the used-memory deltas. */
static void
test_device_calls(void)
{
	if (!have_gpu())
		return;
	CcaCudaRecord rec;
	cca_cudadevice_record_init(&rec);
	uint64_t streams[] = {0};
	CcaCudaDeviceConfig cfg = {
		.streams = streams, .n_streams = 1, .touch = true, .record = &rec};
	GError *error = NULL;
	CcaDevice *dev = cca_cudadevice_new(&cfg, &error);
	g_assert_no_error(error);
	uint64_t mib = CCA_MIB, a = 0, b = 0;
	g_assert_true(dev->ops->segment_alloc(dev, 20 * mib, 0, &a));
	g_assert_true(dev->ops->segment_alloc(dev, 2 * mib, 0, &b));
	g_assert_cmpuint(a, !=, 0);
	g_assert_cmpuint(rec.segment_bases->len, ==, 2);
	/* a small-pool reservation as the policy sizes it */
	uint64_t total = dev->total_memory, space = total + total / 8;
	uint64_t rsize = 2 * mib * ((space + 2 * mib - 1) / (2 * mib));
	uint64_t va = dev->ops->reserve(dev, rsize, 0);
	g_assert_cmpuint(va, !=, 0);
	g_assert_true(dev->ops->map(dev, va, 4 * mib));
	CcaEvent ev = {.action = CCA_ACTION_ALLOC, .addr = va, .size = 4 * mib};
	cca_cudadevice_on_event(dev, &ev);
	dev->ops->unmap(dev, va, 4 * mib);
	dev->ops->unreserve(dev, va, rsize);
	dev->ops->segment_free(dev, b, 2 * mib);
	dev->ops->segment_free(dev, a, 20 * mib);
	g_assert_false(dev->ops->would_refuse(dev, 2 * mib));
	g_assert_cmpuint(dev->ops->free_memory(dev), >, 0);
	cca_device_free(dev);
	g_assert_null(rec.error);
	g_assert_cmpuint(rec.calls->len, ==, 8);
	const CcaDeviceCall *c = &g_array_index(rec.calls, CcaDeviceCall, 0);
	g_assert_cmpint(c->kind, ==, CCA_CALL_MALLOC);
	g_test_message("cudaMalloc 20 MiB: %" G_GINT64_FORMAT " ns, used delta %" G_GINT64_FORMAT,
		       c->ns, c->used_delta);
	g_assert_cmpint(c->used_delta, ==, (int64_t)(20 * mib));
	c = &g_array_index(rec.calls, CcaDeviceCall, 3);
	g_assert_cmpint(c->kind, ==, CCA_CALL_MAP);
	g_assert_cmpint(c->used_delta, ==, (int64_t)(4 * mib));
	g_assert_cmpuint(c->pages, ==, 2);
	g_assert_cmpint(rec.final_used, ==, 0);
	g_assert_cmpuint(rec.touches, ==, 1);
	cca_cudadevice_record_clear(&rec);
}

typedef struct {
	const char *label; /* test path */
	const char *trace;
	const char *conf;
	const char *cap_json; /* the cap of this W.C run, or NULL */
	bool touch;
} GpuCase;

static void
test_gpu_replay(gconstpointer data)
{
	const GpuCase *tc = data;
	if (!have_gpu())
		return;
	g_autoptr(CcaSnapshot) snap = cca_test_load_trace(tc->trace);
	CcaSettings settings;
	cca_settings_init(&settings);
	CcaGpuReplayOptions opt = {.touch = tc->touch};
	cca_replay_options_init(&opt.replay);
	opt.replay.pytorch_version = cca_replay_guess_pytorch_version(snap);
	GError *error = NULL;
	if (tc->conf) {
		settings.pytorch_version = opt.replay.pytorch_version;
		g_assert_true(cca_settings_parse(&settings, tc->conf, &error));
		opt.replay.settings = &settings;
	}
	if (tc->cap_json) {
		g_autofree char *path = cca_test_trace_path(tc->cap_json);
		g_autofree char *json = NULL;
		g_assert_true(g_file_get_contents(path, &json, NULL, NULL));
		gint64 cap = 0;
		g_assert_true(cca_test_json_int(json, "cap_bytes", &cap));
		CcaCudaInfo info;
		g_assert_true(cca_cudadevice_info(0, &info, NULL));
		opt.replay.memory_fraction = MIN(1.0, (double)cap / (double)info.total_memory);
		g_free(info.name);
	}
	CcaGpuReplayResult res;
	g_assert_true(cca_gpureplay_run(snap, &opt, &res, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < res.failures->len; i++)
		g_test_message("%s", (char *)g_ptr_array_index(res.failures, i));
	g_assert_true(res.passed);
	g_assert_cmpuint(res.segment_ops, >, 0);
	g_assert_cmpuint(res.entries, ==, res.entries_compared);
	g_test_message("reserved peak: predicted %" G_GINT64_FORMAT ", GPU %" G_GINT64_FORMAT
		       ", driver %" G_GINT64_FORMAT,
		       res.predicted.stats.reserved_bytes[CCA_STAT_ALL].peak,
		       res.gpu.stats.reserved_bytes[CCA_STAT_ALL].peak, res.record.peak_used);
	cca_gpureplay_result_clear(&res);
	cca_settings_clear(&settings);
}

static void
test_calibrate(void)
{
	if (!have_gpu())
		return;
	uint64_t sizes[] = {2, 20};
	CcaCalibration cal;
	GError *error = NULL;
	g_assert_true(cca_calibrate(0, sizes, 2, 3, &cal, &error));
	g_assert_no_error(error);
	g_assert_cmpuint(cal.rows->len, ==, 2);
	const CcaCalibrationRow *r = &g_array_index(cal.rows, CcaCalibrationRow, 1);
	g_assert_cmpuint(r->mb, ==, 20);
	g_assert_cmpfloat(r->malloc_us, >, 0.0);
	g_assert_cmpfloat(r->map_us, >, 0.0);
	GString *json = g_string_new(NULL);
	cca_calibrate_to_json(&cal, json);
	g_assert_nonnull(strstr(json->str, "\"malloc_us_median\": "));
	g_string_free(json, TRUE);
	cca_calibrate_clear(&cal);
}

static const GpuCase gpu_cases[] = {
	{"multistream-touch", "multistream.default", NULL, NULL, true},
	{"seedfrag", "seedfrag.default", NULL, NULL, false},
	{"seedfrag-exp-touch", "seedfrag.default", "expandable_segments:True", NULL, true},
	{"seedfrag-ms128", "seedfrag.default", "max_split_size_mb:128", NULL, false},
	{"dyninfer-cap", "dyninfer.default", NULL, "pytorch-2.11/dyninfer.cap.json", false},
};

#else

static void
test_without_cuda(void)
{
	g_test_skip("ccasim was built without CUDA");
}

#endif

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/gpu/engine/factory-recorded", test_factory_recorded);
	g_test_add_func("/gpu/engine/factory-whatif", test_factory_whatif);
	g_test_add_func("/gpu/engine/factory-without-refuse", test_factory_without_refuse);
	g_test_add_func("/gpu/engine/simdevice-refuse-op", test_simdevice_refuse_op);
#ifdef HAVE_CUDA
	g_test_add_func("/gpu/cuda/no-device", test_no_device);
	g_test_add_func("/gpu/cuda/device-calls", test_device_calls);
	for (size_t i = 0; i < G_N_ELEMENTS(gpu_cases); i++) {
		const GpuCase *tc = &gpu_cases[i];
		g_autofree char *path = g_strdup_printf("/gpu/cuda/replay/%s", tc->label);
		g_test_add_data_func(path, tc, test_gpu_replay);
	}
	g_test_add_func("/gpu/cuda/calibrate", test_calibrate);
#else
	g_test_add_func("/gpu/cuda/all", test_without_cuda);
#endif
	return g_test_run();
}
