build/obj/main.o: src/main.c include/args.h include/error.h \
 include/strv.h include/boxid.h include/envsel.h include/error.h \
 include/inspect.h include/plan.h include/plan.h include/podman.h \
 include/quote.h include/strv.h
include/args.h:
include/error.h:
include/strv.h:
include/boxid.h:
include/envsel.h:
include/error.h:
include/inspect.h:
include/plan.h:
include/plan.h:
include/podman.h:
include/quote.h:
include/strv.h:
