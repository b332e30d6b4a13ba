build/obj/boxid.o: src/boxid.c include/boxid.h include/error.h \
 include/strv.h
include/boxid.h:
include/error.h:
include/strv.h:
