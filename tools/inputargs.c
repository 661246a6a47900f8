/* inputargs.c - --max-input-size and --max-inflate-ratio for every
 * command that reads a trace. */
#include "config.h"

#include "inputargs.h"

#include <stdlib.h>

#include "input.h"
#include "size.h"

/* --max-input-size SIZE: bytes (as cca_size_parse() reads them, e.g. 2GiB) a compressed, piped or
 * plain input may hold. */
static gboolean
inputargs_max_size(const char *name, const char *value, gpointer data, GError **error)
{
	(void)data;
	uint64_t size = 0, old_size;
	unsigned ratio;
	GError *local = NULL;
	if (!cca_size_parse(value, name, &size, &local) || size == 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s",
			    local ? local->message : "--max-input-size: must be above 0");
		g_clear_error(&local);
		return FALSE;
	}
	cca_input_get_limits(&old_size, &ratio);
	cca_input_set_limits(size, ratio);
	return TRUE;
}

/* --max-inflate-ratio N: decompressed bytes allowed per compressed byte. */
static gboolean
inputargs_max_ratio(const char *name, const char *value, gpointer data, GError **error)
{
	(void)data;
	char *end = NULL;
	guint64 ratio = g_ascii_strtoull(value, &end, 10);
	if (end == value || *end != '\0' || ratio < 1 || ratio > 1000000) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: expected a whole number from 1 to 1000000, got '%s'", name, value);
		return FALSE;
	}
	uint64_t size;
	unsigned old_ratio;
	cca_input_get_limits(&size, &old_ratio);
	cca_input_set_limits(size, (unsigned)ratio);
	return TRUE;
}

GOptionGroup *
cca_inputargs_group(void)
{
	static const GOptionEntry entries[] = {
		{"max-input-size", 0, 0, G_OPTION_ARG_CALLBACK, (void *)inputargs_max_size,
		 "Refuse an input that holds (or decompresses to) more than SIZE bytes "
		 "(default 16GiB)",
		 "SIZE"},
		{"max-inflate-ratio", 0, 0, G_OPTION_ARG_CALLBACK, (void *)inputargs_max_ratio,
		 "Refuse a compressed input that grows more than N-fold past its first 64 MiB "
		 "(default 200)",
		 "N"},
		G_OPTION_ENTRY_NULL,
	};
	GOptionGroup *group = g_option_group_new(
		"input", "Input limits:", "Show the input limit options", NULL, NULL);
	g_option_group_add_entries(group, entries);
	return group;
}
