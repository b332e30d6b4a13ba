build/obj/envsel.o: src/envsel.c include/envsel.h include/strv.h
include/envsel.h:
include/strv.h:
