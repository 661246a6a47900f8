#include "config.h"

#include "sizes.h"
