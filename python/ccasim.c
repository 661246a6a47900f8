/* ccasim.c - the `ccasim` Python module: the simulator from Python.
 *
 * A thin layer over libccasim, with nothing of its own to decide: a trace
 * is loaded by the readers of sim/read (a path or bytes through
 * cca_snapshot_load_memory(), a dict that torch.cuda.memory._snapshot()
 * returns walked into a value graph that snapshot_pickle.c converts with
 * every check it makes on a pickle); replays, sweeps, fits and explain
 * run the functions the CLI runs, and every result is the JSON value the
 * CLI prints with --json, handed out as Python dicts, lists, ints, floats
 * and strs.  The timeline of a replay comes as int64 buffers (the buffer
 * protocol), which numpy takes without a copy.
 *
 * Invariants: Python objects are touched only with the GIL held; the
 * replays, the studies and the file reads run with it released, on a
 * snapshot nobody writes after its load, so several threads may replay
 * one trace at once.  No Python code runs during the walk of a dict
 * (exact type checks, PyDict_Next, no __eq__, __hash__ or __index__), and
 * every container walked is kept alive until the walk ends.
 *
 * long-file: one CPython extension module; its functions share the
 * argument converters, the GIL discipline and the dict walk above.  A
 * split into several C files of one module is the natural cut (the
 * loaders, the replays, the studies), left for later.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/stat.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "calibration.h"
#include "explain.h"
#include "fit.h"
#include "fleet.h"
#include "input.h"
#include "json.h"
#include "number.h"
#include "peak.h"
#include "pickle.h"
#include "plan.h"
#include "replay.h"
#include "simdevice.h"
#include "report.h"
#include "timing.h"
#include "settings.h"
#include "size.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "sweep.h"
#include "text.h"
#include "timeline.h"

/* ------------------------------------------------------------ errors */

static PyObject *ccasim_error, *trace_error, *config_error;

/* ------------------------------------------------------------ Ctrl-C */

/* A long call (sweep(), fit(), fleet.run()) runs with the GIL released, so Python's
 * SIGINT handler only marks the signal; Python would raise
 * KeyboardInterrupt once the whole call returned.  Around such a call,
 * interrupt_begin() puts a handler in front of Python's that also sets
 * interrupted, which the sweep checks before each replay
 * (CcaSweepOptions' cancel) and fleet.run() before each job;
 * interrupt_end() puts Python's back and
 * raises what it says (KeyboardInterrupt).  Calls may overlap in threads:
 * the first to begin installs, the last to end restores (both under the
 * GIL). */
static volatile int interrupted;
static struct sigaction interrupt_saved;
static guint interrupt_depth;
static gboolean interrupt_installed;

static void
interrupt_handler(int sig, siginfo_t *info, void *context)
{
	interrupted = 1;
	/* then Python's own handler, which marks the signal for Python */
	if (interrupt_saved.sa_flags & SA_SIGINFO)
		interrupt_saved.sa_sigaction(sig, info, context);
	else
		interrupt_saved.sa_handler(sig);
}

/* Call with the GIL held, before releasing it for a long call. */
static void
interrupt_begin(void)
{
	if (interrupt_depth++ > 0)
		return;
	interrupted = 0;
	struct sigaction old, act;
	/* SIGINT that kills the process or does nothing: nothing to chain */
	interrupt_installed = sigaction(SIGINT, NULL, &old) == 0 &&
			      ((old.sa_flags & SA_SIGINFO) ||
			       (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN));
	if (!interrupt_installed)
		return;
	interrupt_saved = old;
	memset(&act, 0, sizeof act);
	act.sa_sigaction = interrupt_handler;
	act.sa_flags = SA_SIGINFO | (old.sa_flags & SA_RESTART);
	sigemptyset(&act.sa_mask);
	sigaction(SIGINT, &act, NULL);
}

/* Call with the GIL held after the long call.  Returns -1 with
 * KeyboardInterrupt (or whatever Python's handler raised) set when the
 * call was interrupted: its result is incomplete and must be dropped. */
static int
interrupt_end(void)
{
	if (--interrupt_depth == 0 && interrupt_installed) {
		sigaction(SIGINT, &interrupt_saved, NULL);
		interrupt_installed = FALSE;
		/* Python's handler runs now, on the main thread */
		if (interrupted && PyErr_CheckSignals() < 0)
			return -1;
	}
	if (!interrupted)
		return 0;
	if (!PyErr_Occurred())
		PyErr_SetNone(PyExc_KeyboardInterrupt);
	return -1;
}

/* Raises TraceError for ERROR (a CCA_INPUT_ERROR or other load error of
 * NAME): the message, with `file` NAME and `offset` the byte offset the
 * message names (None when it names none, as for a dict). */
static void
raise_trace_error(const char *name, const GError *error)
{
	const char *msg = error ? error->message : "unknown error";
	PyObject *offset = Py_None;
	Py_INCREF(offset);
	const char *at = strstr(msg, ": offset ");
	if (at != NULL) {
		const char *p = at + 9;
		uint64_t v;
		if (cca_number_scan_u64(&p, &v) && *p == ':') {
			Py_DECREF(offset);
			offset = PyLong_FromUnsignedLongLong(v);
		}
	}
	PyObject *exc = PyObject_CallFunction(trace_error, "s", msg);
	if (exc != NULL && offset != NULL) {
		PyObject *file = PyUnicode_DecodeFSDefault(name);
		if (file == NULL || PyObject_SetAttrString(exc, "file", file) < 0 ||
		    PyObject_SetAttrString(exc, "offset", offset) < 0) {
			Py_XDECREF(file);
			Py_DECREF(exc);
			Py_DECREF(offset);
			return;
		}
		Py_DECREF(file);
		PyErr_SetObject(trace_error, exc);
	}
	Py_XDECREF(exc);
	Py_XDECREF(offset);
}

/* When ERROR, the failed load of file PATH, is the file system's (PATH
 * cannot be opened, or is a folder), raises the OSError of Python's own
 * open() for it, FileNotFoundError, PermissionError, IsADirectoryError and
 * the like, with errno and filename, and returns TRUE; FALSE (nothing
 * raised) for anything else, which is the content's: TraceError. */
static gboolean
raise_file_error(const char *path, const GError *error)
{
	if (!error || error->domain != CCA_INPUT_ERROR || error->code != CCA_INPUT_ERROR_IO)
		return FALSE;
	int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
	int e = errno;
	if (fd >= 0) {
		struct stat st;
		gboolean dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
		close(fd);
		if (!dir)
			return FALSE;
		e = EISDIR;
	}
	errno = e;
	PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
	return TRUE;
}

/* Raises ConfigError MESSAGE with `key` KEY (NULL: None). */
static void
raise_config_error(const char *key, const char *message)
{
	PyObject *exc = PyObject_CallFunction(config_error, "s", message);
	if (exc == NULL)
		return;
	PyObject *k = key ? PyUnicode_DecodeUTF8(key, (Py_ssize_t)strlen(key), "replace") : Py_None;
	if (k == NULL) {
		Py_DECREF(exc);
		return;
	}
	if (!key)
		Py_INCREF(k);
	if (PyObject_SetAttrString(exc, "key", k) == 0)
		PyErr_SetObject(config_error, exc);
	Py_DECREF(k);
	Py_DECREF(exc);
}

/* The key of the item of CONF (PYTORCH_CUDA_ALLOC_CONF syntax) that the
 * settings parser refused with MESSAGE: CONF is cut at its top-level
 * commas (those inside [...] belong to a value) and its prefixes are
 * parsed, so the parser alone decides: the last item of the first prefix
 * refused with MESSAGE, else of the first prefix refused at all.  Free
 * with g_free(); NULL when no prefix is refused (the keys conflict as a
 * whole). */
static char *
config_bad_key(const char *conf, uint32_t version, const char *message)
{
	size_t n = strlen(conf);
	int depth = 0;
	size_t start = 0;
	char *first = NULL;
	for (size_t i = 0; i <= n; i++) {
		char ch = i < n ? conf[i] : ',';
		if (ch == '[')
			depth++;
		else if (ch == ']' && depth > 0)
			depth--;
		if (ch != ',' || depth > 0)
			continue;
		g_autofree char *prefix = g_strndup(conf, i);
		CcaSettings s;
		cca_settings_init(&s);
		s.pytorch_version = version;
		GError *error = NULL;
		gboolean ok = cca_settings_parse_exact(&s, prefix, &error);
		cca_settings_clear(&s);
		if (!ok) {
			g_autofree char *item = g_strndup(conf + start, i - start);
			char *colon = strchr(item, ':');
			if (colon)
				*colon = '\0';
			gboolean same = strcmp(error->message, message) == 0;
			g_error_free(error);
			if (same) {
				g_free(first);
				return g_strdup(g_strstrip(item));
			}
			if (!first)
				first = g_strdup(g_strstrip(item));
		}
		start = i + 1;
	}
	return first;
}

/* ------------------------------------------------------------ JSON -> Python */

/* The Python value of V: dicts, lists, int, float, str, bool, None. */
static PyObject *
from_json(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		PyObject *d = PyDict_New();
		const char *key;
		json_t *item;
		if (d == NULL)
			return NULL;
		json_object_foreach(v, key, item)
		{
			PyObject *pv = from_json(item);
			if (pv == NULL || PyDict_SetItemString(d, key, pv) < 0) {
				Py_XDECREF(pv);
				Py_DECREF(d);
				return NULL;
			}
			Py_DECREF(pv);
		}
		return d;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		PyObject *l = PyList_New((Py_ssize_t)n);
		for (size_t i = 0; l != NULL && i < n; i++) {
			PyObject *pv = from_json(json_array_get(v, i));
			if (pv == NULL) {
				Py_DECREF(l);
				return NULL;
			}
			PyList_SET_ITEM(l, (Py_ssize_t)i, pv);
		}
		return l;
	}
	case JSON_STRING:
		return PyUnicode_DecodeUTF8(json_string_value(v), (Py_ssize_t)json_string_length(v),
					    "replace");
	case JSON_INTEGER:
		return PyLong_FromLongLong(json_integer_value(v));
	case JSON_REAL:
		return PyFloat_FromDouble(json_real_value(v));
	case JSON_TRUE:
		Py_RETURN_TRUE;
	case JSON_FALSE:
		Py_RETURN_FALSE;
	case JSON_NULL:
		break;
	}
	Py_RETURN_NONE;
}

/* from_json() of DOC, which it releases (NULL: MemoryError). */
static PyObject *
from_json_steal(json_t *doc)
{
	if (doc == NULL)
		return PyErr_NoMemory();
	PyObject *r = from_json(doc);
	json_decref(doc);
	return r;
}

/* ------------------------------------------------------------ Python -> value graph */

/* One step of the path to the value being walked, for messages. */
typedef struct {
	PyObject *key; /* a dict key (borrowed), or NULL */
	Py_ssize_t index;
} WalkStep;

#define WALK_MAX_DEPTH 512

typedef struct {
	CcaPickle *pickle;
	CcaPickleNodeMap seen; /* PyObject* of a container or str -> its node */
	PyObject *keep;	       /* list: every container and str walked, kept alive */
	WalkStep path[WALK_MAX_DEPTH];
	int depth;
	const char *name;
} Walk;

/* Raises TraceError "NAME: snapshot['k'][3]: WHAT" at the walk's place. */
static void
walk_fail(Walk *w, const char *what)
{
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "%s: snapshot", w->name);
	for (int i = 0; i < w->depth; i++) {
		PyObject *key = w->path[i].key;
		if (key == NULL) {
			g_string_append_printf(s, "[%zd]", w->path[i].index);
		} else if (PyUnicode_Check(key)) {
			Py_ssize_t n;
			const char *u = PyUnicode_AsUTF8AndSize(key, &n);
			if (u == NULL) {
				PyErr_Clear();
				g_string_append(s, "[<str>]");
			} else {
				g_autofree char *shown = g_strndup(u, (gsize)MIN(n, 64));
				g_string_append_printf(s, "['%s']", shown);
			}
		} else {
			g_string_append_printf(s, "[<%s key>]", Py_TYPE(key)->tp_name);
		}
	}
	g_string_append_printf(s, ": %s", what);
	GError *error = g_error_new_literal(CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, s->str);
	raise_trace_error(w->name, error);
	g_error_free(error);
	g_string_free(s, TRUE);
}

static CcaPickleValue *walk_value(Walk *w, PyObject *o);

/* Keeps O alive for the walk and remembers NODE as its node. */
static gboolean
walk_remember(Walk *w, PyObject *o, CcaPickleValue *node)
{
	if (PyList_Append(w->keep, o) < 0)
		return FALSE;
	cca_pickle_node_map_put(&w->seen, o, (uintptr_t)node);
	return TRUE;
}

static CcaPickleValue *
walk_container(Walk *w, PyObject *o)
{
	CcaPickleType type = PyDict_Check(o)   ? CCA_PICKLE_DICT
			     : PyList_Check(o) ? CCA_PICKLE_LIST
					       : CCA_PICKLE_TUPLE;
	Py_ssize_t n = type == CCA_PICKLE_DICT	 ? PyDict_GET_SIZE(o)
		       : type == CCA_PICKLE_LIST ? PyList_GET_SIZE(o)
						 : PyTuple_GET_SIZE(o);
	if ((uint64_t)n > UINT32_MAX) {
		walk_fail(w, "a container of more than 2^32 items");
		return NULL;
	}
	if (w->depth >= WALK_MAX_DEPTH) {
		walk_fail(w, "containers nested too deeply for a snapshot");
		return NULL;
	}
	CcaPickleValue *node = cca_pickle_build_node(w->pickle, type, (uint32_t)n);
	if (!walk_remember(w, o, node)) /* before the items: a cycle finds it */
		return NULL;
	WalkStep *step = &w->path[w->depth++];
	*step = (WalkStep){NULL, 0};
	gboolean ok = TRUE;
	if (type == CCA_PICKLE_DICT) {
		Py_ssize_t pos = 0, i = 0;
		PyObject *k, *v;
		while (ok && i < n && PyDict_Next(o, &pos, &k, &v)) {
			/* the key is walked with the path of its dict */
			step->key = NULL;
			step->index = i;
			w->depth--;
			CcaPickleValue *kn = walk_value(w, k);
			w->depth++;
			step->key = k;
			CcaPickleValue *vn = kn ? walk_value(w, v) : NULL;
			ok = kn && vn;
			if (ok) {
				node->items[2 * i] = kn;
				node->items[2 * i + 1] = vn;
			}
			i++;
		}
		if (ok && i != n) {
			walk_fail(w, "a dict that changed size while it was read");
			ok = FALSE;
		}
	} else {
		for (Py_ssize_t i = 0; ok && i < n; i++) {
			step->index = i;
			Py_ssize_t now = type == CCA_PICKLE_LIST ? PyList_GET_SIZE(o) : n;
			if (i >= now) {
				walk_fail(w, "a list that changed size while it was read");
				ok = FALSE;
				break;
			}
			PyObject *item = type == CCA_PICKLE_LIST ? PyList_GET_ITEM(o, i)
								 : PyTuple_GET_ITEM(o, i);
			Py_INCREF(item);
			CcaPickleValue *in = walk_value(w, item);
			Py_DECREF(item);
			if (in)
				node->items[i] = in;
			ok = in != NULL;
		}
	}
	w->depth--;
	return ok ? node : NULL;
}

/* The node of O: None, bool, int (64 bits), float, str, list, tuple and
 * dict (their subclasses too, read as the base type, no method called);
 * anything else raises TraceError. */
static CcaPickleValue *
walk_value(Walk *w, PyObject *o)
{
	uintptr_t known;
	if (cca_pickle_node_map_get(&w->seen, o, &known))
		return (CcaPickleValue *)known;
	if (o == Py_None)
		return cca_pickle_build_node(w->pickle, CCA_PICKLE_NONE, 0);
	if (PyBool_Check(o)) {
		CcaPickleValue *v = cca_pickle_build_node(w->pickle, CCA_PICKLE_BOOL, 0);
		v->b = o == Py_True;
		return v;
	}
	if (PyLong_Check(o)) {
		int overflow = 0;
		long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
		if (overflow == 0 && !(i == -1 && PyErr_Occurred())) {
			CcaPickleValue *v = cca_pickle_build_node(w->pickle, CCA_PICKLE_INT, 0);
			v->i = i;
			return v;
		}
		PyErr_Clear();
		if (overflow > 0) {
			unsigned long long u = PyLong_AsUnsignedLongLong(o);
			if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
				CcaPickleValue *v =
					cca_pickle_build_node(w->pickle, CCA_PICKLE_UINT, 0);
				v->u = u;
				return v;
			}
			PyErr_Clear();
		}
		walk_fail(w, "an int beyond 64 bits");
		return NULL;
	}
	if (PyFloat_Check(o)) {
		CcaPickleValue *v = cca_pickle_build_node(w->pickle, CCA_PICKLE_FLOAT, 0);
		v->f = PyFloat_AS_DOUBLE(o);
		return v;
	}
	if (PyUnicode_Check(o)) {
		Py_ssize_t n;
		const char *u = PyUnicode_AsUTF8AndSize(o, &n);
		if (u == NULL) {
			PyErr_Clear();
			walk_fail(w, "a str that is not valid UTF-8 (lone surrogates)");
			return NULL;
		}
		if ((uint64_t)n > UINT32_MAX) {
			walk_fail(w, "a str longer than 4 GiB");
			return NULL;
		}
		CcaPickleValue *v = cca_pickle_build_node(w->pickle, CCA_PICKLE_STR, (uint32_t)n);
		v->s = cca_pickle_build_bytes(w->pickle, u, (size_t)n);
		/* the same str object is the same node: a dict's keys then
		 * match by identity, as a pickle's memoized keys do */
		return walk_remember(w, o, v) ? v : NULL;
	}
	if (PyDict_Check(o) || PyList_Check(o) || PyTuple_Check(o))
		return walk_container(w, o);
	g_autofree char *what =
		g_strdup_printf("a %.64s, not a value a snapshot holds (None, bool, int, float, "
				"str, list, tuple, dict)",
				Py_TYPE(o)->tp_name);
	walk_fail(w, what);
	return NULL;
}

/* The snapshot of the dict (or bare list of segments) ROOT, named NAME. */
static CcaSnapshot *
snapshot_from_object(PyObject *root, const char *name)
{
	Walk *w = g_new0(Walk, 1);
	w->pickle = cca_pickle_build_new();
	w->name = name;
	w->keep = PyList_New(0);
	CcaSnapshot *snap = NULL;
	CcaPickleValue *node = w->keep ? walk_value(w, root) : NULL;
	Py_CLEAR(w->keep);
	cca_pickle_node_map_clear(&w->seen);
	if (node != NULL) {
		cca_pickle_build_set_root(w->pickle, node);
		GError *error = NULL;
		CcaPickle *pickle = w->pickle;
		Py_BEGIN_ALLOW_THREADS;
		snap = cca_snapshot_pickle_load_value(pickle, name, &error);
		Py_END_ALLOW_THREADS;
		if (snap == NULL) {
			raise_trace_error(name, error);
			g_error_free(error);
		}
	}
	cca_pickle_free(w->pickle);
	g_free(w);
	return snap;
}

/* ------------------------------------------------------------ buffers */

/* An int64 column of a timeline: an immutable buffer of N values that
 * numpy.asarray() and memoryview() take without copying. */
typedef struct {
	PyObject_HEAD int64_t *data;
	Py_ssize_t n;
	Py_ssize_t exports;
} Column;

static int
column_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
	Column *c = (Column *)self;
	if (PyBuffer_FillInfo(view, self, c->data, c->n * (Py_ssize_t)sizeof(int64_t), 1, flags) <
	    0)
		return -1;
	view->itemsize = sizeof(int64_t);
	if (flags & PyBUF_FORMAT)
		view->format = "q";
	if (flags & PyBUF_ND) {
		view->ndim = 1;
		view->shape = &c->n;
	}
	if ((flags & PyBUF_STRIDES) == PyBUF_STRIDES)
		view->strides = &view->itemsize;
	c->exports++;
	return 0;
}

static void
column_releasebuffer(PyObject *self, Py_buffer *view)
{
	((Column *)self)->exports--;
}

static void
column_dealloc(PyObject *self)
{
	g_free(((Column *)self)->data);
	Py_TYPE(self)->tp_free(self);
}

static Py_ssize_t
column_len(PyObject *self)
{
	return ((Column *)self)->n;
}

static PyObject *
column_item(PyObject *self, Py_ssize_t i)
{
	Column *c = (Column *)self;
	if (i < 0 || i >= c->n) {
		PyErr_SetString(PyExc_IndexError, "column index out of range");
		return NULL;
	}
	return PyLong_FromLongLong(c->data[i]);
}

/* iter(column): its values in order (pandas and list() take it as a
 * sequence, not as one object). */
static PyObject *
column_iter(PyObject *self)
{
	return PySeqIter_New(self);
}

/* column.__array__(dtype=None, copy=None): numpy's view of the buffer, so
 * that numpy.asarray(), pandas.Series() and DataFrame columns are int64
 * arrays without a copy (a copy when COPY is true or DTYPE differs). */
static PyObject *
column_array(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"dtype", "copy", NULL};
	PyObject *dtype = Py_None, *copy = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist, &dtype, &copy))
		return NULL;
	PyObject *numpy = PyImport_ImportModule("numpy");
	if (numpy == NULL)
		return NULL;
	PyObject *view = PyMemoryView_FromObject(self);
	PyObject *array =
		view ? PyObject_CallMethod(numpy, "frombuffer", "Os", view, "int64") : NULL;
	Py_XDECREF(view);
	if (array != NULL && (dtype != Py_None || (copy != Py_None && PyObject_IsTrue(copy)))) {
		PyObject *converted = dtype != Py_None
					      ? PyObject_CallMethod(array, "astype", "O", dtype)
					      : PyObject_CallMethod(array, "copy", NULL);
		Py_DECREF(array);
		array = converted;
	}
	Py_DECREF(numpy);
	return array;
}

static PyMethodDef column_methods[] = {
	{"__array__", (PyCFunction)(void (*)(void))column_array, METH_VARARGS | METH_KEYWORDS,
	 "__array__(dtype=None, copy=None) -> numpy.ndarray of int64 over the column's buffer"},
	{NULL},
};

static PyBufferProcs column_as_buffer = {column_getbuffer, column_releasebuffer};
static PySequenceMethods column_as_sequence = {.sq_length = column_len, .sq_item = column_item};

static PyTypeObject column_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ccasim.Column",
	.tp_basicsize = sizeof(Column),
	.tp_dealloc = column_dealloc,
	.tp_as_buffer = &column_as_buffer,
	.tp_as_sequence = &column_as_sequence,
	.tp_iter = column_iter,
	.tp_methods = column_methods,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An int64 column of a timeline (buffer protocol, format 'q'): "
		  "numpy.asarray(column) takes it without a copy.",
};

/* A new column that owns DATA (g_malloc'd, N values). */
static PyObject *
column_new(int64_t *data, Py_ssize_t n)
{
	Column *c = PyObject_New(Column, &column_type);
	if (c == NULL) {
		g_free(data);
		return NULL;
	}
	c->data = data;
	c->n = n;
	c->exports = 0;
	return (PyObject *)c;
}

/* ------------------------------------------------------------ options */

/* The limits and settings of a replaying call, checked as the CLI checks
 * them (ConfigError naming the argument or the key). */
typedef struct {
	const char *config; /* NULL: recorded */
	double memory_fraction;
	double recorded_memory_fraction; /* the recording's cap; 0: none given */
	uint64_t device_memory;
	bool capacity_set;
	int device;
	uint32_t pytorch_version;
} CallArgs;

/* Reads RECORDED (recorded_memory_fraction: None, or the cap the recording
 * ran under, in (0, 1]) into A; as the CLI's --recorded-memory-fraction it
 * is also the replay's cap unless memory_fraction gave another.  Call it
 * after parse_limits(). */
static gboolean
parse_recorded_fraction(PyObject *recorded, CallArgs *a)
{
	if (recorded == NULL || recorded == Py_None)
		return TRUE;
	double f = PyFloat_AsDouble(recorded);
	if ((f == -1.0 && PyErr_Occurred()) || !isfinite(f) || f <= 0 || f > 1) {
		PyErr_Clear();
		raise_config_error("recorded_memory_fraction",
				   "recorded_memory_fraction: must be a number in (0, 1]");
		return FALSE;
	}
	a->recorded_memory_fraction = f;
	if (a->memory_fraction == 0)
		a->memory_fraction = f;
	return TRUE;
}

/* Reads MEMORY_FRACTION, DEVICE_MEMORY (int bytes or a size string) and
 * PYTORCH_VERSION (None or "X.Y") into A. */
static gboolean
parse_limits(PyObject *memory_fraction, PyObject *device_memory, PyObject *pytorch_version,
	     CallArgs *a)
{
	if (memory_fraction != NULL && memory_fraction != Py_None) {
		double f = PyFloat_AsDouble(memory_fraction);
		if (f == -1.0 && PyErr_Occurred()) {
			PyErr_Clear();
			raise_config_error("memory_fraction", "memory_fraction: must be a number");
			return FALSE;
		}
		if (!isfinite(f) || f <= 0 || f > 1) {
			raise_config_error("memory_fraction",
					   "memory_fraction: must be a number in (0, 1]");
			return FALSE;
		}
		a->memory_fraction = f;
	}
	if (device_memory != NULL && device_memory != Py_None) {
		uint64_t bytes = 0;
		if (PyUnicode_Check(device_memory)) {
			const char *text = PyUnicode_AsUTF8(device_memory);
			GError *error = NULL;
			if (text == NULL)
				return FALSE;
			if (!cca_size_parse_device(text, "device_memory", &bytes, &error)) {
				raise_config_error("device_memory", error->message);
				g_error_free(error);
				return FALSE;
			}
		} else if (PyLong_Check(device_memory)) {
			bytes = PyLong_AsUnsignedLongLong(device_memory);
			if (PyErr_Occurred()) {
				PyErr_Clear();
				raise_config_error("device_memory",
						   "device_memory: must be a byte count above 0");
				return FALSE;
			}
		} else {
			raise_config_error("device_memory",
					   "device_memory: must be an int (bytes) or a size string "
					   "such as '80GiB'");
			return FALSE;
		}
		if (bytes == 0) {
			raise_config_error("device_memory", "device_memory: must be above 0");
			return FALSE;
		}
		/* an int is bytes: one below 1 MiB is a unit left out, as on the
		 * command line (cca_size_parse_device()) */
		if (bytes < CCA_MIB) {
			g_autofree char *m = g_strdup_printf(
				"device_memory: %" G_GUINT64_FORMAT
				" bytes is no device's memory: give a size string such as "
				"'%" G_GUINT64_FORMAT "G' or a byte count",
				bytes, bytes);
			raise_config_error("device_memory", m);
			return FALSE;
		}
		a->device_memory = bytes;
		a->capacity_set = true;
	}
	if (pytorch_version != NULL && pytorch_version != Py_None) {
		const char *text =
			PyUnicode_Check(pytorch_version) ? PyUnicode_AsUTF8(pytorch_version) : NULL;
		GError *error = NULL;
		if (text == NULL) {
			PyErr_Clear();
			raise_config_error("pytorch_version",
					   "pytorch_version: must be a str 'X.Y'");
			return FALSE;
		}
		if (!cca_settings_pytorch_version_parse(text, &a->pytorch_version, &error)) {
			raise_config_error("pytorch_version", error->message);
			g_error_free(error);
			return FALSE;
		}
	}
	return TRUE;
}

/* The strs of SEQ (None: NULL) as a NULL-terminated vector (g_strfreev()),
 * in *OUT; WHAT names the argument.  A single str is one item. */
static gboolean
parse_strv(PyObject *seq, const char *what, char ***out)
{
	*out = NULL;
	if (seq == NULL || seq == Py_None)
		return TRUE;
	PyObject *fast = PyUnicode_Check(seq) ? PyTuple_Pack(1, seq)
					      : PySequence_Fast(seq, "a sequence of str");
	if (fast == NULL) {
		PyErr_Clear();
		g_autofree char *m = g_strdup_printf("%s: must be a str or a list of str", what);
		raise_config_error(what, m);
		return FALSE;
	}
	Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
	char **v = g_new0(char *, n + 1);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
		const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
		if (s == NULL) {
			PyErr_Clear();
			g_strfreev(v);
			Py_DECREF(fast);
			g_autofree char *m =
				g_strdup_printf("%s: must be a str or a list of str", what);
			raise_config_error(what, m);
			return FALSE;
		}
		v[i] = g_strdup(s);
	}
	Py_DECREF(fast);
	*out = v;
	return TRUE;
}

/* ------------------------------------------------------------ Trace */

typedef struct {
	PyObject_HEAD CcaSnapshot *snap;
	char *name;
} Trace;

static PyTypeObject trace_type;

static void
trace_dealloc(PyObject *self)
{
	Trace *t = (Trace *)self;
	cca_snapshot_free(t->snap);
	g_free(t->name);
	Py_TYPE(self)->tp_free(self);
}

/* Checks DEVICE against T as the CLI does: TraceError for a snapshot
 * without trace entries, ConfigError("device") for a device it lacks. */
static gboolean
check_device(Trace *t, int device)
{
	GError *e = NULL;
	if (!cca_snapshot_check_history(t->snap, &e)) {
		raise_trace_error(t->name, e);
		g_error_free(e);
		return FALSE;
	}
	if (device < 0 || device >= t->snap->n_devices) {
		g_autofree char *m = g_strdup_printf("%s: no device %d (the trace has %d)", t->name,
						     device, t->snap->n_devices);
		raise_config_error("device", m);
		return FALSE;
	}
	return TRUE;
}

/* Parses CONF into SETTINGS under VERSION; ConfigError with the key. */
static gboolean
parse_config(const char *conf, uint32_t version, CcaSettings *settings)
{
	GError *error = NULL;
	cca_settings_init(settings);
	settings->pytorch_version = version;
	if (cca_settings_parse_exact(settings, conf, &error))
		return TRUE;
	g_autofree char *key = config_bad_key(conf, version, error->message);
	g_autofree char *m = g_strdup_printf("config '%s': %s", conf, error->message);
	raise_config_error(key, m);
	g_error_free(error);
	cca_settings_clear(settings);
	return FALSE;
}


/* ccasim.Timeline, made at import from TIMELINE_SOURCE. */
static PyObject *timeline_class;

/* The class of a replay's timeline: a dict of the equal-length columns
 * alone, so that pandas.DataFrame(timeline) is one row per bucket, with
 * the other figures as attributes (and as items for timeline[name]). */
static const char timeline_source[] =
	"class Timeline(dict):\n"
	"    '''A replay's timeline: a dict of equal-length int64 columns (ccasim.Column),\n"
	"    one row per bucket, so that pandas.DataFrame(timeline) has a row per bucket.\n"
	"    The figures beside them (ooms, n_events, n_buckets, has_time, t_min, t_max,\n"
	"    peak_reserved, peak_index, allowed_maximum) are attributes; timeline[name]\n"
	"    reads them too.  to_pandas() is pandas.DataFrame(timeline).'''\n"
	"    __slots__ = ('_meta',)\n"
	"    def __missing__(self, key):\n"
	"        meta = object.__getattribute__(self, '_meta')\n"
	"        if isinstance(key, str) and key in meta:\n"
	"            return meta[key]\n"
	"        raise KeyError(key)\n"
	"    def __getattr__(self, name):\n"
	"        try:\n"
	"            return object.__getattribute__(self, '_meta')[name]\n"
	"        except (KeyError, AttributeError):\n"
	"            raise AttributeError(name) from None\n"
	"    @property\n"
	"    def figures(self):\n"
	"        '''The figures beside the columns, as a new dict.'''\n"
	"        return dict(object.__getattribute__(self, '_meta'))\n"
	"    def to_pandas(self):\n"
	"        '''pandas.DataFrame of the columns, one row per bucket.'''\n"
	"        import pandas\n"
	"        return pandas.DataFrame(dict(self))\n"
	"    def __reduce__(self):\n"
	"        return (dict, (dict(self),))\n";

/* Makes ccasim.Timeline into TIMELINE_CLASS; FALSE with a Python error. */
static gboolean
timeline_class_make(void)
{
	PyObject *globals = Py_BuildValue("{s:O,s:s}", "__builtins__", PyEval_GetBuiltins(),
					  "__name__", "ccasim");
	if (globals == NULL)
		return FALSE;
	PyObject *r = PyRun_String(timeline_source, Py_file_input, globals, globals);
	Py_XDECREF(r);
	if (r != NULL)
		timeline_class = Py_XNewRef(PyDict_GetItemString(globals, "Timeline"));
	Py_DECREF(globals);
	return timeline_class != NULL;
}

/* The timeline TL as a Timeline: a dict of columns (one entry per bucket). */
static PyObject *
timeline_dict(const CcaTimeline *tl)
{
	static const char *const series[CCA_SERIES_COUNT] = {"reserved", "allocated", "active"};
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	uint32_t n = 0;
	for (uint32_t b = 0; b < tl->n_buckets; b++)
		n += tl->buckets[b].n > 0;
	/* columns: index_first, index_last, time_first_us, time_last_us, then
	 * SERIES_{first,last,min,max} */
	enum {
		NCOL = 4 + 4 * CCA_SERIES_COUNT
	};
	int64_t *cols[NCOL];
	for (int c = 0; c < NCOL; c++)
		cols[c] = g_new(int64_t, MAX(n, 1));
	uint32_t r = 0;
	for (uint32_t b = 0; b < tl->n_buckets; b++) {
		const CcaTimelineBucket *k = &tl->buckets[b];
		if (k->n == 0)
			continue;
		cols[0][r] = (int64_t)k->i_first;
		cols[1][r] = (int64_t)k->i_last;
		cols[2][r] = k->t_first;
		cols[3][r] = k->t_last;
		for (int s = 0; s < CCA_SERIES_COUNT; s++) {
			cols[4 + 4 * s][r] = k->first[s];
			cols[5 + 4 * s][r] = k->last[s];
			cols[6 + 4 * s][r] = k->min[s];
			cols[7 + 4 * s][r] = k->max[s];
		}
		r++;
	}
	const char *fixed[4] = {"index_first", "index_last", "time_first_us", "time_last_us"};
	gboolean ok = TRUE;
	for (int c = 0; c < NCOL; c++) {
		g_autofree char *name =
			c < 4 ? g_strdup(fixed[c])
			      : g_strdup_printf("%s_%s", series[(c - 4) / 4],
						(const char *[]){"first", "last", "min",
								 "max"}[(c - 4) % 4]);
		PyObject *col = ok ? column_new(cols[c], n) : NULL;
		if (!ok)
			g_free(cols[c]);
		if (ok && (col == NULL || PyDict_SetItemString(d, name, col) < 0))
			ok = FALSE;
		Py_XDECREF(col);
	}
	/* the figures beside the columns: attributes of the Timeline, and
	 * items that timeline[name] finds, but no columns of its DataFrame */
	if (!ok) {
		Py_DECREF(d);
		return NULL;
	}
	PyObject *meta = PyDict_New();
	PyObject *ooms = meta ? PyList_New(0) : NULL;
	for (guint i = 0; ooms != NULL && tl->ooms && i < tl->ooms->len; i++) {
		const CcaTimelineOom *o = &g_array_index(tl->ooms, CcaTimelineOom, i);
		PyObject *od = Py_BuildValue(
			"{s:K,s:L,s:K,s:K,s:O}", "index", (unsigned long long)o->index, "time_us",
			(long long)o->time_us, "reserved", (unsigned long long)o->reserved, "size",
			(unsigned long long)o->size, "recorded", o->recorded ? Py_True : Py_False);
		if (od == NULL || PyList_Append(ooms, od) < 0)
			Py_CLEAR(ooms);
		Py_XDECREF(od);
	}
	if (ooms == NULL || PyDict_SetItemString(meta, "ooms", ooms) < 0) {
		Py_XDECREF(ooms);
		Py_XDECREF(meta);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(ooms);
	PyObject *scalars = Py_BuildValue(
		"{s:K,s:I,s:O,s:L,s:L,s:K,s:K,s:K}", "n_events", (unsigned long long)tl->n_events,
		"n_buckets", (unsigned)n, "has_time", tl->has_time ? Py_True : Py_False, "t_min",
		(long long)tl->t_min, "t_max", (long long)tl->t_max, "peak_reserved",
		(unsigned long long)tl->peak_reserved, "peak_index",
		(unsigned long long)tl->peak_index, "allowed_maximum",
		(unsigned long long)tl->allowed_maximum);
	if (scalars == NULL || PyDict_Update(meta, scalars) < 0) {
		Py_XDECREF(scalars);
		Py_DECREF(meta);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(scalars);
	PyObject *timeline = PyObject_CallOneArg(timeline_class, d);
	Py_DECREF(d);
	if (timeline == NULL || PyObject_SetAttrString(timeline, "_meta", meta) < 0) {
		Py_XDECREF(timeline);
		Py_DECREF(meta);
		return NULL;
	}
	Py_DECREF(meta);
	return timeline;
}

/* What one replay call asked for, kept by its result for the timeline. */
typedef struct {
	CallArgs args;
	char *config; /* owned copy of args.config */
	bool check, keep_going, whatif;
	bool no_bounds; /* bounds=False: `ccasim replay --no-bounds` */
	guint jobs;	/* threads of the bounds' replays (0: one per core), as -j */
} ReplaySpec;

/* The Replay result. */
typedef struct {
	PyObject_HEAD PyObject *report; /* dict: the CLI's --json */
	PyObject *timeline;		/* dict, None, or NULL until asked for */
	PyObject *trace;		/* the Trace, for a timeline asked for later */
	ReplaySpec spec;
} Replay;

static PyTypeObject replay_type;

static void
replay_dealloc(PyObject *self)
{
	Replay *r = (Replay *)self;
	Py_XDECREF(r->report);
	Py_XDECREF(r->timeline);
	Py_XDECREF(r->trace);
	g_free(r->spec.config);
	Py_TYPE(self)->tp_free(self);
}

static PyObject *replay_timeline(PyObject *self, void *c);

static PyObject *
replay_get(Replay *r, const char *key)
{
	PyObject *v = PyDict_GetItemString(r->report, key);
	if (v == NULL)
		Py_RETURN_NONE;
	Py_INCREF(v);
	return v;
}

static PyObject *
replay_stat(Replay *r, const char *key)
{
	PyObject *stats = PyDict_GetItemString(r->report, "memory_stats");
	PyObject *v = stats && PyDict_Check(stats) ? PyDict_GetItemString(stats, key) : NULL;
	if (v == NULL)
		Py_RETURN_NONE;
	Py_INCREF(v);
	return v;
}

static PyObject *
replay_memory_stats(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "memory_stats");
}
static PyObject *
replay_oom(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "oom");
}
static PyObject *
replay_events(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "events");
}
static PyObject *
replay_whatif(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "whatif");
}
static PyObject *
replay_fragmentation(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "fragmentation");
}
static PyObject *
replay_check(PyObject *self, void *c)
{
	return replay_get((Replay *)self, "check");
}
static PyObject *
replay_peak_reserved(PyObject *self, void *c)
{
	return replay_stat((Replay *)self, "reserved_bytes.all.peak");
}
static PyObject *
replay_peak_allocated(PyObject *self, void *c)
{
	return replay_stat((Replay *)self, "allocated_bytes.all.peak");
}
static PyObject *
replay_num_ooms(PyObject *self, void *c)
{
	return replay_stat((Replay *)self, "num_ooms");
}
static PyObject *
replay_num_mallocs(PyObject *self, void *c)
{
	return replay_stat((Replay *)self, "num_device_alloc");
}

static PyGetSetDef replay_getset[] = {
	{"memory_stats", replay_memory_stats, NULL,
	 "dict: torch.cuda.memory_stats() at the end of the replay (all 122 keys)", NULL},
	{"oom", replay_oom, NULL, "None, or a dict describing the first unexpected OOM", NULL},
	{"events", replay_events, NULL, "int: trace entries replayed", NULL},
	{"whatif", replay_whatif, NULL, "bool: the replay was a what-if", NULL},
	{"fragmentation", replay_fragmentation, NULL, "dict: fragmentation figures", NULL},
	{"check", replay_check, NULL, "None, or the result of check=True (a dict)", NULL},
	{"peak_reserved", replay_peak_reserved, NULL, "int: reserved_bytes.all.peak", NULL},
	{"peak_allocated", replay_peak_allocated, NULL, "int: allocated_bytes.all.peak", NULL},
	{"num_ooms", replay_num_ooms, NULL, "int: num_ooms", NULL},
	{"num_device_alloc", replay_num_mallocs, NULL, "int: cudaMalloc calls and maps", NULL},
	{"timeline", replay_timeline, NULL,
	 "dict: int64 columns, one row per bucket of consecutive trace entries (index_first, "
	 "index_last, time_first_us, time_last_us, then reserved_, allocated_ and active_ "
	 "first, last, min and max, in bytes), 'ooms' (a list of dicts) and scalars "
	 "(n_events, peak_reserved, peak_index, ...).  Collected in the replay itself when "
	 "replay(timeline=N) asked for it, else by one more replay (1000 buckets) the first "
	 "time it is read; None with timeline=0.",
	 NULL},
	{NULL},
};

static PyMemberDef replay_members[] = {
	{"report", T_OBJECT_EX, offsetof(Replay, report), READONLY,
	 "dict: everything `ccasim replay --json` prints for this call"},
	{NULL},
};

static PyObject *
replay_repr(PyObject *self)
{
	Replay *r = (Replay *)self;
	PyObject *peak = replay_stat(r, "reserved_bytes.all.peak");
	PyObject *oom = replay_get(r, "oom");
	PyObject *s = PyUnicode_FromFormat("<ccasim.Replay peak_reserved=%R oom=%s>", peak,
					   oom == Py_None ? "None" : "yes");
	Py_XDECREF(peak);
	Py_XDECREF(oom);
	return s;
}

static PyTypeObject replay_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ccasim.Replay",
	.tp_basicsize = sizeof(Replay),
	.tp_dealloc = replay_dealloc,
	.tp_repr = replay_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The result of Trace.replay(): report (the CLI's --json as a dict), "
		  "memory_stats, oom, summary figures and the timeline.",
	.tp_getset = replay_getset,
	.tp_members = replay_members,
};

/* Fills OPT for a replay of T with A and CONFIG; FALSE with a Python error. */
static gboolean
replay_options(Trace *t, const CallArgs *a, CcaReplayOptions *opt, CcaSettings *settings,
	       bool *has_settings)
{
	cca_replay_options_init(opt);
	opt->memory_fraction = a->memory_fraction;
	opt->recorded_memory_fraction = a->recorded_memory_fraction;
	opt->device_memory = a->device_memory;
	opt->capacity_set = a->capacity_set;
	opt->pytorch_version =
		a->pytorch_version ? a->pytorch_version : cca_replay_guess_pytorch_version(t->snap);
	opt->device = a->device;
	*has_settings = false;
	if (!check_device(t, a->device))
		return FALSE;
	if (a->config != NULL) {
		if (!parse_config(a->config, opt->pytorch_version, settings))
			return FALSE;
		*has_settings = true;
		opt->settings = settings;
	}
	return TRUE;
}

/* Runs the replay SPEC of T, with a timeline of BUCKETS buckets (0:
 * none) collected by the same replay: the report in *DOC (NULL: not
 * wanted) and the timeline in *TIMELINE.  FALSE with a Python error. */
static gboolean
run_replay(Trace *t, const ReplaySpec *spec, uint32_t buckets, PyObject **doc_out,
	   PyObject **timeline_out)
{
	CcaReplayOptions opt;
	CcaSettings settings;
	bool has_settings;
	if (!replay_options(t, &spec->args, &opt, &settings, &has_settings))
		return FALSE;
	opt.check = spec->check;
	opt.keep_going = spec->keep_going;
	opt.force_whatif = spec->whatif;
	/* as `ccasim replay`: a likely what-if counts its decisions by address
	 * in its one replay, for its bounds (timing.h) */
	opt.count_address_ties =
		doc_out != NULL && !spec->no_bounds &&
		(has_settings || opt.force_whatif || opt.memory_fraction > 0 || opt.capacity_set);
	opt.no_bounds = spec->no_bounds;
	opt.bound_threads = spec->jobs;

	GError *error = NULL;
	json_t *doc = NULL;
	CcaTimeline tl;
	memset(&tl, 0, sizeof tl);
	gboolean ok;
	const CcaSnapshot *snap = t->snap;
	gboolean want_doc = doc_out != NULL;
	Py_BEGIN_ALLOW_THREADS;
	gint64 start = g_get_monotonic_time();
	/* planned here as `ccasim replay` plans, so that the report shows the plan */
	CcaPlan *plan =
		cca_plan_new_unread(snap, opt.device, opt.pytorch_version, opt.rewind, &error);
	CcaReplayOptions planned = opt;
	planned.plan = plan;
	CcaReplayResult result;
	memset(&result, 0, sizeof result);
	if (plan == NULL)
		ok = FALSE;
	else if (buckets > 0)
		ok = cca_timeline_collect(snap, &planned, buckets, &tl, &error);
	else
		ok = cca_replay_run(snap, &planned, &result, &error);
	if (g_getenv("CCASIM_TIMING")) /* for benchmarks: the span the CLI times */
		fprintf(stderr, "timing: replay of device %d: %.6f s\n", opt.device,
			(double)(g_get_monotonic_time() - start) / 1e6);
	if (ok && want_doc) {
		CcaReportContext ctx = {
			.trace = snap->source,
			.device = opt.device,
			/* the settings the recording began with: the plan's */
			.settings = opt.settings ? opt.settings : &plan->recorded,
			.memory_fraction = opt.memory_fraction,
			.device_memory = cca_plan_device_memory(plan, opt.device_memory),
			.device_memory_set = opt.capacity_set,
			.snap = snap,
		};
		const CcaReplayResult *res = buckets > 0 ? &tl.result : &result;
		doc = cca_report_replay_to_json(&ctx, res);
		json_object_set_new(doc, "plan", cca_plan_to_json(plan));
		/* the stream-timing bounds of a what-if, as `ccasim replay` has them */
		CcaTiming timing = {0};
		ok = cca_timing_run(snap, &planned, res, &timing, &error);
		cca_timing_add_json(&timing, doc);
		cca_timing_clear(&timing);
		if (!ok)
			g_clear_pointer(&doc, json_decref);
	}
	cca_replay_result_clear(&result);
	cca_plan_free(plan);
	Py_END_ALLOW_THREADS;
	if (has_settings)
		cca_settings_clear(&settings);
	if (!ok) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return FALSE;
	}
	if (want_doc && !(*doc_out = from_json_steal(doc))) {
		cca_timeline_clear(&tl);
		return FALSE;
	}
	if (buckets > 0) {
		*timeline_out = timeline_dict(&tl);
		cca_timeline_clear(&tl);
		if (*timeline_out == NULL) {
			if (want_doc)
				Py_CLEAR(*doc_out);
			return FALSE;
		}
	}
	return TRUE;
}

static PyObject *
replay_timeline(PyObject *self, void *c)
{
	Replay *r = (Replay *)self;
	if (r->timeline == NULL) {
		PyObject *tl = NULL;
		if (!run_replay((Trace *)r->trace, &r->spec, 1000, NULL, &tl))
			return NULL;
		if (r->timeline == NULL) /* another thread may have been first */
			r->timeline = tl;
		else
			Py_DECREF(tl);
	}
	Py_INCREF(r->timeline);
	return r->timeline;
}

static PyObject *
trace_replay(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {
		"config",   "memory_fraction",		"device_memory", "device",
		"check",    "pytorch_version",		"whatif",	 "keep_going",
		"timeline", "recorded_memory_fraction", "bounds",	 "jobs",
		NULL};
	Trace *t = (Trace *)self;
	const char *config = NULL;
	PyObject *fraction = NULL, *memory = NULL, *version = NULL, *timeline = Py_None,
		 *recorded = NULL;
	int device = 0, check = 0, whatif = 0, keep_going = 0, bounds = 1, jobs = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|zOOipOppOOpi:replay", kwlist, &config,
					 &fraction, &memory, &device, &check, &version, &whatif,
					 &keep_going, &timeline, &recorded, &bounds, &jobs))
		return NULL;
	if (jobs < 0) {
		raise_config_error("jobs", "jobs: must be 0 (one thread per core) or more");
		return NULL;
	}
	long buckets = -1; /* the timeline when asked for */
	if (timeline != Py_None) {
		buckets = PyLong_Check(timeline) ? PyLong_AsLong(timeline) : -2;
		if (buckets < 0 || buckets > 10000000) {
			PyErr_Clear();
			raise_config_error("timeline", "timeline: None, or a bucket count in "
						       "[0, 10000000]");
			return NULL;
		}
	}
	ReplaySpec spec = {.args = {.config = config, .device = device},
			   .check = check,
			   .keep_going = keep_going,
			   .whatif = whatif,
			   .no_bounds = !bounds,
			   .jobs = (guint)jobs};
	if (!parse_limits(fraction, memory, version, &spec.args) ||
	    !parse_recorded_fraction(recorded, &spec.args))
		return NULL;
	PyObject *report = NULL, *tl = NULL;
	if (!run_replay(t, &spec, buckets > 0 ? (uint32_t)buckets : 0, &report, &tl))
		return NULL;
	Replay *r = PyObject_New(Replay, &replay_type);
	if (r == NULL) {
		Py_DECREF(report);
		Py_XDECREF(tl);
		return NULL;
	}
	r->report = report;
	r->timeline = buckets == 0 ? Py_NewRef(Py_None) : tl;
	r->trace = Py_NewRef(self);
	r->spec = spec;
	r->spec.config = g_strdup(config);
	r->spec.args.config = r->spec.config;
	return (PyObject *)r;
}

/* The sweep of T for a study: configs, sets, the default grid. */
static CcaSweep *
build_sweep(Trace *t, const CallArgs *a, char **configs, char **sets, gboolean default_grid)
{
	GError *error = NULL;
	if (!check_device(t, a->device))
		return NULL;
	CcaSweep *sweep = cca_sweep_new(t->snap, a->device, a->pytorch_version, &error);
	if (!sweep) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return NULL;
	}
	for (char **p = configs; p && *p; p++)
		if (!cca_sweep_add_config(sweep, *p, "--config", &error)) {
			g_autofree char *key =
				config_bad_key(*p, sweep->pytorch_version, error->message);
			g_autofree char *m = g_strdup_printf("config '%s': %s", *p, error->message);
			raise_config_error(key, m);
			g_error_free(error);
			cca_sweep_free(sweep);
			return NULL;
		}
	guint n_sets = sets ? g_strv_length(sets) : 0;
	if (!cca_sweep_add_sets(sweep, (const char *const *)sets, n_sets, &error)) {
		raise_config_error("sets", error->message);
		g_error_free(error);
		cca_sweep_free(sweep);
		return NULL;
	}
	gboolean ok = TRUE;
	if (default_grid) {
		bool capped = a->memory_fraction > 0;
		Py_BEGIN_ALLOW_THREADS;
		ok = cca_sweep_add_default_grid(sweep, capped, &error);
		Py_END_ALLOW_THREADS;
	}
	if (!ok) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		cca_sweep_free(sweep);
		return NULL;
	}
	return sweep;
}

/* The dict DOC or its "rows" (FULL false), which it releases. */
static PyObject *
study_result(json_t *doc, int full)
{
	if (!full) {
		json_t *rows = json_incref(json_object_get(doc, "rows"));
		json_decref(doc);
		doc = rows;
	}
	return from_json_steal(doc);
}

/* "the memory outside the allocator" of a GPU preset for T, as the CLI's
 * --context does: CONTEXT (bytes or a size) or the recorded one, else the
 * preset's. */
static gboolean
gpu_context(Trace *t, int device, PyObject *context, uint64_t *bytes, const char **source)
{
	*bytes = CCA_GPU_CONTEXT_BYTES;
	*source = CCA_GPU_CONTEXT_SOURCE;
	if (context != NULL && context != Py_None) {
		CallArgs tmp = {0};
		if (!parse_limits(NULL, context, NULL, &tmp)) {
			PyObject *type, *value, *tb;
			PyErr_Fetch(&type, &value, &tb);
			Py_XDECREF(type);
			Py_XDECREF(value);
			Py_XDECREF(tb);
			raise_config_error("context",
					   "context: must be an int (bytes) above 0 or a "
					   "size string");
			return FALSE;
		}
		*bytes = tmp.device_memory;
		*source = "given with --context";
		return TRUE;
	}
	GError *error = NULL;
	if (!cca_fit_recorded_context(t->snap, device, bytes, source, &error) && error) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return FALSE;
	}
	return TRUE;
}

static PyObject *
trace_sweep(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"configs",
				 "sets",
				 "default_grid",
				 "goal",
				 "recommend",
				 "memory_fraction",
				 "device_memory",
				 "device",
				 "pytorch_version",
				 "jobs",
				 "address_sensitivity",
				 "all_address_models",
				 "calibration",
				 "gpu",
				 "context",
				 "full",
				 "recorded_memory_fraction",
				 NULL};
	Trace *t = (Trace *)self;
	PyObject *configs_o = NULL, *sets_o = NULL, *default_o = Py_None, *fraction = NULL,
		 *memory = NULL, *version = NULL, *context = NULL, *recorded = NULL;
	const char *goal_name = NULL, *calibration = NULL, *gpu_name = NULL;
	int recommend = 0, device = 0, jobs = 0, sensitivity = 1, all_models = 0, full = 0;
	if (!PyArg_ParseTupleAndKeywords(
		    args, kwds, "|OOOzpOOiOippzzOpO:sweep", kwlist, &configs_o, &sets_o, &default_o,
		    &goal_name, &recommend, &fraction, &memory, &device, &version, &jobs,
		    &sensitivity, &all_models, &calibration, &gpu_name, &context, &full, &recorded))
		return NULL;
	CallArgs a = {.device = device};
	if (!parse_limits(fraction, memory, version, &a) || !parse_recorded_fraction(recorded, &a))
		return NULL;
	if (jobs < 0) {
		raise_config_error("jobs", "jobs: must be 0 (one thread per core) or more");
		return NULL;
	}
	GError *error = NULL;
	CcaGoal goal = CCA_GOAL_RESERVED;
	if (goal_name && !cca_sweep_goal_parse(goal_name, &goal, &error)) {
		raise_config_error("goal", error->message);
		g_error_free(error);
		return NULL;
	}
	g_auto(GStrv) configs = NULL;
	g_auto(GStrv) sets = NULL;
	if (!parse_strv(configs_o, "configs", &configs) || !parse_strv(sets_o, "sets", &sets))
		return NULL;
	int default_grid = default_o == Py_None ? (!configs && !sets) : PyObject_IsTrue(default_o);
	if (default_grid < 0)
		return NULL;
	const CcaGpuPreset *gpu = NULL;
	uint64_t ctx_bytes = 0;
	const char *ctx_source = NULL;
	if (context != NULL && context != Py_None && !gpu_name) {
		raise_config_error("context", "context needs gpu");
		return NULL;
	}
	if (gpu_name) {
		if (a.memory_fraction > 0 || a.capacity_set) {
			raise_config_error("gpu", "gpu sets the device memory: leave out "
						  "device_memory and memory_fraction");
			return NULL;
		}
		GError *why = NULL;
		if (!(gpu = cca_fit_gpu_preset_find(gpu_name, &why))) {
			g_autofree char *m = g_strdup_printf("gpu: %s", why->message);
			g_error_free(why);
			raise_config_error("gpu", m);
			return NULL;
		}
		if (!gpu_context(t, device, context, &ctx_bytes, &ctx_source))
			return NULL;
		uint64_t usable = cca_fit_gpu_usable(gpu, ctx_bytes);
		if (usable == 0) {
			raise_config_error("context", "the memory outside the allocator fills the "
						      "whole GPU");
			return NULL;
		}
		a.device_memory = usable;
		a.capacity_set = true;
	}
	CcaCalibrationTable *cal = calibration ? cca_calibration_load(calibration, &error)
					       : cca_calibration_new_h200();
	if (!cal) {
		g_autofree char *m = g_strdup_printf("calibration: %s", error->message);
		raise_config_error("calibration", m);
		g_error_free(error);
		return NULL;
	}
	CcaSweep *sweep = build_sweep(t, &a, configs, sets, default_grid);
	if (!sweep) {
		cca_calibration_free(cal);
		return NULL;
	}
	CcaSweepOptions opt = {
		.memory_fraction = a.memory_fraction,
		.recorded_memory_fraction = a.recorded_memory_fraction,
		.device_memory = a.device_memory,
		.capacity_set = a.capacity_set,
		.calibration = cal,
		.threads = (guint)jobs,
		.all_address_models = all_models,
		.address_sensitivity = sensitivity || all_models,
	};
	json_t *doc = NULL;
	gboolean ok;
	opt.cancel = &interrupted;
	interrupt_begin();
	Py_BEGIN_ALLOW_THREADS;
	ok = cca_sweep_run(sweep, &opt, &error);
	if (ok) {
		cca_sweep_sort(sweep, goal);
		GString *why = g_string_new(NULL);
		CcaSweepReport report = {.trace = t->snap->source, .goal = goal, .options = &opt};
		if (gpu) {
			report.gpu = gpu->name;
			report.gpu_total = gpu->total_memory;
			report.context = ctx_bytes;
			report.context_source = ctx_source;
		}
		if (recommend) {
			report.recommended = cca_sweep_recommend(sweep, goal, &opt, why);
			report.why = why->str;
		}
		doc = cca_sweep_to_json(sweep, &report);
		g_string_free(why, TRUE);
	}
	cca_sweep_free(sweep);
	cca_calibration_free(cal);
	Py_END_ALLOW_THREADS;
	if (interrupt_end() < 0) {
		g_clear_error(&error);
		if (doc)
			json_decref(doc);
		return NULL;
	}
	if (!ok) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return NULL;
	}
	return study_result(doc, full);
}

static PyObject *
trace_fit(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"configs",	 "sets",
				 "default_grid", "recorded",
				 "gpu",		 "context",
				 "device",	 "pytorch_version",
				 "jobs",	 "memory_fraction",
				 "full",	 "recorded_memory_fraction",
				 "gpus",	 NULL};
	Trace *t = (Trace *)self;
	PyObject *configs_o = NULL, *sets_o = NULL, *default_o = Py_None, *gpus_o = NULL,
		 *context = NULL, *version = NULL, *fraction = NULL, *recorded_fraction = NULL,
		 *old_gpus = NULL;
	int recorded = 0, device = 0, jobs = 0, full = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOOpOOiOiOpO$O:fit", kwlist, &configs_o,
					 &sets_o, &default_o, &recorded, &gpus_o, &context, &device,
					 &version, &jobs, &fraction, &full, &recorded_fraction,
					 &old_gpus))
		return NULL;
	/* gpus= is fit's old name of gpu= (sweep's, fleet's and the CLI's --gpu) */
	if (old_gpus != NULL) {
		if (gpus_o != NULL) {
			raise_config_error("gpus", "gpus: give gpu= alone (gpus= is its old name)");
			return NULL;
		}
		if (PyErr_WarnEx(
			    PyExc_DeprecationWarning,
			    "fit(gpus=...) is now fit(gpu=...), as in sweep() and the CLI's --gpu",
			    1) < 0)
			return NULL;
		gpus_o = old_gpus;
	}
	CallArgs a = {.device = device};
	if (!parse_limits(fraction, NULL, version, &a) ||
	    !parse_recorded_fraction(recorded_fraction, &a))
		return NULL;
	if (jobs < 0) {
		raise_config_error("jobs", "jobs: must be 0 (one thread per core) or more");
		return NULL;
	}
	g_auto(GStrv) configs = NULL;
	g_auto(GStrv) sets = NULL;
	g_auto(GStrv) gpu_names = NULL;
	if (!parse_strv(configs_o, "configs", &configs) || !parse_strv(sets_o, "sets", &sets) ||
	    !parse_strv(gpus_o, "gpu", &gpu_names))
		return NULL;
	const CcaGpuPreset *gpus[CCA_FIT_MAX_GPUS];
	guint n_gpus = 0, n_presets;
	const CcaGpuPreset *presets = cca_fit_gpu_presets(&n_presets);
	for (char **p = gpu_names; p && *p; p++) {
		if (g_ascii_strcasecmp(*p, "all") == 0) {
			for (guint i = 0; i < n_presets && n_gpus < CCA_FIT_MAX_GPUS; i++)
				gpus[n_gpus++] = &presets[i];
			continue;
		}
		GError *why = NULL;
		const CcaGpuPreset *g = cca_fit_gpu_preset_find(*p, &why);
		if (!g || n_gpus == CCA_FIT_MAX_GPUS) {
			g_autofree char *m =
				g ? g_strdup_printf("gpu: at most %d GPUs", CCA_FIT_MAX_GPUS)
				  : g_strdup_printf("gpu: %s", why->message);
			g_clear_error(&why);
			raise_config_error("gpu", m);
			return NULL;
		}
		gpus[n_gpus++] = g;
	}
	int chosen = configs || sets || recorded;
	int default_grid = default_o == Py_None ? !chosen : PyObject_IsTrue(default_o);
	if (default_grid < 0)
		return NULL;
	uint64_t ctx_bytes;
	const char *ctx_source;
	if (!gpu_context(t, device, context, &ctx_bytes, &ctx_source))
		return NULL;
	if (context == NULL || context == Py_None)
		ctx_source = ctx_source && strcmp(ctx_source, CCA_GPU_CONTEXT_SOURCE) != 0
				     ? ctx_source
				     : NULL;
	CcaSweep *sweep = build_sweep(t, &a, configs, sets, default_grid);
	if (!sweep)
		return NULL;
	CcaFitOptions opt = {
		.threads = (guint)jobs,
		.gpus = gpus,
		.n_gpus = n_gpus,
		.context = ctx_bytes,
		.context_source = ctx_source,
		.recorded_memory_fraction = a.recorded_memory_fraction,
	};
	GError *error = NULL;
	json_t *doc = NULL;
	CcaFitRow *rows;
	opt.cancel = &interrupted;
	interrupt_begin();
	Py_BEGIN_ALLOW_THREADS;
	rows = cca_fit_run(sweep, &opt, &error);
	if (rows) {
		guint n = sweep->rows->len;
		cca_fit_sort(rows, n);
		CcaFitReport report = {.trace = t->snap->source, .options = &opt};
		doc = cca_fit_to_json(sweep, rows, n, &report);
	}
	g_free(rows);
	cca_sweep_free(sweep);
	Py_END_ALLOW_THREADS;
	if (interrupt_end() < 0) {
		g_clear_error(&error);
		if (doc)
			json_decref(doc);
		return NULL;
	}
	if (!doc) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return NULL;
	}
	return study_result(doc, full);
}

static PyObject *
trace_explain(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"config", "memory_fraction",	       "device_memory",
				 "device", "pytorch_version",	       "limit",
				 "top",	   "recorded_memory_fraction", NULL};
	Trace *t = (Trace *)self;
	const char *config = NULL;
	PyObject *fraction = NULL, *memory = NULL, *version = NULL, *recorded = NULL;
	int device = 0, limit = 20, top = 8;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|zOOiOiiO:explain", kwlist, &config,
					 &fraction, &memory, &device, &version, &limit, &top,
					 &recorded))
		return NULL;
	if (limit < 0 || top < 1) {
		raise_config_error(limit < 0 ? "limit" : "top",
				   limit < 0 ? "limit: must be 0 (all) or more"
					     : "top: must be 1 or more");
		return NULL;
	}
	CallArgs a = {.config = config, .device = device};
	if (!parse_limits(fraction, memory, version, &a) || !parse_recorded_fraction(recorded, &a))
		return NULL;
	CcaReplayOptions opt;
	CcaSettings settings;
	bool has_settings;
	if (!replay_options(t, &a, &opt, &settings, &has_settings))
		return NULL;
	GError *error = NULL;
	GString *out = g_string_new(NULL);
	gboolean ok;
	const CcaSnapshot *snap = t->snap;
	Py_BEGIN_ALLOW_THREADS;
	char *label = cca_report_settings_label(snap, &opt);
	g_string_append_printf(
		out, "%s, device %d: %" G_GUINT64_FORMAT " events, %s, PyTorch %u.%u rules\n",
		snap->source, opt.device, snap->n_events[opt.device], label,
		opt.pytorch_version / 100, opt.pytorch_version % 100);
	g_free(label);
	CcaExplainParams params = {.limit = (guint)limit, .top = (guint)top};
	/* a what-if's figures, bounded as `ccasim explain` bounds them, from
	 * its own replay */
	CcaReplayResult base = {0};
	params.result = &base;
	opt.count_address_ties = true;
	GString *body = g_string_new(NULL);
	CcaTiming timing = {0};
	ok = cca_explain_run(snap, &opt, &params, body, &error) &&
	     cca_timing_bound(snap, &opt, &base, &timing, &error);
	if (ok) {
		cca_timing_describe_lead(&timing, out);
		g_string_append_len(out, body->str, (gssize)body->len);
		cca_timing_describe_headline(&timing, true, out);
	}
	g_string_free(body, TRUE);
	cca_timing_clear(&timing);
	cca_replay_result_clear(&base);
	Py_END_ALLOW_THREADS;
	if (has_settings)
		cca_settings_clear(&settings);
	if (!ok) {
		g_string_free(out, TRUE);
		raise_trace_error(t->name, error);
		g_error_free(error);
		return NULL;
	}
	PyObject *s = PyUnicode_DecodeUTF8(out->str, (Py_ssize_t)out->len, "replace");
	g_string_free(out, TRUE);
	return s;
}

static PyObject *
trace_peak(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"config",
				 "memory_fraction",
				 "device_memory",
				 "device",
				 "under",
				 "pytorch_version",
				 "recorded_memory_fraction",
				 NULL};
	Trace *t = (Trace *)self;
	const char *config = NULL, *under = NULL;
	PyObject *fraction = NULL, *memory = NULL, *version = NULL, *recorded = NULL;
	int device = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|zOOizOO:peak", kwlist, &config, &fraction,
					 &memory, &device, &under, &version, &recorded))
		return NULL;
	CallArgs a = {.config = config, .device = device};
	if (!parse_limits(fraction, memory, version, &a) || !parse_recorded_fraction(recorded, &a))
		return NULL;
	CcaReplayOptions opt;
	CcaSettings settings, under_settings;
	bool has_settings;
	if (!replay_options(t, &a, &opt, &settings, &has_settings))
		return NULL;
	if (under) {
		GError *error = NULL;
		cca_settings_init(&under_settings);
		under_settings.pytorch_version = opt.pytorch_version;
		if (!cca_settings_parse_exact(&under_settings, under, &error)) {
			g_autofree char *key =
				config_bad_key(under, opt.pytorch_version, error->message);
			g_autofree char *m =
				g_strdup_printf("under '%s': %s", under, error->message);
			raise_config_error(key, m);
			g_error_free(error);
			cca_settings_clear(&under_settings);
			if (has_settings)
				cca_settings_clear(&settings);
			return NULL;
		}
	}
	GError *error = NULL;
	json_t *doc = NULL;
	const CcaSnapshot *snap = t->snap;
	const char *name = t->name;
	gboolean ok;
	Py_BEGIN_ALLOW_THREADS;
	CcaPeakRun ra = {0}, rb = {0};
	/* each run's figures bounded as `ccasim peak --json` bounds them */
	CcaTiming ta = {0}, tb = {0};
	opt.count_address_ties = true; /* for the bounds, as the CLI's */
	CcaReplayOptions ob = opt;
	ob.settings = &under_settings;
	ok = cca_peak_run_collect(&ra, snap, &opt, &error) &&
	     cca_timing_bound(snap, &opt, &ra.result, &ta, &error);
	if (ok && under)
		ok = cca_peak_run_collect(&rb, snap, &ob, &error) &&
		     cca_timing_bound(snap, &ob, &rb.result, &tb, &error);
	if (ok) {
		doc = cca_peak_run_to_json(name, opt.device, &ra, under ? &rb : NULL);
		cca_timing_add_run_json(&ta, under ? json_object_get(doc, "a") : doc);
		if (under)
			cca_timing_add_run_json(&tb, json_object_get(doc, "b"));
	}
	cca_timing_clear(&ta);
	cca_timing_clear(&tb);
	cca_peak_run_clear(&ra);
	cca_peak_run_clear(&rb);
	Py_END_ALLOW_THREADS;
	if (under)
		cca_settings_clear(&under_settings);
	if (has_settings)
		cca_settings_clear(&settings);
	if (!ok) {
		raise_trace_error(t->name, error);
		g_error_free(error);
		return NULL;
	}
	return from_json_steal(doc);
}

static PyObject *
trace_get_source(PyObject *self, void *c)
{
	return PyUnicode_DecodeFSDefault(((Trace *)self)->snap->source);
}

static PyObject *
trace_get_devices(PyObject *self, void *c)
{
	return PyLong_FromLong(((Trace *)self)->snap->n_devices);
}

static PyObject *
trace_get_events(PyObject *self, void *c)
{
	const CcaSnapshot *s = ((Trace *)self)->snap;
	PyObject *l = PyList_New(s->n_devices);
	for (int d = 0; l && d < s->n_devices; d++) {
		PyObject *v = PyLong_FromUnsignedLongLong(s->n_events[d]);
		if (!v) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, d, v);
	}
	return l;
}

static PyObject *
trace_get_version(PyObject *self, void *c)
{
	uint32_t v = cca_replay_guess_pytorch_version(((Trace *)self)->snap);
	return PyUnicode_FromFormat("%u.%u", v / 100, v % 100);
}

static PyObject *
trace_repr(PyObject *self)
{
	const CcaSnapshot *s = ((Trace *)self)->snap;
	return PyUnicode_FromFormat("<ccasim.Trace %s: %d device(s)>", s->source, s->n_devices);
}

static PyGetSetDef trace_getset[] = {
	{"source", trace_get_source, NULL, "str: the path (or name) the trace was loaded from",
	 NULL},
	{"devices", trace_get_devices, NULL, "int: devices with a trace", NULL},
	{"events", trace_get_events, NULL, "list of int: trace entries per device", NULL},
	{"pytorch_version", trace_get_version, NULL,
	 "str: the PyTorch release whose rules replay it by default ('2.11')", NULL},
	{NULL},
};

static PyMethodDef trace_methods[] = {
	{"replay", (PyCFunction)(void (*)(void))trace_replay, METH_VARARGS | METH_KEYWORDS,
	 "replay(config=None, memory_fraction=None, device_memory=None, device=0, check=False,\n"
	 "       pytorch_version=None, whatif=False, keep_going=False, timeline=1000,\n"
	 "       recorded_memory_fraction=None, bounds=True, jobs=0) -> Replay\n\n"
	 "Replays one device as `ccasim replay --json` does: config is a\n"
	 "PYTORCH_CUDA_ALLOC_CONF string (None: the recorded settings), memory_fraction a\n"
	 "cap in (0, 1], device_memory bytes (int) or a size ('80GiB').  timeline: buckets\n"
	 "of the timeline collected in the same replay (0: none).  bounds=False: one\n"
	 "replay, as --no-bounds (no bounds over timings and address models); jobs: threads\n"
	 "of the bounds' replays, as -j (0: one per core).  The GIL is released\n"
	 "while it runs.  Raises TraceError on bad input, ConfigError on a bad argument."},
	{"sweep", (PyCFunction)(void (*)(void))trace_sweep, METH_VARARGS | METH_KEYWORDS,
	 "sweep(configs=None, sets=None, default_grid=None, goal='reserved', recommend=False,\n"
	 "      memory_fraction=None, device_memory=None, device=0, pytorch_version=None,\n"
	 "      jobs=0, address_sensitivity=True, all_address_models=False,\n"
	 "      calibration=None, gpu=None, context=None, full=False) -> list of dict\n\n"
	 "`ccasim sweep --json`: one row per setting, best first (configs: strs like\n"
	 "--config, sets: 'KEY=V1,V2' like --set; the default grid without either).\n"
	 "Returns the rows, or with full=True the whole document (notes,\n"
	 "recommendation, ...).  pandas.DataFrame(rows) takes the rows as they are."},
	{"fit", (PyCFunction)(void (*)(void))trace_fit, METH_VARARGS | METH_KEYWORDS,
	 "fit(configs=None, sets=None, default_grid=None, recorded=False, gpu=None,\n"
	 "    context=None, device=0, pytorch_version=None, jobs=0, memory_fraction=None,\n"
	 "    full=False) -> list of dict\n\n"
	 "`ccasim fit --json`: the smallest device memory (to 2 MiB) each setting runs\n"
	 "in without OOM; gpu names presets, one or a list ('A100-40GB', 'all'), as\n"
	 "sweep(gpu=) and --gpu do (gpus= is its deprecated old name)."},
	{"explain", (PyCFunction)(void (*)(void))trace_explain, METH_VARARGS | METH_KEYWORDS,
	 "explain(config=None, memory_fraction=None, device_memory=None, device=0,\n"
	 "        pytorch_version=None, limit=20, top=8) -> str\n\n"
	 "`ccasim explain`: why each cudaMalloc and OOM happened, in plain language."},
	{"peak", (PyCFunction)(void (*)(void))trace_peak, METH_VARARGS | METH_KEYWORDS,
	 "peak(config=None, memory_fraction=None, device_memory=None, device=0, under=None,\n"
	 "     pytorch_version=None) -> dict\n\n"
	 "`ccasim peak --json`: what made the peak.  At the reserved peak, the allocated\n"
	 "peak and every OOM ('moments'), the live blocks grouped by call stack, by\n"
	 "record_function annotation and by user metadata, largest first; the free bytes\n"
	 "stranded per segment; the request that made each segment; 'figures'.  under: a\n"
	 "second replay under these settings (PYTORCH_CUDA_ALLOC_CONF syntax); the result\n"
	 "is then {'a': ..., 'b': ..., 'changes': ...} as with --under.  The GIL is\n"
	 "released while it runs.  Raises TraceError on bad input, ConfigError (.key) on a\n"
	 "bad argument."},
	{NULL},
};

static PyTypeObject trace_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ccasim.Trace",
	.tp_basicsize = sizeof(Trace),
	.tp_dealloc = trace_dealloc,
	.tp_repr = trace_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A loaded memory snapshot or ccasim trace (ccasim.load()); immutable, "
		  "safe to replay from several threads at once.",
	.tp_methods = trace_methods,
	.tp_getset = trace_getset,
};

/* ------------------------------------------------------------ ccasim.fleet */

/* Raises ERROR, an error of sim/study/fleet.c: FileNotFoundError or
 * OSError for a file error, ccasim.Error otherwise (a bad manifest line, a
 * folder of other options, a bad row file). */
static void
raise_fleet_error(const GError *error)
{
	PyObject *type = ccasim_error;
	if (error->domain == G_FILE_ERROR)
		type = error->code == G_FILE_ERROR_NOENT ? PyExc_FileNotFoundError
		       : error->code == G_FILE_ERROR_ACCES || error->code == G_FILE_ERROR_PERM
			       ? PyExc_PermissionError
		       : error->code == G_FILE_ERROR_ISDIR ? PyExc_IsADirectoryError
							   : PyExc_OSError;
	PyErr_SetString(type, error->message);
}

/* The options of a fleet call, as `ccasim fleet run` builds them. */
typedef struct {
	char **configs, **sets; /* NULL when none */
	char *gpu;
	CcaFleetOptions opt;
} FleetArgs;

static void
fleet_args_clear(FleetArgs *f)
{
	g_strfreev(f->configs);
	g_strfreev(f->sets);
	g_free(f->gpu);
}

/* The built-in H200 calibration table `fleet run` uses by default, made
 * once (with the GIL) and shared: the replays only read it. */
static const CcaCalibrationTable *
fleet_calibration(void)
{
	static CcaCalibrationTable *h200;
	if (h200 == NULL)
		h200 = cca_calibration_new_h200();
	return h200;
}

/* True for None and for an int or float equal to 0 (the options' "none"). */
static gboolean
is_zero(PyObject *o)
{
	if (o == NULL || o == Py_None)
		return TRUE;
	if (PyLong_Check(o) || PyFloat_Check(o)) {
		int r = PyObject_Not(o);
		if (r < 0)
			PyErr_Clear();
		return r == 1;
	}
	return FALSE;
}

/* The key of the argument at fault when cca_fleet_options_check()
 * refused F with MESSAGE, or the allocator key of a bad config.  Free with
 * g_free(). */
static char *
fleet_bad_key(const FleetArgs *f, const char *message)
{
	if (g_str_has_prefix(message, "--gpu"))
		return g_strdup("gpu");
	for (char **c = f->configs; c && *c; c++) {
		g_autofree char *prefix = g_strdup_printf("--config %s: ", *c);
		if (!g_str_has_prefix(message, prefix))
			continue;
		uint32_t version = f->opt.pytorch_version;
		if (!version) { /* what a sweep of a snapshot without a version uses */
			g_autoptr(CcaSnapshot) empty = cca_snapshot_new();
			version = cca_replay_guess_pytorch_version(empty);
		}
		char *key = config_bad_key(*c, version, message + strlen(prefix));
		return key ? key : g_strdup("configs");
	}
	return g_strdup("sets");
}

/* Reads the keyword options shared by fleet.run() and fleet.write() into
 * F (cleared by the caller either way) and checks them as `fleet run`
 * does: ConfigError naming the argument or the allocator key. */
static gboolean
fleet_args_parse(PyObject *configs, PyObject *sets, PyObject *default_grid, const char *gpu,
		 PyObject *fraction, PyObject *memory, PyObject *version, FleetArgs *f)
{
	if (!parse_strv(configs, "configs", &f->configs) || !parse_strv(sets, "sets", &f->sets))
		return FALSE;
	/* an empty list is no list, as no --config or --set */
	if (f->configs && !f->configs[0])
		g_clear_pointer(&f->configs, g_strfreev);
	if (f->sets && !f->sets[0])
		g_clear_pointer(&f->sets, g_strfreev);
	CallArgs a = {0};
	if (!parse_limits(is_zero(fraction) ? NULL : fraction, is_zero(memory) ? NULL : memory,
			  is_zero(version) ? NULL : version, &a))
		return FALSE;
	int grid = default_grid == NULL || default_grid == Py_None ? (!f->configs && !f->sets)
								   : PyObject_IsTrue(default_grid);
	if (grid < 0)
		return FALSE;
	f->gpu = g_strdup(gpu);
	f->opt = (CcaFleetOptions){
		.configs = (const char *const *)f->configs,
		.sets = (const char *const *)f->sets,
		.default_grid = grid,
		.pytorch_version = a.pytorch_version,
		.gpu = f->gpu,
		.memory_fraction = a.memory_fraction,
		.device_memory = a.device_memory,
		.calibration = fleet_calibration(),
	};
	GError *error = NULL;
	if (!cca_fleet_options_check(&f->opt, &error)) {
		g_autofree char *key = fleet_bad_key(f, error->message);
		raise_config_error(key, error->message);
		g_error_free(error);
		return FALSE;
	}
	return TRUE;
}

/* The file system path of O (str, bytes or os.PathLike) in *OUT
 * (g_free()); FALSE with a Python error. */
static gboolean
fs_path(PyObject *o, char **out)
{
	PyObject *b = NULL;
	if (!PyUnicode_FSConverter(o, &b))
		return FALSE;
	*out = g_strdup(PyBytes_AS_STRING(b));
	Py_DECREF(b);
	return TRUE;
}

/* Whether O is one path (str, bytes or os.PathLike), not a list of them. */
static gboolean
is_one_path(PyObject *o)
{
	return PyUnicode_Check(o) || PyBytes_Check(o) || PyObject_HasAttrString(o, "__fspath__");
}

/* The file system paths of O, one path or a sequence of paths (WHAT names
 * the argument in the TypeError otherwise): a new NULL-terminated array
 * (g_strfreev()), or NULL with a Python error. */
static char **
fs_paths(PyObject *o, const char *what)
{
	g_autofree char *message = g_strdup_printf("%s: a path or a list of paths", what);
	PyObject *fast = is_one_path(o) ? PyTuple_Pack(1, o) : PySequence_Fast(o, message);
	if (fast == NULL)
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
	char **paths = g_new0(char *, n + 1);
	gboolean ok = TRUE;
	for (Py_ssize_t i = 0; ok && i < n; i++)
		ok = fs_path(PySequence_Fast_GET_ITEM(fast, i), &paths[i]);
	Py_DECREF(fast);
	if (!ok)
		g_clear_pointer(&paths, g_strfreev);
	return paths;
}

/* Expands INPUTS (a path, or a sequence of paths: files, folders,
 * manifests) with cca_fleet_inputs() into JOBS. */
static gboolean
fleet_expand(PyObject *inputs, GPtrArray *jobs)
{
	g_auto(GStrv) paths = fs_paths(inputs, "inputs");
	if (paths == NULL)
		return FALSE;
	GError *error = NULL;
	gboolean ok;
	Py_BEGIN_ALLOW_THREADS;
	ok = cca_fleet_inputs((const char *const *)paths, g_strv_length(paths), jobs, &error);
	Py_END_ALLOW_THREADS;
	if (!ok) {
		raise_fleet_error(error);
		g_error_free(error);
	}
	return ok;
}

/* The job of the tuple O, (path, gpu or None, cap, fraction) as
 * fleet.jobs() makes them, checked as a manifest line is: ConfigError
 * "jobs[I]: ..." otherwise. */
static CcaFleetJob *
fleet_job_from_tuple(PyObject *o, Py_ssize_t index)
{
	const char *why = NULL;
	g_autofree char *gpu_why = NULL;
	PyObject *path = NULL, *gpu = Py_None, *cap = NULL, *fraction = NULL;
	if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 4)
		why = "a job is a tuple (path, gpu or None, cap, fraction) as fleet.jobs() "
		      "returns, or a path";
	else {
		path = PyTuple_GET_ITEM(o, 0);
		gpu = PyTuple_GET_ITEM(o, 1);
		cap = PyTuple_GET_ITEM(o, 2);
		fraction = PyTuple_GET_ITEM(o, 3);
	}
	CcaFleetJob *job = g_new0(CcaFleetJob, 1);
	if (!why && !fs_path(path, &job->path)) {
		PyErr_Clear();
		why = "its path must be a str, bytes or os.PathLike";
	}
	if (!why && gpu != Py_None) {
		const char *name = PyUnicode_Check(gpu) ? PyUnicode_AsUTF8(gpu) : NULL;
		GError *e = NULL;
		if (name == NULL) {
			PyErr_Clear();
			why = "its gpu must be a str or None";
		} else if (!cca_fit_gpu_preset_find(name, &e)) {
			gpu_why = g_strdup(e->message);
			why = gpu_why;
			g_error_free(e);
		} else {
			job->gpu = g_strdup(name);
		}
	}
	if (!why) {
		job->cap = PyLong_Check(cap) ? PyLong_AsUnsignedLongLong(cap) : 0;
		if (!PyLong_Check(cap) || PyErr_Occurred()) {
			PyErr_Clear();
			why = "its cap must be an int of bytes, 0 for none";
		}
	}
	if (!why) {
		job->fraction = PyFloat_AsDouble(fraction);
		if (job->fraction == -1.0 && PyErr_Occurred()) {
			PyErr_Clear();
			why = "its fraction must be a number in [0, 1], 0 for none";
		} else if (!(job->fraction >= 0 && job->fraction <= 1)) {
			why = "its fraction must be a number in [0, 1], 0 for none";
		} else if (job->cap && job->fraction > 0) {
			why = "give a cap or a fraction, not both";
		}
	}
	if (why) {
		g_autofree char *m = g_strdup_printf("jobs[%zd]: %s", index, why);
		raise_config_error("jobs", m);
		cca_fleet_job_free(job);
		return NULL;
	}
	return job;
}

/* The jobs of JOBS_OR_PATHS: each item a job tuple, or a path (file,
 * folder, manifest) expanded as `fleet run` expands its inputs. */
static GPtrArray *
fleet_jobs_from(PyObject *jobs_or_paths)
{
	GPtrArray *jobs = g_ptr_array_new_with_free_func((GDestroyNotify)cca_fleet_job_free);
	if (is_one_path(jobs_or_paths)) {
		if (!fleet_expand(jobs_or_paths, jobs))
			g_clear_pointer(&jobs, g_ptr_array_unref);
		return jobs;
	}
	PyObject *fast = PySequence_Fast(jobs_or_paths, "jobs: a list of jobs or paths");
	if (fast == NULL) {
		g_ptr_array_unref(jobs);
		return NULL;
	}
	for (Py_ssize_t i = 0; jobs && i < PySequence_Fast_GET_SIZE(fast); i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
		if (PyTuple_Check(item)) {
			CcaFleetJob *job = fleet_job_from_tuple(item, i);
			if (job)
				g_ptr_array_add(jobs, job);
			else
				g_clear_pointer(&jobs, g_ptr_array_unref);
		} else if (!fleet_expand(item, jobs)) {
			g_clear_pointer(&jobs, g_ptr_array_unref);
		}
	}
	Py_DECREF(fast);
	return jobs;
}

static PyObject *
fleet_jobs(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"inputs", NULL};
	PyObject *inputs;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:jobs", kwlist, &inputs))
		return NULL;
	g_autoptr(GPtrArray) jobs =
		g_ptr_array_new_with_free_func((GDestroyNotify)cca_fleet_job_free);
	if (!fleet_expand(inputs, jobs))
		return NULL;
	PyObject *l = PyList_New((Py_ssize_t)jobs->len);
	for (guint i = 0; l && i < jobs->len; i++) {
		const CcaFleetJob *j = g_ptr_array_index(jobs, i);
		PyObject *path = PyUnicode_DecodeFSDefault(j->path);
		PyObject *t = path ? Py_BuildValue("(Nz K d)", path, j->gpu,
						   (unsigned long long)j->cap, j->fraction)
				   : NULL;
		if (t == NULL)
			Py_CLEAR(l);
		else
			PyList_SET_ITEM(l, (Py_ssize_t)i, t);
	}
	return l;
}

#define FLEET_OPTION_NAMES                                                            \
	"configs", "sets", "default_grid", "gpu", "memory_fraction", "device_memory", \
		"pytorch_version"

static PyObject *
fleet_run(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"jobs", FLEET_OPTION_NAMES, NULL};
	PyObject *jobs_o, *configs = NULL, *sets = NULL, *grid = NULL, *fraction = NULL,
			  *memory = NULL, *version = NULL;
	const char *gpu = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOzOOO:run", kwlist, &jobs_o, &configs,
					 &sets, &grid, &gpu, &fraction, &memory, &version))
		return NULL;
	FleetArgs f = {0};
	if (!fleet_args_parse(configs, sets, grid, gpu, fraction, memory, version, &f)) {
		fleet_args_clear(&f);
		return NULL;
	}
	g_autoptr(GPtrArray) jobs = fleet_jobs_from(jobs_o);
	if (jobs == NULL) {
		fleet_args_clear(&f);
		return NULL;
	}
	GString *out = g_string_new(NULL);
	f.opt.cancel = &interrupted;
	interrupt_begin();
	Py_BEGIN_ALLOW_THREADS;
	/* Ctrl-C stops it between jobs, and a job's sweep between replays */
	for (guint i = 0; i < jobs->len && !interrupted; i++)
		cca_fleet_job_run(g_ptr_array_index(jobs, i), &f.opt, NULL, out);
	Py_END_ALLOW_THREADS;
	fleet_args_clear(&f);
	if (interrupt_end() < 0) {
		g_string_free(out, TRUE);
		return NULL;
	}
	PyObject *l = PyList_New(0);
	for (gsize pos = 0; l && pos < out->len;) {
		const char *line = out->str + pos;
		const char *nl = memchr(line, '\n', out->len - pos);
		gsize len = nl ? (gsize)(nl - line) : out->len - pos;
		PyObject *s = PyUnicode_DecodeUTF8(line, (Py_ssize_t)len, "surrogateescape");
		if (s == NULL || PyList_Append(l, s) < 0)
			Py_CLEAR(l);
		Py_XDECREF(s);
		pos += len + 1;
	}
	g_string_free(out, TRUE);
	return l;
}

static PyObject *
fleet_write(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"dir", "rows", "name", FLEET_OPTION_NAMES, NULL};
	PyObject *dir_o, *rows_o, *configs = NULL, *sets = NULL, *grid = NULL, *fraction = NULL,
				  *memory = NULL, *version = NULL;
	const char *name = NULL, *gpu = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|z$OOOzOOO:write", kwlist, &dir_o, &rows_o,
					 &name, &configs, &sets, &grid, &gpu, &fraction, &memory,
					 &version))
		return NULL;
	g_autofree char *dir = NULL;
	if (!fs_path(dir_o, &dir))
		return NULL;
	FleetArgs f = {0};
	if (!fleet_args_parse(configs, sets, grid, gpu, fraction, memory, version, &f)) {
		fleet_args_clear(&f);
		return NULL;
	}
	PyObject *fast =
		PyUnicode_Check(rows_o) ? NULL : PySequence_Fast(rows_o, "rows: a list of str");
	if (fast == NULL) {
		PyErr_Clear();
		raise_config_error("rows", "rows: must be a list of the str rows fleet.run() "
					   "returns");
		fleet_args_clear(&f);
		return NULL;
	}
	/* every row is checked before anything is written */
	GString *text = g_string_new(NULL);
	const char *why = NULL;
	Py_ssize_t bad = -1;
	GError *error = NULL;
	for (Py_ssize_t i = 0; !why && i < PySequence_Fast_GET_SIZE(fast); i++) {
		PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
		Py_ssize_t len;
		const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &len) : NULL;
		char *key = NULL;
		bad = i;
		if (s == NULL) {
			PyErr_Clear();
			why = "not a str";
		} else if (memchr(s, '\n', (size_t)len)) {
			why = "a row holds no newline";
		} else if (!(key = cca_fleet_row_key(s, (gsize)len, NULL, NULL, &error))) {
			why = error->message;
		} else {
			g_string_append_len(text, s, len);
			g_string_append_c(text, '\n');
		}
		g_free(key);
	}
	Py_DECREF(fast);
	if (why) {
		g_autofree char *m = g_strdup_printf("rows[%zd]: %s", bad, why);
		raise_config_error("rows", m);
		g_clear_error(&error);
		g_string_free(text, TRUE);
		fleet_args_clear(&f);
		return NULL;
	}
	g_autofree char *own = name ? g_strdup(name) : g_strdup_printf("py-%ld", (long)getpid());
	gboolean ok;
	Py_BEGIN_ALLOW_THREADS;
	ok = cca_fleet_append(dir, &f.opt, own, text->str, text->len, &error);
	Py_END_ALLOW_THREADS;
	g_string_free(text, TRUE);
	fleet_args_clear(&f);
	if (!ok) {
		if (g_str_has_prefix(error->message, "bad rows file name"))
			raise_config_error("name", error->message);
		else
			raise_fleet_error(error);
		g_error_free(error);
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyObject *
fleet_merge(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"dirs", "format", "wide", "allow_missing", NULL};
	PyObject *dirs_o;
	const char *format = "text";
	int wide = 0, allow_missing = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|sp$p:merge", kwlist, &dirs_o, &format,
					 &wide, &allow_missing))
		return NULL;
	bool text = strcmp(format, "text") == 0;
	void (*print)(CcaFleetMerge *, GString *) =
		strcmp(format, "json") == 0  ? cca_fleet_merge_print_json
		: strcmp(format, "csv") == 0 ? cca_fleet_merge_print_csv
					     : NULL;
	if (print == NULL && !text) {
		raise_config_error("format", "format: 'text', 'json' or 'csv'");
		return NULL;
	}
	g_auto(GStrv) dirs = fs_paths(dirs_o, "dirs");
	if (dirs == NULL)
		return NULL;
	GError *error = NULL;
	GString *out = g_string_new(NULL);
	gboolean ok = TRUE;
	CcaFleetMerge *merge = cca_fleet_merge_new();
	Py_BEGIN_ALLOW_THREADS;
	for (char **d = dirs; ok && *d; d++)
		ok = cca_fleet_merge_add_dir(merge, *d, &error);
	ok = ok && cca_fleet_merge_check(merge, &error);
	/* a shard that never ran, as `ccasim fleet merge` without --allow-missing */
	if (ok && !allow_missing) {
		g_autoptr(GPtrArray) missing = cca_fleet_merge_missing(merge);
		if (missing->len) {
			g_autoptr(GString) list = g_string_new(NULL);
			for (guint i = 0; i < missing->len; i++)
				g_string_append_printf(list, "%s%s", i ? ", " : "",
						       (const char *)g_ptr_array_index(missing, i));
			g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "missing shard%s %s: no rows file in the folders given; run "
				    "them, or merge anyway with allow_missing=True",
				    missing->len == 1 ? "" : "s", list->str);
			ok = FALSE;
		}
	}
	if (ok && text)
		cca_fleet_merge_print_text(merge, out, wide ? G_MAXUINT : CCA_TEXT_COLUMNS);
	else if (ok)
		print(merge, out);
	Py_END_ALLOW_THREADS;
	/* a RuntimeWarning for each line left out (as the CLI's warnings) */
	const CcaFleetSkipped *skipped = cca_fleet_merge_skipped(merge);
	guint shown = skipped->shown ? skipped->shown->len : 0;
	int warned = 0;
	for (guint i = 0; warned == 0 && i < shown; i++) {
		g_autofree char *line = cca_text_display(g_ptr_array_index(skipped->shown, i), -1,
							 CCA_TEXT_DISPLAY_MAX * 4);
		g_autofree char *msg = g_strdup_printf("%s; line skipped", line);
		warned = PyErr_WarnEx(PyExc_RuntimeWarning, msg, 1);
	}
	if (warned == 0 && skipped->count > shown) {
		g_autofree char *msg = g_strdup_printf("%" G_GUINT64_FORMAT
						       " more lines that are no fleet rows skipped",
						       skipped->count - shown);
		warned = PyErr_WarnEx(PyExc_RuntimeWarning, msg, 1);
	}
	cca_fleet_merge_free(merge);
	if (!ok || warned != 0) {
		if (!ok)
			raise_fleet_error(error);
		g_clear_error(&error);
		g_string_free(out, TRUE);
		return NULL;
	}
	PyObject *s = PyUnicode_DecodeUTF8(out->str, (Py_ssize_t)out->len, "surrogateescape");
	g_string_free(out, TRUE);
	return s;
}

#define FLEET_OPTIONS_DOC                                                                      \
	"Options (keywords), those of `ccasim fleet run`: configs (PYTORCH_CUDA_ALLOC_CONF\n"  \
	"strs, --config), sets ('KEY=V1,V2', --set), default_grid (None: sweep's default\n"    \
	"grid when neither configs nor sets is given; True adds it), gpu (a preset, the\n"     \
	"device of jobs that name none), memory_fraction (0: none), device_memory (bytes or\n" \
	"'80GiB', 0: none), pytorch_version ('2.11', 0: guessed per snapshot).  Raises\n"      \
	"ConfigError (.key) on a bad option."

static PyMethodDef fleet_methods[] = {
	{"jobs", (PyCFunction)(void (*)(void))fleet_jobs, METH_VARARGS | METH_KEYWORDS,
	 "jobs(inputs) -> list of (path, gpu or None, cap, fraction)\n\n"
	 "The jobs of `ccasim fleet run INPUTS`: snapshot files, folders (searched\n"
	 "recursively) and manifests (*.manifest, *.list: 'PATH [gpu=NAME] [cap=SIZE]\n"
	 "[fraction=F]' a line), sorted by path, each path once.  Plain tuples (cap in\n"
	 "bytes, 0: none; fraction 0: none), so Dask or Ray can ship them to workers.\n"
	 "Raises FileNotFoundError for a missing input, ccasim.Error for a bad manifest."},
	{"run", (PyCFunction)(void (*)(void))fleet_run, METH_VARARGS | METH_KEYWORDS,
	 "run(jobs, *, configs=(), sets=(), default_grid=None, gpu=None, memory_fraction=0.0,\n"
	 "    device_memory=0, pytorch_version=0) -> list of str\n\n"
	 "Replays each job (a tuple of jobs(), or a path: file, folder or manifest) under\n"
	 "the grid on its own device and returns its rows: the JSON lines `ccasim fleet\n"
	 "run` writes, without '\\n' (json.loads() reads each).  A snapshot that cannot be\n"
	 "read gives one error row.  One job after the other, the GIL released.\n\n" FLEET_OPTIONS_DOC},
	{"write", (PyCFunction)(void (*)(void))fleet_write, METH_VARARGS | METH_KEYWORDS,
	 "write(dir, rows, name=None, *, <the options of run()>) -> None\n\n"
	 "Appends ROWS (of run(), with the same options) to DIR/rows.NAME.jsonl (NAME:\n"
	 "letters, digits, - and _; default py-PID) after writing or checking\n"
	 "DIR/fleet.json as `fleet run` does, so `ccasim fleet merge` and merge() read DIR.\n"
	 "Every row is checked first (ConfigError 'rows' naming the bad one, nothing\n"
	 "written); ccasim.Error when DIR holds a run with other options, OSError on I/O."},
	{"merge", (PyCFunction)(void (*)(void))fleet_merge, METH_VARARGS | METH_KEYWORDS,
	 "merge(dirs, format='text', wide=False, *, allow_missing=False) -> str\n\n"
	 "`ccasim fleet merge DIRS` (format 'text'; wide=True: --wide), `--json` ('json')\n"
	 "or `--csv` ('csv'): the report on every row of the run folders, each row once.\n"
	 "ccasim.Error when they hold no row yet (or a fleet.json differs) or a shard left\n"
	 "no rows file (allow_missing=True: --allow-missing), OSError on I/O; a\n"
	 "RuntimeWarning for each line that is no fleet row (left out, counted)."},
	{NULL},
};

static struct PyModuleDef fleet_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "ccasim.fleet",
	.m_doc = "ccasim.fleet: many snapshots x a grid of settings (doc/fleet.md), over the\n"
		 "engines teams run (Dask, Ray):\n\n"
		 "    import ccasim.fleet\n"
		 "    jobs = ccasim.fleet.jobs(['/dumps', 'jobs.manifest'])\n"
		 "    rows = [r for job in jobs for r in ccasim.fleet.run([job], sets=grid)]\n"
		 "    ccasim.fleet.write('/runs/a', rows, sets=grid)\n"
		 "    print(ccasim.fleet.merge(['/runs/a']))\n\n"
		 "Rows and reports are those of `ccasim fleet run` and `fleet merge`.",
	.m_size = -1,
	.m_methods = fleet_methods,
};

/* ------------------------------------------------------------ module */

static PyObject *
ccasim_load(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"source", "name", NULL};
	PyObject *source;
	const char *name_arg = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|z:load", kwlist, &source, &name_arg))
		return NULL;
	CcaSnapshot *snap = NULL;
	char *name = NULL;
	GError *error = NULL;
	gboolean from_path = FALSE;
	if (PyDict_Check(source) || PyList_Check(source)) {
		name = g_strdup(name_arg ? name_arg : "<dict>");
		snap = snapshot_from_object(source, name);
		if (!snap) {
			g_free(name);
			return NULL;
		}
	} else if (PyBytes_Check(source) || PyByteArray_Check(source) ||
		   PyObject_CheckBuffer(source)) {
		Py_buffer view;
		if (PyObject_GetBuffer(source, &view, PyBUF_SIMPLE) < 0)
			return NULL;
		name = g_strdup(name_arg ? name_arg : "<bytes>");
		Py_BEGIN_ALLOW_THREADS;
		snap = cca_snapshot_load_memory(view.buf, (size_t)view.len, name, &error);
		Py_END_ALLOW_THREADS;
		PyBuffer_Release(&view);
	} else {
		PyObject *path = NULL;
		if (!PyUnicode_FSConverter(source, &path)) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError,
				     "load(): source must be a path, bytes, or the dict "
				     "torch.cuda.memory._snapshot() returns, not %.64s",
				     Py_TYPE(source)->tp_name);
			return NULL;
		}
		name = g_strdup(PyBytes_AS_STRING(path));
		Py_DECREF(path);
		from_path = TRUE;
		Py_BEGIN_ALLOW_THREADS;
		snap = cca_snapshot_load(name, &error);
		Py_END_ALLOW_THREADS;
	}
	if (!snap) {
		if (!from_path || !raise_file_error(name, error))
			raise_trace_error(name, error);
		g_clear_error(&error);
		g_free(name);
		return NULL;
	}
	Trace *t = PyObject_New(Trace, &trace_type);
	if (t == NULL) {
		cca_snapshot_free(snap);
		g_free(name);
		return NULL;
	}
	t->snap = snap;
	t->name = name;
	return (PyObject *)t;
}

static PyObject *
ccasim_gpu_presets(PyObject *module, PyObject *unused)
{
	guint n;
	const CcaGpuPreset *p = cca_fit_gpu_presets(&n);
	PyObject *l = PyList_New(0);
	for (guint i = 0; l && i < n; i++) {
		PyObject *d = Py_BuildValue("{s:s,s:s,s:K,s:s,s:s}", "name", p[i].name, "aliases",
					    p[i].aliases ? p[i].aliases : "", "total_memory",
					    (unsigned long long)p[i].total_memory, "kind",
					    p[i].kind, "source", p[i].source);
		if (!d || PyList_Append(l, d) < 0)
			Py_CLEAR(l);
		Py_XDECREF(d);
	}
	return l;
}

static PyMethodDef ccasim_methods[] = {
	{"load", (PyCFunction)(void (*)(void))ccasim_load, METH_VARARGS | METH_KEYWORDS,
	 "load(source, name=None) -> Trace\n\n"
	 "Loads a PyTorch memory snapshot: a path (pickle or ccasim msgpack trace, plain,\n"
	 "xz or gzip), bytes of one, or the dict torch.cuda.memory._snapshot() returns\n"
	 "(walked in C, nothing unpickled or executed).  name replaces the path in\n"
	 "messages.  Raises TraceError (with .file and .offset) on bad input."},
	{"gpu_presets", ccasim_gpu_presets, METH_NOARGS,
	 "gpu_presets() -> list of dict: the GPUs fit(gpu=...) and sweep(gpu=...) know."},
	{NULL},
};

static struct PyModuleDef ccasim_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "ccasim",
	.m_doc = "ccasim: PyTorch's CUDA caching allocator, simulated.\n\n"
		 "    import ccasim\n"
		 "    trace = ccasim.load('snapshot.pickle')   # or the dict of _snapshot()\n"
		 "    print(trace.replay(config='expandable_segments:True').peak_reserved)\n\n"
		 "Every result equals what the ccasim CLI prints with --json for the same call.",
	.m_size = -1,
	.m_methods = ccasim_methods,
};

/* The module's entry point, the one symbol it exports. */
PyMODINIT_FUNC PyInit_ccasim(void);

PyMODINIT_FUNC
PyInit_ccasim(void)
{
	if (PyType_Ready(&column_type) < 0 || PyType_Ready(&replay_type) < 0 ||
	    PyType_Ready(&trace_type) < 0 || !timeline_class_make())
		return NULL;
	PyObject *m = PyModule_Create(&ccasim_module);
	if (m == NULL)
		return NULL;
	ccasim_error = PyErr_NewExceptionWithDoc("ccasim.Error", "Base class of ccasim's errors.",
						 PyExc_ValueError, NULL);
	trace_error = PyErr_NewExceptionWithDoc(
		"ccasim.TraceError",
		"A trace or snapshot that cannot be read: .file names it, .offset is the byte "
		"offset of the problem (None when there is none, as for a dict).",
		ccasim_error, NULL);
	config_error = PyErr_NewExceptionWithDoc(
		"ccasim.ConfigError",
		"A bad setting or argument: .key names the allocator key or argument at fault "
		"(None when the settings conflict as a whole).",
		ccasim_error, NULL);
	if (!ccasim_error || !trace_error || !config_error ||
	    PyModule_AddObjectRef(m, "Error", ccasim_error) < 0 ||
	    PyModule_AddObjectRef(m, "TraceError", trace_error) < 0 ||
	    PyModule_AddObjectRef(m, "ConfigError", config_error) < 0 ||
	    PyModule_AddObjectRef(m, "Trace", (PyObject *)&trace_type) < 0 ||
	    PyModule_AddObjectRef(m, "Replay", (PyObject *)&replay_type) < 0 ||
	    PyModule_AddObjectRef(m, "Column", (PyObject *)&column_type) < 0 ||
	    PyModule_AddObjectRef(m, "Timeline", timeline_class) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", PACKAGE_VERSION) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	/* ccasim.fleet: an attribute, and in sys.modules so that `import
	 * ccasim.fleet` finds it (ccasim is one file, not a package) */
	PyObject *fleet = PyModule_Create(&fleet_module);
	if (fleet == NULL || PyModule_AddObjectRef(m, "fleet", fleet) < 0 ||
	    PyDict_SetItemString(PyImport_GetModuleDict(), "ccasim.fleet", fleet) < 0) {
		Py_XDECREF(fleet);
		Py_DECREF(m);
		return NULL;
	}
	Py_DECREF(fleet);
	return m;
}
