build/obj/args.o: src/args.c include/args.h include/error.h \
 include/strv.h include/quote.h
include/args.h:
include/error.h:
include/strv.h:
include/quote.h:
