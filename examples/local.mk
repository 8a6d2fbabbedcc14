# examples: see Makefile.am
