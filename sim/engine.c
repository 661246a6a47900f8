#include "config.h"

#include "engine.h"
