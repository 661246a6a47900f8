#include "config.h"

#include "stats.h"
