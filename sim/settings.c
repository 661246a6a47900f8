#include "config.h"

#include "settings.h"
