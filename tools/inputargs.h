/* inputargs.h - the options every command that reads a trace takes to
 * bound its input: --max-input-size and --max-inflate-ratio. */
#ifndef CCA_INPUTARGS_H
#define CCA_INPUTARGS_H

#include <glib.h>

G_BEGIN_DECLS

/* A new option group ("input", titled "Input limits:" in --help) whose
 * options set the process-wide input limits (cca_input_set_limits()) as
 * they are parsed; a bad value is a G_OPTION_ERROR_BAD_VALUE naming the
 * option.  For g_option_context_add_group(), which takes it. */
GOptionGroup *cca_inputargs_group(void);

G_END_DECLS

#endif
