#include "config.h"

#include <stdio.h>

#include "commands.h"

int
cca_cmd_convert(int argc, char **argv)
{
	fprintf(stderr, "ccasim convert: not implemented yet\n");
	return 2;
}
