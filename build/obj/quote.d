build/obj/quote.o: src/quote.c include/quote.h include/strv.h
include/quote.h:
include/strv.h:
