#include "config.h"

#include "report.h"
