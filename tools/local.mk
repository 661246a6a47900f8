# tools/: the ccasim CLI (option parsing and dispatch only) and user helpers.
bin_PROGRAMS += ccasim
ccasim_SOURCES = \
	%D%/ccasim.c %D%/commands.h \
	%D%/cmd_convert.c %D%/cmd_info.c \
	%D%/cmd_replay.c
ccasim_LDADD = libccasim.a $(CCASIM_LIBS)
