build/obj/podman.o: src/podman.c include/podman.h include/error.h \
 include/strv.h
include/podman.h:
include/error.h:
include/strv.h:
