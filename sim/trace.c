#include "config.h"

#include "trace.h"
