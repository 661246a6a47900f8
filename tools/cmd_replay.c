#include "config.h"

#include <stdio.h>

#include "commands.h"

int
cca_cmd_replay(int argc, char **argv)
{
	fprintf(stderr, "ccasim replay: not implemented yet\n");
	return 2;
}
