/* trace.h - ccasim's msgpack trace format (doc/trace-format.md). */
#ifndef CCA_TRACE_H
#define CCA_TRACE_H
#include "snapshot.h"
G_BEGIN_DECLS
G_END_DECLS
#endif
