build/obj/error.o: src/error.c include/error.h include/strv.h
include/error.h:
include/strv.h:
