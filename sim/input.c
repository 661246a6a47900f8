#include "config.h"

#include "input.h"
