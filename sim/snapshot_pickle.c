#include "config.h"

#include "snapshot.h"
