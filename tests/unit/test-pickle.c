/* test-pickle.c - the safe unpickler (sim/read/pickle.c).
 *
 * Hand-made byte strings check every supported opcode; the expected values
 * are what CPython's pickle.loads() returns for the same bytes, printed
 * with repr() (checked with: python3 -c "import pickle;
 * print(repr(pickle.loads(b'...')))").  The three real samples are
 * compared with Python's repr() of pickle.load(), stored in tests/data by
 * tests/data/gen_fixtures.py.  Hostile and broken inputs live in
 * tests/data/bad/ (also the fuzz seed corpus).
 */
#include "config.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "input.h"
#include "pickle.h"
#include "snapshot.h"
#include "snapshot_load.h"
#include "testutil.h"

/* ------------------------------------------------------------ helpers */

static CcaPickle *
parse_bytes(const char *bytes, size_t len, GError **error)
{
	return cca_pickle_parse((const unsigned char *)bytes, len, "test", error);
}

static char *
repr_of(const char *bytes, size_t len)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, len, &error);
	g_assert_no_error(error);
	g_assert_nonnull(pickle);
	return cca_pickle_repr(cca_pickle_root(pickle), 100);
}

/* Parses the file tests/data/NAME (no decompression) into *PICKLE,
 * keeping its bytes in *INPUT. */
static CcaPickle *
parse_data_file(const char *name, CcaInput *input, GError **error)
{
	g_autofree char *path = cca_test_data_path(name);
	if (!cca_input_open(input, path, error))
		return NULL;
	return cca_pickle_parse(input->data, input->len, path, error);
}

/* ------------------------------------------------------------ opcodes */

typedef struct {
	const char *name;
	const char *bytes;
	size_t len;
	const char *repr; /* Python's repr(pickle.loads(bytes)) */
} OpCase;

#define OP_CASE(name, bytes, repr)                   \
	{                                            \
		name, bytes, sizeof(bytes) - 1, repr \
	}

static const OpCase op_cases[] = {
	OP_CASE("none", "\x80\x04N.", "None"),
	OP_CASE("newtrue", "\x80\x04\x88.", "True"),
	OP_CASE("newfalse", "\x80\x04\x89.", "False"),
	OP_CASE("binint1", "\x80\x04K\xff.", "255"),
	OP_CASE("binint2", "\x80\x04M\x00\x01.", "256"),
	OP_CASE("binint-negative", "\x80\x04J\xff\xff\xff\xff.", "-1"),
	OP_CASE("binint-max", "\x80\x04J\xff\xff\xff\x7f.", "2147483647"),
	OP_CASE("long4", "\x80\x04\x8b\x02\x00\x00\x00\x00\x01.", "256"),
	OP_CASE("long4-zero", "\x80\x04\x8b\x00\x00\x00\x00.", "0"),
	OP_CASE("binfloat", "\x80\x04G\x3f\xe0\x00\x00\x00\x00\x00\x00.", "0.5"),
	OP_CASE("binfloat-negative", "\x80\x04G\xc0\x00\x00\x00\x00\x00\x00\x00.", "-2.0"),
	OP_CASE("binfloat-tenth", "\x80\x04G\x3f\xb9\x99\x99\x99\x99\x99\x9a.", "0.1"),
	OP_CASE("short-binunicode",
		"\x80\x04\x8c\x03"
		"abc.",
		"'abc'"),
	OP_CASE("short-binunicode-utf8", "\x80\x04\x8c\x02\xc3\xa9.", "'\xc3\xa9'"),
	OP_CASE("short-binunicode-quote",
		"\x80\x04\x8c\x04"
		"it's.",
		"\"it's\""),
	OP_CASE("binunicode",
		"\x80\x04X\x02\x00\x00\x00"
		"hi.",
		"'hi'"),
	OP_CASE("binunicode8",
		"\x80\x04\x8d\x01\x00\x00\x00\x00\x00\x00\x00"
		"x.",
		"'x'"),
	OP_CASE("empty-dict", "\x80\x04}.", "{}"),
	OP_CASE("setitem",
		"\x80\x04}\x8c\x01"
		"aK\x01s.",
		"{'a': 1}"),
	OP_CASE("setitems",
		"\x80\x04}(\x8c\x01"
		"aK\x01\x8c\x01"
		"bK\x02u.",
		"{'a': 1, 'b': 2}"),
	OP_CASE("setitems-empty", "\x80\x04}(u.", "{}"),
	OP_CASE("dict",
		"\x80\x04(\x8c\x01"
		"aK\x01"
		"d.",
		"{'a': 1}"),
	OP_CASE("empty-list", "\x80\x04].", "[]"),
	OP_CASE("append",
		"\x80\x04]K\x01"
		"a.",
		"[1]"),
	OP_CASE("appends",
		"\x80\x04](K\x01K\x02"
		"e.",
		"[1, 2]"),
	OP_CASE("appends-batches",
		"\x80\x04](K\x01"
		"e(K\x02K\x03"
		"e.",
		"[1, 2, 3]"),
	OP_CASE("list", "\x80\x04(K\x01K\x02l.", "[1, 2]"),
	OP_CASE("empty-tuple", "\x80\x04).", "()"),
	OP_CASE("tuple1", "\x80\x04K\x01\x85.", "(1,)"),
	OP_CASE("tuple2", "\x80\x04K\x01K\x02\x86.", "(1, 2)"),
	OP_CASE("tuple3", "\x80\x04K\x01K\x02K\x03\x87.", "(1, 2, 3)"),
	OP_CASE("tuple", "\x80\x04(K\x01K\x02K\x03K\x04t.", "(1, 2, 3, 4)"),
	OP_CASE("tuple-empty", "\x80\x04(t.", "()"),
	OP_CASE("pop",
		"\x80\x04K\x01K\x02"
		"0.",
		"1"),
	OP_CASE("pop-drops-mark", "\x80\x04K\x01(0.", "1"),
	OP_CASE("pop-mark",
		"\x80\x04K\x01(K\x02K\x03"
		"1.",
		"1"),
	OP_CASE("memoize-binget",
		"\x80\x04\x8c\x01"
		"x\x94h\x00\x86.",
		"('x', 'x')"),
	OP_CASE("binput-binget",
		"\x80\x02X\x01\x00\x00\x00"
		"yq\x07h\x07\x86.",
		"('y', 'y')"),
	OP_CASE("long-binput-long-binget", "\x80\x02K\x05r\x00\x01\x00\x00j\x00\x01\x00\x00\x86.",
		"(5, 5)"),
	OP_CASE("frame", "\x80\x04\x95\x03\x00\x00\x00\x00\x00\x00\x00K\x07.", "7"),
	OP_CASE("proto2", "\x80\x02N.", "None"),
	OP_CASE("proto3", "\x80\x03N.", "None"),
	OP_CASE("proto5", "\x80\x05N.", "None"),
	OP_CASE("proto-repeated", "\x80\x04\x80\x04K\x01.", "1"),
	OP_CASE("restore-type-tag",
		"\x80\x02"
		"ctorch.jit._pickle\nrestore_type_tag\nq\x00]q\x01(K\x01K\x02"
		"eX\x09\x00\x00\x00List[int]q\x02\x86q\x03R.",
		"[1, 2]"),
	OP_CASE("nested",
		"\x80\x04}(\x8c\x01"
		"a](K\x01\x8c\x01"
		"bN\x88\x89"
		"eu.",
		"{'a': [1, 'b', None, True, False]}"),
	OP_CASE("bytes-after-stop-ignored", "\x80\x04K\x01.garbage", "1"),
};

static void
test_op(gconstpointer data)
{
	const OpCase *c = data;
	g_autofree char *repr = repr_of(c->bytes, c->len);
	g_assert_cmpstr(repr, ==, c->repr);
}

/* ------------------------------------------------------------ LONG1 widths */

typedef struct {
	const char *name;
	const char *bytes;
	size_t len;
	CcaPickleType type;
	const char *value; /* Python: int.from_bytes(b, 'little', signed=True) */
} LongCase;

#define LONG_CASE(name, bytes, type, value)                 \
	{                                                   \
		name, bytes, sizeof(bytes) - 1, type, value \
	}

/* Encodings as CPython 3.11 pickle.dumps(v, protocol=4) writes them
 * (doc/trace-format.md, "Integers"), plus the 9-byte forms of -2^63 and
 * 2^64-1 (valid, not minimal). */
static const LongCase long_cases[] = {
	LONG_CASE("width-0", "\x80\x04\x8a\x00.", CCA_PICKLE_INT, "0"),
	LONG_CASE("width-1", "\x80\x04\x8a\x01\xff.", CCA_PICKLE_INT, "-1"),
	LONG_CASE("width-2", "\x80\x04\x8a\x02\x00\x80.", CCA_PICKLE_INT, "-32768"),
	LONG_CASE("width-3", "\x80\x04\x8a\x03\xff\xff\x7f.", CCA_PICKLE_INT, "8388607"),
	LONG_CASE("width-4", "\x80\x04\x8a\x04\x00\x00\x00\x80.", CCA_PICKLE_INT, "-2147483648"),
	LONG_CASE("width-5", "\x80\x04\x8a\x05\x00\x00\x00\x80\x00.", CCA_PICKLE_INT, "2147483648"),
	LONG_CASE("width-6", "\x80\x04\x8a\x06\x00\x00\x00\x2c\x3a\x7f.", CCA_PICKLE_INT,
		  "139887823028224"),
	LONG_CASE("width-7", "\x80\x04\x8a\x07\xbe\x9b\x53\x78\x9e\x08\x06.", CCA_PICKLE_INT,
		  "1698326576864190"),
	LONG_CASE("width-8-max", "\x80\x04\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.",
		  CCA_PICKLE_INT, "9223372036854775807"),
	LONG_CASE("width-8-min", "\x80\x04\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80.",
		  CCA_PICKLE_INT, "-9223372036854775808"),
	LONG_CASE("width-9-2^63", "\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.",
		  CCA_PICKLE_UINT, "9223372036854775808"),
	LONG_CASE("width-9-xpu-pointer", "\x80\x04\x8a\x09\x00\x00\xe0\x54\xab\xea\xff\xff\x00.",
		  CCA_PICKLE_UINT, "18446720620317114368"),
	LONG_CASE("width-9-2^64-1", "\x80\x04\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00.",
		  CCA_PICKLE_UINT, "18446744073709551615"),
	LONG_CASE("width-9-min", "\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\xff.",
		  CCA_PICKLE_INT, "-9223372036854775808"),
	LONG_CASE("width-9-small", "\x80\x04\x8a\x09\x05\x00\x00\x00\x00\x00\x00\x00\x00.",
		  CCA_PICKLE_INT, "5"),
};

static void
test_long(gconstpointer data)
{
	const LongCase *c = data;
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(c->bytes, c->len, &error);
	g_assert_no_error(error);
	const CcaPickleValue *v = cca_pickle_root(pickle);
	g_assert_cmpint(v->type, ==, c->type);
	g_autofree char *repr = cca_pickle_repr(v, 1);
	g_assert_cmpstr(repr, ==, c->value);
}

/* 9 bytes whose last is neither a sign byte nor consistent: refused. */
static void
test_long_too_big(void)
{
	static const char bytes[] = "\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.";
	static const char minus[] = "\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\xff.";
	g_autoptr(GError) error = NULL;
	g_assert_null(parse_bytes(bytes, sizeof bytes - 1, &error));
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT);
	g_assert_nonnull(strstr(error->message, "offset 2: integer of 9 bytes"));
	g_clear_error(&error);
	/* -2^64: sign byte 0xff over a positive 64-bit pattern */
	g_assert_null(parse_bytes(minus, sizeof minus - 1, &error));
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT);
}

/* ------------------------------------------------------------ memo and dicts */

static void
test_memo_shared_node(void)
{
	/* [L, L] where L = [] memoized: both items are the same node */
	static const char bytes[] = "\x80\x04]\x94h\x00\x86.";
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, sizeof bytes - 1, &error);
	g_assert_no_error(error);
	const CcaPickleValue *t = cca_pickle_root(pickle);
	g_assert_cmpint(t->type, ==, CCA_PICKLE_TUPLE);
	g_assert_true(t->items[0] == t->items[1]);
}

static void
test_memo_shared_is_filled_later(void)
{
	/* L memoized while empty, then filled: a later BINGET sees the items */
	static const char bytes[] = "\x80\x04(]\x94(K\x01K\x02"
				    "eh\x00t.";
	g_autofree char *repr = repr_of(bytes, sizeof bytes - 1);
	g_assert_cmpstr(repr, ==, "([1, 2], [1, 2])");
}

static void
test_memo_sample_nodes_shared(void)
{
	/* snap_default: every trace entry's 'action' key is one node */
	CcaInput input;
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_data_file("../../traces/pytorch-2.11/samples/"
						      "snap_default_2.11.pickle",
						      &input, &error);
	g_assert_no_error(error);
	CcaPickleKey k_traces = CCA_PICKLE_KEY("device_traces");
	const CcaPickleValue *traces = cca_pickle_dict_get(cca_pickle_root(pickle), &k_traces);
	g_assert_nonnull(traces);
	const CcaPickleValue *dev0 = traces->items[0];
	g_assert_cmpuint(dev0->len, ==, 44);
	const CcaPickleValue *key0 = dev0->items[0]->items[0];
	for (uint32_t i = 1; i < dev0->len; i++)
		g_assert_true(dev0->items[i]->items[0] == key0);
	cca_input_clear(&input);
}

static void
test_dict_later_key_wins(void)
{
	static const char bytes[] = "\x80\x04}(\x8c\x01"
				    "aK\x01\x8c\x01"
				    "aK\x02u.";
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, sizeof bytes - 1, &error);
	g_assert_no_error(error);
	CcaPickleKey key = CCA_PICKLE_KEY("a");
	const CcaPickleValue *v = cca_pickle_dict_get(cca_pickle_root(pickle), &key);
	g_assert_nonnull(v);
	g_assert_cmpint(v->i, ==, 2);
	CcaPickleKey missing = CCA_PICKLE_KEY("b");
	g_assert_null(cca_pickle_dict_get(cca_pickle_root(pickle), &missing));
}

static void
test_dict_key_cache(void)
{
	/* two dicts sharing the memoized key 'k': the second lookup hits the
	 * cached node */
	static const char bytes[] = "\x80\x04}\x8c\x01"
				    "k\x94K\x01s}h\x00K\x02s\x86.";
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, sizeof bytes - 1, &error);
	g_assert_no_error(error);
	const CcaPickleValue *t = cca_pickle_root(pickle);
	CcaPickleKey key = CCA_PICKLE_KEY("k");
	g_assert_cmpint(cca_pickle_dict_get(t->items[0], &key)->i, ==, 1);
	g_assert_true(key.hit == t->items[0]->items[0]);
	g_assert_cmpint(cca_pickle_dict_get(t->items[1], &key)->i, ==, 2);
	g_assert_null(cca_pickle_dict_get(t, &key)); /* not a dict */
}

static void
test_offset_of_containers(void)
{
	static const char bytes[] = "\x80\x04](}K\x01\x85"
				    "e.";
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, sizeof bytes - 1, &error);
	g_assert_no_error(error);
	const CcaPickleValue *list = cca_pickle_root(pickle);
	g_assert_cmpuint(cca_pickle_offset(list), ==, 2);
	g_assert_cmpuint(cca_pickle_offset(list->items[0]), ==, 4);
	g_assert_cmpuint(cca_pickle_offset(list->items[1]), ==, 7); /* TUPLE1 */
	g_assert_cmpuint(cca_pickle_offset(list->items[1]->items[0]), ==, (size_t)-1);
	g_assert_cmpint(cca_pickle_protocol(pickle), ==, 4);
}

/* ------------------------------------------------------------ real samples */

static void
test_sample(gconstpointer data)
{
	const char *name = data;
	g_autofree char *pickle_name = g_strdup_printf("pytorch-2.11/samples/%s.pickle", name);
	g_autofree char *repr_name = g_strdup_printf("%s.repr", name);
	g_autofree char *path = cca_test_trace_path(pickle_name);
	g_autofree char *repr_path = cca_test_data_path(repr_name);
	g_autofree char *expected = NULL;
	g_autoptr(GError) error = NULL;
	CcaInput input;

	g_assert_true(g_file_get_contents(repr_path, &expected, NULL, &error));
	g_strchomp(expected);
	g_assert_true(cca_input_open(&input, path, &error));
	g_autoptr(CcaPickle) pickle = cca_pickle_parse(input.data, input.len, path, &error);
	g_assert_no_error(error);
	g_autofree char *repr = cca_pickle_repr(cca_pickle_root(pickle), 100);
	g_assert_cmpstr(repr, ==, expected);
	cca_input_clear(&input);
}

/* ------------------------------------------------------------ refused inputs */

typedef struct {
	const char *file; /* under tests/data/bad/ */
	int code;
	const char *message; /* expected after "PATH: " */
} BadCase;

static const BadCase bad_cases[] = {
	{"global-os-system.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 2: pickle opcode GLOBAL (0x63) is not allowed: snapshots never execute code "
	 "(os.system)"},
	{"stack-global-os-system.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 16: pickle opcode STACK_GLOBAL (0x93) is not allowed: snapshots never execute code"},
	{"build.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 6: pickle opcode BUILD (0x62) is not allowed: snapshots never execute code"},
	{"newobj.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 6: pickle opcode NEWOBJ (0x81) is not allowed: snapshots never execute code"},
	{"newobj-ex.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 5: pickle opcode NEWOBJ_EX (0x92)"},
	{"reduce-list.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 6: pickle opcode REDUCE (0x52)"},
	{"inst.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 3: pickle opcode INST (0x69)"},
	{"obj.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 4: pickle opcode OBJ (0x6f)"},
	{"persid.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 2: pickle opcode PERSID (0x50)"},
	{"binpersid.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 4: pickle opcode BINPERSID (0x51)"},
	{"ext1.pickle", CCA_INPUT_ERROR_FORBIDDEN, "offset 2: pickle opcode EXT1 (0x82)"},
	{"bytearray8.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 2: pickle opcode BYTEARRAY8 (0x96)"},
	{"next-buffer.pickle", CCA_INPUT_ERROR_FORBIDDEN,
	 "offset 2: pickle opcode NEXT_BUFFER (0x97)"},
	{"binbytes.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 2: pickle opcode SHORT_BINBYTES (0x43) is not supported"},
	{"unknown-opcode.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 2: unknown pickle opcode 0xff"},
	{"protocol-1.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 0: unsupported pickle protocol 1"},
	{"protocol-6.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 0: unsupported pickle protocol 6"},
	{"no-proto.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 0: not a pickle of protocol 2 or later (first byte 0x4e)"},
	{"empty", CCA_INPUT_ERROR_TRUNCATED, "offset 0: empty pickle"},
	{"missing-stop.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 4: truncated pickle: no STOP opcode"},
	{"truncated-half.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 3475: truncated pickle: no STOP opcode"},
	{"stop-not-empty.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 6: STOP with 2 values"},
	{"stop-open-mark.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 5: STOP with 1 values and 1 marks"},
	{"stack-underflow.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 2: pickle stack underflow: APPEND needs 2 values"},
	{"appends-no-mark.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 5: APPENDS (0x65) without a MARK"},
	{"setitems-odd.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 6: SETITEMS with an odd number"},
	{"append-to-dict.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 5: APPEND onto a dict, expected a list"},
	{"mark-crossed.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 6: pickle stack underflow: APPEND needs 2 values above the mark, 1 there"},
	{"memo-empty.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 2: memo index 5 is empty"},
	{"memo-huge-index.pickle", CCA_INPUT_ERROR_LIMIT, "offset 3: memo index 4294967295"},
	{"global-no-newline.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 2: truncated pickle: GLOBAL argument has no newline"},
	{"reduce-bad-args.pickle", CCA_INPUT_ERROR_CORRUPT,
	 "offset 40: REDUCE of restore_type_tag needs a tuple of arguments"},
	{"binunicode-4g.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 2: truncated pickle: BINUNICODE needs 4294967295 bytes, 4 remain"},
	{"binunicode8-huge.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 2: truncated pickle: BINUNICODE8 needs 18446744073709551615 bytes, 4 remain"},
	{"long4-huge.pickle", CCA_INPUT_ERROR_TRUNCATED,
	 "offset 2: truncated pickle: LONG4 needs 4294967295 bytes, 2 remain"},
	{"long1-too-big.pickle", CCA_INPUT_ERROR_LIMIT, "offset 2: integer of 9 bytes"},
	{"long4-too-big.pickle", CCA_INPUT_ERROR_LIMIT, "offset 2: integer of 10 bytes"},
	{"deep-marks.pickle", CCA_INPUT_ERROR_LIMIT, "offset 10002: more than 10000 nested MARKs"},
	{"random-after-header.pickle", CCA_INPUT_ERROR_CORRUPT, "offset 2: unknown pickle opcode"},
	{"not-pickle.txt", CCA_INPUT_ERROR_CORRUPT,
	 "offset 0: not a pickle of protocol 2 or later (first byte 0x68)"},
};

static void
test_refused(gconstpointer data)
{
	const BadCase *c = data;
	g_autofree char *name = g_build_filename("bad", c->file, NULL);
	g_autofree char *path = cca_test_data_path(name);
	g_autoptr(GError) error = NULL;
	CcaInput input;
	g_assert_true(cca_input_open(&input, path, &error));
	CcaPickle *pickle = cca_pickle_parse(input.data, input.len, path, &error);
	g_assert_null(pickle);
	g_assert_error(error, CCA_INPUT_ERROR, c->code);
	g_autofree char *expected = g_strdup_printf("%s: %s", path, c->message);
	if (!g_str_has_prefix(error->message, expected))
		g_error("got \"%s\", expected it to start with \"%s\"", error->message, expected);
	g_assert_null(strchr(error->message, '\n'));
	cca_input_clear(&input);
}

/* The os.system pickle names the opcode and its offset, and runs nothing:
 * the file its command would create does not appear. */
static void
test_refused_runs_nothing(void)
{
	static const char *const files[] = {"global-os-system.pickle",
					    "stack-global-os-system.pickle"};
	const char *victim = "/tmp/ccasim-pickle-pwned";
	g_unlink(victim);
	for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
		g_autofree char *name = g_build_filename("bad", files[i], NULL);
		g_autofree char *path = cca_test_data_path(name);
		g_autoptr(GError) error = NULL;
		g_assert_null(cca_snapshot_load(path, &error));
		g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_FORBIDDEN);
		g_assert_nonnull(strstr(error->message, "GLOBAL (0x"));
		g_assert_nonnull(strstr(error->message, "snapshots never execute code"));
		g_assert_false(g_file_test(victim, G_FILE_TEST_EXISTS));
	}
}

/* Every prefix of a real sample fails cleanly (one line, no crash). */
static void
test_truncated_prefixes(void)
{
	static const char *const samples[] = {"snap_default_2.11.pickle",
					      "snap_expandable_2.11.pickle",
					      "snap_state_2.11.pickle"};
	for (size_t s = 0; s < G_N_ELEMENTS(samples); s++) {
		g_autofree char *rel = g_strdup_printf("pytorch-2.11/samples/%s", samples[s]);
		g_autofree char *path = cca_test_trace_path(rel);
		g_autofree char *bytes = NULL;
		gsize len;
		g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
		for (gsize n = 0; n < len; n++) {
			g_autoptr(GError) error = NULL;
			CcaPickle *pickle =
				cca_pickle_parse((const unsigned char *)bytes, n, path, &error);
			g_assert_null(pickle);
			g_assert_nonnull(error);
			g_assert_null(strchr(error->message, '\n'));
			g_clear_error(&error);
			CcaSnapshot *snap = cca_snapshot_pickle_load((const unsigned char *)bytes,
								     n, path, &error);
			g_assert_null(snap);
			g_assert_nonnull(error);
		}
	}
}

/* Opcodes, with a bias towards the supported ones and small arguments, so
 * that random programs get past the first few bytes. */
static void
random_program(GRand *rand, GByteArray *out)
{
	static const guint8 ops[] = {'N',  0x88, 0x89, 'K', 'M',  'J', 0x8a, 'G', 0x8c,
				     'X',  '}',	 ']',  ')', '(',  's', 'u',  'a', 'e',
				     0x85, 0x86, 0x87, 't', 'l',  'd', '0',  '1', 0x94,
				     'q',  'h',	 'j',  'r', 0x95, 'R', 'c',  '.', 0x8b};
	g_byte_array_set_size(out, 0);
	g_byte_array_append(out, (const guint8 *)"\x80\x04", 2);
	int n = g_rand_int_range(rand, 0, 80);
	for (int i = 0; i < n; i++) {
		guint8 op = g_rand_int_range(rand, 0, 10) == 0
				    ? (guint8)g_rand_int_range(rand, 0, 256)
				    : ops[g_rand_int_range(rand, 0, G_N_ELEMENTS(ops))];
		g_byte_array_append(out, &op, 1);
		int args = g_rand_int_range(rand, 0, 3);
		for (int j = 0; j < args; j++) {
			guint8 arg = (guint8)g_rand_int_range(rand, 0, 8);
			g_byte_array_append(out, &arg, 1);
		}
	}
}

/* A consumer that claims every empty list and checks what it is given. */
typedef struct {
	int batches;
	int items;
	GString *seen;
	gboolean fail;
} TestConsumer;

static gboolean
test_consumer_claim(void *user, const CcaPickleStack *stack)
{
	g_assert_cmpuint(stack->depth, >, 0);
	g_assert_cmpint(stack->stack[stack->depth - 1]->type, ==, CCA_PICKLE_LIST);
	return TRUE;
}

static gboolean
test_consumer_consume(void *user, const CcaPickleValue *list, CcaPickleValue *const *items,
		      size_t n, const CcaPickleTransient *transient, GError **error)
{
	TestConsumer *tc = user;
	tc->batches++;
	tc->items += (int)n;
	if (tc->seen != NULL) {
		for (size_t i = 0; i < n; i++) {
			g_autofree char *r = cca_pickle_repr(items[i], 10);
			g_string_append_printf(tc->seen, "%s%s", tc->seen->len ? " " : "", r);
		}
		g_string_append(tc->seen, " |");
	}
	if (tc->fail) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, "consumer says no");
		return FALSE;
	}
	return TRUE;
}

static const CcaPickleConsumer test_consumer = {test_consumer_claim, test_consumer_consume};

/* Seeded random programs: each parses or fails with one line, plain and
 * with a consumer claiming every list. */
static void
test_random_programs(void)
{
	GRand *rand = cca_test_seeded_rand(20261130);
	GByteArray *buf = g_byte_array_new();
	int parsed = 0;
	for (int i = 0; i < 20000; i++) {
		random_program(rand, buf);
		g_autoptr(GError) error = NULL;
		CcaPickle *pickle = cca_pickle_parse(buf->data, buf->len, "random", &error);
		g_assert_true((pickle == NULL) == (error != NULL));
		if (pickle != NULL) {
			parsed++;
			g_free(cca_pickle_repr(cca_pickle_root(pickle), 50));
		}
		cca_pickle_free(pickle);
		g_clear_error(&error);
		TestConsumer tc = {0};
		pickle = cca_pickle_parse_full(buf->data, buf->len, "random", &test_consumer, &tc,
					       &error);
		g_assert_true((pickle == NULL) == (error != NULL));
		if (pickle != NULL)
			g_free(cca_pickle_repr(cca_pickle_root(pickle), 50));
		cca_pickle_free(pickle);
	}
	g_test_message("%d of 20000 random programs parsed", parsed);
	g_byte_array_unref(buf);
	g_rand_free(rand);
}

/* Random bytes after nothing at all, and samples with random bytes
 * flipped. */
static void
test_random_bytes(void)
{
	CcaTestMutants m;
	cca_test_mutants_init(&m, "snap_default_2.11.pickle", 977);
	for (int i = 0; i < 3000; i++) {
		guint8 *buf = cca_test_mutants_next(&m, g_rand_int_range(m.rand, 1, 8));
		if (i % 3 == 0)
			for (gsize b = 0; b < 64; b++)
				buf[b] = (guint8)g_rand_int_range(m.rand, 0, 256);
		g_autoptr(GError) error = NULL;
		CcaPickle *pickle = cca_pickle_parse(buf, m.len, "flipped", &error);
		g_assert_true((pickle == NULL) == (error != NULL));
		cca_pickle_free(pickle);
		g_clear_error(&error);
		CcaSnapshot *snap = cca_snapshot_pickle_load(buf, m.len, "flipped", &error);
		g_assert_true((snap == NULL) == (error != NULL));
		cca_snapshot_free(snap);
	}
	cca_test_mutants_clear(&m);
}

/* FRAME's length is only a hint: 2^64-1 is accepted. */
static void
test_frame_huge(void)
{
	CcaInput input;
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_data_file("frame-huge.pickle", &input, &error);
	g_assert_no_error(error);
	g_assert_cmpint(cca_pickle_root(pickle)->type, ==, CCA_PICKLE_DICT);
	cca_input_clear(&input);
}

/* 20000 lists nested without a MARK: parses; repr stops at its depth. */
static void
test_deep_lists(void)
{
	CcaInput input;
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_data_file("deep-lists.pickle", &input, &error);
	g_assert_no_error(error);
	g_autofree char *repr = cca_pickle_repr(cca_pickle_root(pickle), 3);
	g_assert_cmpstr(repr, ==, "[[[[...]]]]");
	cca_input_clear(&input);
}

/* A list that contains itself (memo cycle) parses; repr terminates. */
static void
test_cycle(void)
{
	static const char bytes[] = "\x80\x04]\x94h\x00"
				    "a.";
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = parse_bytes(bytes, sizeof bytes - 1, &error);
	g_assert_no_error(error);
	const CcaPickleValue *l = cca_pickle_root(pickle);
	g_assert_true(l->items[0] == l);
	g_autofree char *repr = cca_pickle_repr(l, 2);
	g_assert_cmpstr(repr, ==, "[[[...]]]");
}

/* ------------------------------------------------------------ consumer */

/* Two batches consumed; memoized values made inside the first (the str
 * and the list inside the tuple item) survive the second, which reuses
 * its memory. */
static void
test_consumer_batches(void)
{
	static const char bytes[] = "\x80\x04(]\x94(\x8c\x01"
				    "x\x94]\x94(K\x01K\x02"
				    "e\x85"
				    "e]\x94(K\x09K\x09K\x09"
				    "eh\x01h\x02t.";
	TestConsumer tc = {0};
	tc.seen = g_string_new(NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle =
		cca_pickle_parse_full((const unsigned char *)bytes, sizeof bytes - 1, "test",
				      &test_consumer, &tc, &error);
	g_assert_no_error(error);
	g_assert_cmpint(tc.batches, ==, 2);
	g_assert_cmpint(tc.items, ==, 5);
	g_assert_cmpstr(tc.seen->str, ==, "'x' ([1, 2],) | 9 9 9 |");
	g_autofree char *repr = cca_pickle_repr(cca_pickle_root(pickle), 10);
	g_assert_cmpstr(repr, ==, "([], [], 'x', [1, 2])");
	g_string_free(tc.seen, TRUE);
}

/* A batch the consumer cannot take falls back to plain parsing: {name,
 * bytes, repr of the plain parse}. */
static const OpCase fallback_cases[] = {
	/* A batch whose MARK is taken by TUPLE. */
	OP_CASE("fallback-mark", "\x80\x04](K\x01K\x02ta.", "[(1, 2)]"),
	/* A batch that appends to an older list. */
	OP_CASE("fallback-old-container",
		"\x80\x04(]\x94]\x94(h\x00K\x05"
		"aet.",
		"([5], [[5]])"),
};

static void
test_consumer_fallback(gconstpointer data)
{
	const OpCase *c = data;
	TestConsumer tc = {0};
	g_autoptr(GError) error = NULL;
	g_autoptr(CcaPickle) pickle = cca_pickle_parse_full((const unsigned char *)c->bytes, c->len,
							    "test", &test_consumer, &tc, &error);
	g_assert_no_error(error);
	g_assert_cmpint(tc.batches, ==, 0);
	g_autofree char *repr = cca_pickle_repr(cca_pickle_root(pickle), 10);
	g_assert_cmpstr(repr, ==, c->repr);
}

/* A parse the consumer ends: no pickle, and the error said. */
typedef struct {
	const char *name;
	const char *bytes;
	size_t len;
	gboolean fail;
	const char *message;
} ConsumerErrorCase;

#define CONSUMER_ERROR_CASE(name, bytes, fail, message)       \
	{                                                     \
		name, bytes, sizeof(bytes) - 1, fail, message \
	}

static const ConsumerErrorCase consumer_error_cases[] = {
	/* The consumer's own error stops the parse. */
	CONSUMER_ERROR_CASE("error-stops",
			    "\x80\x04](K\x01"
			    "e.",
			    TRUE, "consumer says no"),
	/* A consumed item referenced again through the memo is refused. */
	CONSUMER_ERROR_CASE("item-reused",
			    "\x80\x04](}\x94"
			    "eh\x00.",
			    FALSE,
			    "test: offset 7: memo index 0 refers to a trace entry, which snapshots "
			    "never share"),
};

static void
test_consumer_error(gconstpointer data)
{
	const ConsumerErrorCase *c = data;
	TestConsumer tc = {0};
	tc.fail = c->fail;
	g_autoptr(GError) error = NULL;
	CcaPickle *pickle = cca_pickle_parse_full((const unsigned char *)c->bytes, c->len, "test",
						  &test_consumer, &tc, &error);
	g_assert_null(pickle);
	g_assert_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT);
	g_assert_cmpstr(error->message, ==, c->message);
}

/* ------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	CCA_TEST_ADD_ROWS("/pickle/op", op_cases, name, test_op);
	CCA_TEST_ADD_ROWS("/pickle/long1", long_cases, name, test_long);
	g_test_add_func("/pickle/long1/too-big", test_long_too_big);
	g_test_add_func("/pickle/memo/shared-node", test_memo_shared_node);
	g_test_add_func("/pickle/memo/filled-after-memoize", test_memo_shared_is_filled_later);
	g_test_add_func("/pickle/memo/sample-keys-shared", test_memo_sample_nodes_shared);
	g_test_add_func("/pickle/dict/later-key-wins", test_dict_later_key_wins);
	g_test_add_func("/pickle/dict/key-cache", test_dict_key_cache);
	g_test_add_func("/pickle/offsets", test_offset_of_containers);
	g_test_add_data_func("/pickle/sample/default", "snap_default_2.11", test_sample);
	g_test_add_data_func("/pickle/sample/expandable", "snap_expandable_2.11", test_sample);
	g_test_add_data_func("/pickle/sample/state", "snap_state_2.11", test_sample);
	CCA_TEST_ADD_ROWS("/pickle/refused", bad_cases, file, test_refused);
	g_test_add_func("/pickle/refused/runs-nothing", test_refused_runs_nothing);
	g_test_add_func("/pickle/truncated-prefixes", test_truncated_prefixes);
	g_test_add_func("/pickle/random/programs", test_random_programs);
	g_test_add_func("/pickle/random/flipped-bytes", test_random_bytes);
	g_test_add_func("/pickle/limits/frame-huge", test_frame_huge);
	g_test_add_func("/pickle/limits/deep-lists", test_deep_lists);
	g_test_add_func("/pickle/limits/cycle", test_cycle);
	g_test_add_func("/pickle/consumer/batches", test_consumer_batches);
	CCA_TEST_ADD_ROWS("/pickle/consumer", fallback_cases, name, test_consumer_fallback);
	CCA_TEST_ADD_ROWS("/pickle/consumer", consumer_error_cases, name, test_consumer_error);
	return g_test_run();
}
