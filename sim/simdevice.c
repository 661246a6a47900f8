#include "config.h"

#include "device.h"
