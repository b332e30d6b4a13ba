# gemini-box: see README.md. `make` builds build/gemini-box; `make test` runs
# every test (installing what it needs when root); `make install` installs.
VERSION = 0.1.0
BENCH_ROUNDS ?= 15

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DESTDIR ?=

CC ?= cc
PKG_CONFIG ?= pkg-config
WARNINGS = -Wall -Wextra -Wshadow -Wformat=2 -Wformat-nonliteral -Wmissing-prototypes \
	-Wstrict-prototypes -Wpointer-arith -Wcast-qual -Wundef -Wvla
CFLAGS ?= -O2 -g
# CI adds -Werror through CFLAGS_EXTRA, so a local build is not broken by a new compiler's warnings.
CFLAGS_EXTRA ?=
DEPS_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcjson libcrypto 2>/dev/null)
# libcrypto is linked statically where its archive exists: gemini-box uses
# only its SHA-256, and loading the shared library costs every launch ~0.4 ms.
CRYPTO_A := $(wildcard $(shell $(PKG_CONFIG) --variable=libdir libcrypto 2>/dev/null)/libcrypto.a)
DEPS_LIBS := $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null) \
	$(if $(CRYPTO_A),$(CRYPTO_A) -pthread,$(shell $(PKG_CONFIG) --libs libcrypto 2>/dev/null))
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS) $(CFLAGS_EXTRA) -Iinclude -I$(BUILD) $(DEPS_CFLAGS) \
	-DGEMINI_BOX_VERSION='"$(VERSION)"' -MMD -MP

BUILD = build
LIB_SRCS = src/args.c src/boxid.c src/boxinit.c src/build.c src/cmd-build.c src/cmd-manage.c src/cmd-run.c src/cmd-egress.c src/cmd-trust.c src/context.c src/doctor.c src/egress.c src/egress-proxy.c src/execute.c src/fsutil.c src/load.c src/localimage.c src/query.c src/envsel.c src/error.c src/hash.c \
	src/inspect.c src/plan.c src/podman.c src/quote.c src/report.c src/protect.c src/relay.c src/runenv.c src/session.c src/settings.c src/settings-output.c src/spawn.c src/strv.c src/trust.c
LIB_OBJS = $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/init-blob.o
UNIT_TESTS = args boxid boxinit build doctor egress envsel error inspect localimage plan podman protect quote relay report runenv session settings spawn strv trust
UNIT_BINS = $(UNIT_TESTS:%=$(BUILD)/tests/test_%)

.PHONY: all deps test unit-test integration-test man-check memcheck sanitize bench install uninstall \
	run clean format lint

all: $(BUILD)/gemini-box

# The box's init runs in any image, so it is static and needs nothing else
# (nor a sanitizer: those cannot link statically). musl makes it 46 KB where
# glibc makes it 776 KB; it travels inside gemini-box (init-blob.c).
INIT_CC ?= $(if $(shell command -v musl-gcc 2>/dev/null),musl-gcc,$(CC))
$(BUILD)/gemini-box-init: src/init/box-init.c
	@mkdir -p $(@D)
	$(INIT_CC) -std=gnu11 $(WARNINGS) -Os -s $(CFLAGS_EXTRA) -static -o $@ $<

# The init's bytes as C, linked into gemini-box: one file to install.
$(BUILD)/init-blob.c: $(BUILD)/gemini-box-init
	@{ printf '/* generated from gemini-box-init by the Makefile */\n#include "boxinit.h"\n'; \
	  printf 'const unsigned char init_blob[] = {\n'; \
	  od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  printf '};\nconst size_t init_blob_size = sizeof(init_blob);\n'; } >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/init-blob.o: $(BUILD)/init-blob.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(CFLAGS) -Iinclude -c $< -o $@

# gemini-box names its init by content, so a box can tell an upgraded init.
$(BUILD)/init-id.h: $(BUILD)/gemini-box-init
	@printf '#define GEMINI_BOX_INIT_ID "%s"\n' "$$(sha256sum $< | cut -c1-12)" >$@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/obj/boxinit.o: $(BUILD)/init-id.h

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/gemini-box: $(BUILD)/obj/main.o $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(DEPS_LIBS)

# test_spawn makes read and poll fail for real: it wraps them (a variable of
# its own, which an LDFLAGS given on the command line does not replace).
$(BUILD)/tests/test_spawn: TEST_LDFLAGS = -Wl,--wrap=read -Wl,--wrap=poll

$(BUILD)/tests/test_%: tests/unit/test_%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(TEST_LDFLAGS) -o $@ $(filter %.c %.o,$^) $(DEPS_LIBS) -lcmocka

# Installs (as root) or names (otherwise) the Debian packages the tests need.
deps:
	@sh scripts/ensure-deps.sh test

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@sh tests/run-all.sh $(BUILD) $(UNIT_TESTS)

unit-test: all $(UNIT_BINS)
	@sh tests/run-all.sh --unit-only $(BUILD) $(UNIT_TESTS)

# The system tests (tests/system/*.bats, bats against real rootless podman);
# as root, tests/system/run.sh first prepares the machine and a test user.
integration-test: all
	@bash tests/system/run.sh $(BUILD)/gemini-box

# The unit tests under valgrind: any error or leak fails.
memcheck: $(UNIT_BINS)
	@for t in $(UNIT_BINS); do \
		valgrind -q --leak-check=full --errors-for-leak-kinds=all --error-exitcode=9 \
			--child-silent-after-fork=yes $$t >/dev/null || { echo "memcheck: $$t failed"; exit 1; }; \
	done; echo "memcheck: $(words $(UNIT_BINS)) unit test programs clean under valgrind"

# The unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize:
	@$(MAKE) --no-print-directory BUILD=build-asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" unit-test

# Launch paths against their podman floors (README, "Benchmark").
bench: all
	@bash bench/run.sh $(BUILD)/gemini-box $(BENCH_ROUNDS)

man-check:
	@sh tests/man-check.sh man/gemini-box.1

# make run ARGS='...': installs what is missing, builds, runs gemini-box here,
# in a box made from gemini-box's own image (GEMINI_IMAGE=local: Debian's and
# npm's packages, no container registry; made once, in about two minutes).
run:
	@sh scripts/ensure-deps.sh run
	@$(MAKE) --no-print-directory all
	GEMINI_IMAGE=$${GEMINI_IMAGE:-local} $(BUILD)/gemini-box $(ARGS)

# One program (the init travels inside it), its man page and completions.
install: $(BUILD)/gemini-box
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BUILD)/gemini-box $(DESTDIR)$(BINDIR)/gemini-box
	install -m 644 man/gemini-box.1 $(DESTDIR)$(MANDIR)/man1/gemini-box.1
	install -m 644 completions/gemini-box.bash $(DESTDIR)$(BASHCOMPDIR)/gemini-box
	install -m 644 completions/_gemini-box $(DESTDIR)$(ZSHCOMPDIR)/_gemini-box

uninstall:
	rm -f $(DESTDIR)$(LIBEXECDIR)/gemini-box/gemini-box-init # from before 0.2
	rm -f $(DESTDIR)$(BINDIR)/gemini-box $(DESTDIR)$(MANDIR)/man1/gemini-box.1 \
		$(DESTDIR)$(BASHCOMPDIR)/gemini-box $(DESTDIR)$(ZSHCOMPDIR)/_gemini-box

clean:
	rm -rf $(BUILD)

FORMAT_FILES = $(wildcard src/*.c src/*.h include/*.h tests/unit/*.c tests/unit/*.h)
format:
	clang-format -i $(FORMAT_FILES)

lint:
	clang-format --dry-run --Werror $(FORMAT_FILES)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
		--inline-suppr --std=c11 -Iinclude src

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/tests/*.d)

# --- fuzzing (tests/fuzz) ---
# make fuzz [FUZZ_SECONDS=N]: builds the libFuzzer targets tests/fuzz/fuzz_*.c
# with clang, ASan and UBSan, against every src/*.c but main.c, into
# build-fuzz/, and runs each for FUZZ_SECONDS on a scratch copy of its seed
# corpus tests/fuzz/corpus/NAME/ (never writing the repository). A crash,
# leak, sanitizer report or hang fails; its input is kept in
# build-fuzz/artifacts/. Reproduce one with build-fuzz/fuzz_NAME FILE.
# make sanitize-integration: the system tests (tests/system) against a
# gemini-box built with ASan and UBSan (build-asan/gemini-box).
# tests/sanitize/options.c makes every finding exit 99 and write a report into
# SAN_LOG_DIR; any report there after the run fails the target, whatever the
# tests saw.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_BUILD = build-fuzz
FUZZ_TARGETS = args settings egress
FUZZ_OBJS = $(patsubst src/%.c,$(FUZZ_BUILD)/obj/%.o,$(filter-out src/main.c,$(wildcard src/*.c))) \
	$(FUZZ_BUILD)/obj/init-blob.o
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all $(WARNINGS) \
	-Iinclude -I$(BUILD) $(DEPS_CFLAGS) -DGEMINI_BOX_VERSION='"$(VERSION)"' -MMD -MP
SAN_CFLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_LOG_DIR = /tmp/gemini-box-sanitizer-reports

.PHONY: fuzz fuzz-build sanitize-integration
.PRECIOUS: $(FUZZ_BUILD)/obj/%.o

fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# `all` first: it makes the headers $(BUILD) generates for src/.
fuzz-build:
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)

$(FUZZ_BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

$(FUZZ_BUILD)/obj/init-blob.o: $(BUILD)/init-blob.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 -Iinclude -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $(filter %.c %.o,$^) \
		$(DEPS_LIBS)

build-asan/sanitizer-options.o: tests/sanitize/options.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARNINGS) -O1 -g -DSAN_LOG_DIR='"$(SAN_LOG_DIR)"' -c $< -o $@

# Relinked every time: `make sanitize` links build-asan/gemini-box without the options.
# The box's init (static, run inside the box) is built without sanitizers,
# which cannot link statically.
sanitize-integration: build-asan/sanitizer-options.o
	@$(MAKE) --no-print-directory BUILD=build-asan build-asan/gemini-box-init
	@rm -f build-asan/gemini-box
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="$(SAN_CFLAGS)" \
		LDFLAGS="-fsanitize=address,undefined $(CURDIR)/build-asan/sanitizer-options.o" \
		build-asan/gemini-box
	@rm -rf $(SAN_LOG_DIR) && mkdir -m 1777 $(SAN_LOG_DIR)
	@bash tests/system/run.sh build-asan/gemini-box; rc=$$?; \
	if [ -n "$$(ls -A $(SAN_LOG_DIR))" ]; then \
		echo "sanitize-integration: sanitizer reports in $(SAN_LOG_DIR):"; \
		for f in $(SAN_LOG_DIR)/*; do echo "== $$f"; head -n 40 "$$f"; done; \
		exit 1; \
	fi; \
	[ $$rc -eq 0 ] && echo "sanitize-integration: no sanitizer report"; exit $$rc

-include $(wildcard $(FUZZ_BUILD)/obj/*.d $(FUZZ_BUILD)/*.d)
