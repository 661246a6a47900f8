#include "config.h"

#include "allocator.h"
