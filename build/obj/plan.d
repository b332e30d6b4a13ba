build/obj/plan.o: src/plan.c include/plan.h include/strv.h \
 include/boxid.h include/error.h include/quote.h
include/plan.h:
include/strv.h:
include/boxid.h:
include/error.h:
include/quote.h:
