# SPDX-License-Identifier: GPL-2.0
# devmemtop: build everything under build/ (quiet unless V=1).

OUTPUT		?= build
PREFIX		?= /usr/local
DESTDIR		?=
BINDIR		?= $(PREFIX)/sbin
DATADIR		?= $(PREFIX)/share/devmemtop
MANDIR		?= $(PREFIX)/share/man

CC		?= cc
CLANG		?= clang
BPFTOOL		?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
PKG_CONFIG	?= pkg-config
ARCH		:= $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH	:= $(shell $(CC) -print-multiarch 2>/dev/null)

PKGS		:= libbpf libelf zlib libnl-genl-3.0 json-c ncursesw libmicrohttpd yaml-0.1
PKG_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

# CFLAGS/LDFLAGS/LDLIBS are the user's (make CFLAGS=... replaces them);
# what the build needs lives in DMT_* so a command-line CFLAGS keeps it.
CFLAGS		?= -O2 -g
DMT_CFLAGS	:= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
		   -std=gnu11 -D_GNU_SOURCE -I$(OUTPUT) -Ibpf -Isrc $(PKG_CFLAGS)
DMT_LDLIBS	:= $(PKG_LIBS) -lm -lpthread

# make asan: the binary, unit tests and fuzz targets with ASan+UBSan, in build-asan/.
ASAN_OUTPUT	:= build-asan
ASAN_FLAGS	:= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
		   -fno-sanitize-recover=undefined

BPF_CFLAGS	:= -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function \
		   -Ibpf $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS		:= $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

SRCS		:= $(wildcard src/*.c)
OBJS		:= $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS))
LIB_OBJS	:= $(filter-out $(OUTPUT)/src/main.o,$(OBJS))

TEST_SRCS	:= $(wildcard tests/unit/test_*.c)
TEST_BINS	:= $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(TEST_SRCS))

.PHONY: all clean install uninstall check check-all test run unit-tests integration-tests vmtest \
	asan asan-unit-tests \
	test-assets bench-assets \
	bench fuzz deps

all: $(OUTPUT)/devmemtop

$(OUTPUT) $(OUTPUT)/src $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/devmemtop.h bpf/kernel_types.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*) > $@

$(OUTPUT)/src/%.o: src/%.c $(wildcard src/*.h) bpf/devmemtop.h $(SKELS) | $(OUTPUT)/src
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/devmemtop: $(OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $(LDFLAGS) $^ $(DMT_LDLIBS) $(LDLIBS) -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(DMT_LDLIBS) $(LDLIBS) -lcmocka -o $@

# BPF objects used by the tests only (no skeleton).
$(OUTPUT)/xdp_pass.bpf.o: tests/integration/xdp_pass.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

test-assets: $(OUTPUT)/xdp_pass.bpf.o

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/empty.bpf.o: bench/empty.bpf.c | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/attach: bench/attach.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $< $(DMT_LDLIBS) $(LDLIBS) -o $@

bench-assets: test-assets $(OUTPUT)/bench/empty.bpf.o $(OUTPUT)/bench/attach

# Per-event overhead of the hot-path programs (README, Overhead).
bench: all bench-assets
	$(Q)bench/overhead.sh

unit-tests: $(TEST_BINS)
	$(Q)tests/run-unit.sh $(TEST_BINS)

# Everything built again with ASan+UBSan in $(ASAN_OUTPUT)/ (make CFLAGS=... keeps
# the project's flags, see DMT_CFLAGS); any sanitizer report fails.
asan:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ASAN_OUTPUT) CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" \
		$(ASAN_OUTPUT)/devmemtop $(patsubst $(OUTPUT)/%,$(ASAN_OUTPUT)/%,$(TEST_BINS))
	$(Q)OUT=$(CURDIR)/$(ASAN_OUTPUT)/fuzz tests/fuzz/build.sh >/dev/null

asan-unit-tests: asan
	$(Q)ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		tests/run-unit.sh $(patsubst $(OUTPUT)/%,$(ASAN_OUTPUT)/%,$(TEST_BINS))

integration-tests: all test-assets
	$(Q)tests/run-integration.sh

vmtest: all
	$(Q)scripts/lab/vmtest.sh

# The README's two commands. Both install what is missing first, then run
# a fresh make so pkg-config sees the libraries just installed.
run:
	$(Q)scripts/install-deps.sh --run
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/devmemtop $(ARGS)

check test:
	$(Q)scripts/install-deps.sh --lab
	$(Q)$(MAKE) --no-print-directory check-all

check-all: all unit-tests asan-unit-tests integration-tests vmtest

deps:
	$(Q)scripts/install-deps.sh --lab

install: all
	install -D -m 0755 $(OUTPUT)/devmemtop $(DESTDIR)$(BINDIR)/devmemtop
	install -d $(DESTDIR)$(DATADIR)/dashboards $(DESTDIR)$(DATADIR)/specs
	$(if $(wildcard dashboards/*),install -m 0644 $(wildcard dashboards/*.json dashboards/*.yml) $(DESTDIR)$(DATADIR)/dashboards/)
	$(if $(wildcard specs/*.yaml),install -m 0644 $(wildcard specs/*.yaml) $(DESTDIR)$(DATADIR)/specs/)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/devmemtop
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(ASAN_OUTPUT)

.DELETE_ON_ERROR:
.SECONDARY:
