# stress: see Makefile.am
