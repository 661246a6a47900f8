#include "config.h"

#include "pickle.h"
