#include "config.h"

#include <stdio.h>

#include "commands.h"

int
cca_cmd_info(int argc, char **argv)
{
	fprintf(stderr, "ccasim info: not implemented yet\n");
	return 2;
}
