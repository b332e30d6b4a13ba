# gemini-box: see README.md. `make` builds build/gemini-box; `make test` runs
# every test (installing what it needs when root); `make install` installs.
VERSION = 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
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
DEPS_LIBS := $(shell $(PKG_CONFIG) --libs libcjson libcrypto 2>/dev/null)
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS) $(CFLAGS_EXTRA) -Iinclude $(DEPS_CFLAGS) \
	-DGEMINI_BOX_VERSION='"$(VERSION)"' -MMD -MP

BUILD = build
LIB_SRCS = src/args.c src/boxid.c src/build.c src/commands.c src/envsel.c src/error.c \
	src/inspect.c src/plan.c src/podman.c src/quote.c src/report.c src/session.c src/settings.c src/strv.c
LIB_OBJS = $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)
UNIT_TESTS = args boxid build envsel inspect plan podman quote report session settings strv
UNIT_BINS = $(UNIT_TESTS:%=$(BUILD)/tests/test_%)

.PHONY: all deps test unit-test integration-test man-check memcheck sanitize install uninstall \
	run clean format lint

all: $(BUILD)/gemini-box

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/gemini-box: $(BUILD)/obj/main.o $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(DEPS_LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(DEPS_LIBS) -lcmocka

# Installs (as root) or names (otherwise) the Debian packages the tests need.
deps:
	@sh scripts/ensure-deps.sh test

test: deps
	@$(MAKE) --no-print-directory $(BUILD)/gemini-box $(UNIT_BINS)
	@sh tests/run-all.sh $(BUILD) $(UNIT_TESTS)

unit-test: $(BUILD)/gemini-box $(UNIT_BINS)
	@sh tests/run-all.sh --unit-only $(BUILD) $(UNIT_TESTS)

integration-test: $(BUILD)/gemini-box
	@bash tests/integration/run.sh $(BUILD)/gemini-box

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

man-check:
	@sh tests/man-check.sh man/gemini-box.1

# make run ARGS='...': installs what is missing, builds, runs gemini-box here.
run:
	@sh scripts/ensure-deps.sh run
	@$(MAKE) --no-print-directory $(BUILD)/gemini-box
	$(BUILD)/gemini-box $(ARGS)

install: $(BUILD)/gemini-box
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BUILD)/gemini-box $(DESTDIR)$(BINDIR)/gemini-box
	install -m 644 man/gemini-box.1 $(DESTDIR)$(MANDIR)/man1/gemini-box.1
	install -m 644 completions/gemini-box.bash $(DESTDIR)$(BASHCOMPDIR)/gemini-box
	install -m 644 completions/_gemini-box $(DESTDIR)$(ZSHCOMPDIR)/_gemini-box

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gemini-box $(DESTDIR)$(MANDIR)/man1/gemini-box.1 \
		$(DESTDIR)$(BASHCOMPDIR)/gemini-box $(DESTDIR)$(ZSHCOMPDIR)/_gemini-box

clean:
	rm -rf $(BUILD)

FORMAT_FILES = $(wildcard src/*.c include/*.h tests/unit/*.c tests/unit/*.h)
format:
	clang-format -i $(FORMAT_FILES)

lint:
	clang-format --dry-run --Werror $(FORMAT_FILES)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
		--inline-suppr --std=c11 -Iinclude src

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/tests/*.d)
