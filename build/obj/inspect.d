build/obj/inspect.o: src/inspect.c include/inspect.h include/error.h \
 include/plan.h include/strv.h include/boxid.h include/strv.h
include/inspect.h:
include/error.h:
include/plan.h:
include/strv.h:
include/boxid.h:
include/strv.h:
