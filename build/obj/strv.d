build/obj/strv.o: src/strv.c include/strv.h include/error.h
include/strv.h:
include/error.h:
