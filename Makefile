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

# The core (snapshot builder, formats, gates, recordings) needs only these;
# the tool adds the kernel, terminal, HTTP, TLS and privilege libraries.
CORE_PKGS	:= zlib json-c yaml-0.1 libprotobuf-c
PKGS		:= libbpf libelf libnl-genl-3.0 ncursesw libmicrohttpd gnutls libxcrypt libcap \
		   $(CORE_PKGS)
PKG_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CORE_LIBS	:= $(shell $(PKG_CONFIG) --libs $(CORE_PKGS) 2>/dev/null) -lm -lpthread
# Packages pkg-config does not know: the tool needs all, unit tests the core's.
missing		= $(shell for p in $(1); do $(PKG_CONFIG) --exists $$p 2>/dev/null || echo $$p; done)
MISSING_PKGS	:= $(call missing,$(PKGS))
MISSING_CORE	:= $(call missing,$(CORE_PKGS) cmocka)

# CFLAGS/LDFLAGS/LDLIBS are the user's (make CFLAGS=... replaces them);
# what the build needs lives in DMT_* so a command-line CFLAGS keeps it.
CFLAGS		?= -O2 -g
DMT_CFLAGS	:= -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
		   -std=gnu11 -D_GNU_SOURCE -I$(OUTPUT) -Ibpf -Isrc -Isrc/core $(PKG_CFLAGS)
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
# Skeletons in their own directory, on the include path of the collector
# alone: the one part that loads BPF programs (docs/HACKING.md, Layers).
SKEL_DIR	:= $(OUTPUT)/skel
SKELS		:= $(patsubst bpf/%.bpf.c,$(SKEL_DIR)/%.skel.h,$(BPF_SRCS))

# One folder per part (docs/HACKING.md, Layers): core, collector, exporter, cmd.
SRCS		:= $(wildcard src/*/*.c)
# protobuf exposition: C generated from proto/*.proto by protoc-c
PROTOS		:= $(wildcard proto/*.proto)
PROTO_HDRS	:= $(patsubst proto/%.proto,$(OUTPUT)/%.pb-c.h,$(PROTOS))
PROTO_OBJS	:= $(patsubst proto/%.proto,$(OUTPUT)/src/%.pb-c.o,$(PROTOS))
OBJS		:= $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS)) $(PROTO_OBJS)
# The one part that includes the skeletons (-I$(SKEL_DIR) for it alone).
COLLECTOR_OBJS	:= $(filter $(OUTPUT)/src/collector/%,$(OBJS))
# The library boundary is the directory: src/core/ uses neither libbpf,
# libnl, ncurses nor libmicrohttpd. Unit tests and fuzzers link against it
# alone, so a core object that starts calling into the collector or a UI
# fails to link there; scripts/check-layers.py (37-src-layers) checks the
# includes between the folders.
CORE_OBJS	:= $(patsubst src/core/%.c,$(OUTPUT)/src/core/%.o,$(wildcard src/core/*.c)) $(PROTO_OBJS)
CORE_LIB	:= $(OUTPUT)/libdevmemtop-core.a
# Everything but main: for the few tests of UI code (test_top).
LIB_OBJS	:= $(filter-out $(OUTPUT)/src/cmd/main.o,$(OBJS))
# Header dependencies, written by the compiler next to each object.
DEPS		:= $(OBJS:.o=.d)
FULL_TESTS	:= test_top test_top_detail test_webcfg test_golden_cmd test_nl

TEST_SRCS	:= $(wildcard tests/unit/test_*.c)
TEST_BINS	:= $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(TEST_SRCS))

.PHONY: all clean install uninstall check check-all test run demo unit-tests integration-tests vmtest kseries-build \
	asan asan-unit-tests golden-update \
	test-assets bench-assets \
	bench bench-bystander evidence fuzz deps deb

all: check-libs $(OUTPUT)/devmemtop

# One line per missing library instead of a wall of compile errors.
.PHONY: check-libs check-core-libs
check-libs:
	@if [ -n "$(MISSING_PKGS)" ]; then \
		for p in $(MISSING_PKGS); do \
			echo "devmemtop: $$p not found (scripts/install-deps.sh)" >&2; \
		done; exit 1; fi

check-core-libs:
	@if [ -n "$(MISSING_CORE)" ]; then \
		for p in $(MISSING_CORE); do \
			echo "devmemtop: $$p not found (scripts/install-deps.sh)" >&2; \
		done; exit 1; fi

$(OUTPUT) $(OUTPUT)/src $(SKEL_DIR) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c bpf/devmemtop.h bpf/devmemtop_iter.h bpf/kernel_types.h \
		   bpf/live_bindings.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL_DIR)/%.skel.h: $(OUTPUT)/%.bpf.o | $(SKEL_DIR)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*) > $@

$(OUTPUT)/%.pb-c.c $(OUTPUT)/%.pb-c.h: proto/%.proto | $(OUTPUT)
	$(call msg,PROTOC,$@)
	$(Q)protoc-c --c_out=$(OUTPUT) -Iproto $<

$(OUTPUT)/src/%.pb-c.o: $(OUTPUT)/%.pb-c.c $(OUTPUT)/%.pb-c.h | $(OUTPUT)/src
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) -c $< -o $@

# The headers an object includes come from its .d file (-MMD) once it was
# built; the generated ones must exist before the first compile (order-only).
$(COLLECTOR_OBJS): $(OUTPUT)/src/collector/%.o: src/collector/%.c | $(SKELS) $(PROTO_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -I$(SKEL_DIR) $(DMT_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(filter-out $(COLLECTOR_OBJS) $(PROTO_OBJS),$(OBJS)): $(OUTPUT)/src/%.o: src/%.c | $(PROTO_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/devmemtop: $(OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $(LDFLAGS) $^ $(DMT_LDLIBS) $(LDLIBS) -o $@

$(CORE_LIB): $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(CORE_LIB) | $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $(LDFLAGS) $< $(CORE_LIB) $(CORE_LIBS) $(LDLIBS) -lcmocka -o $@

$(patsubst %,$(OUTPUT)/tests/%,$(FULL_TESTS)): $(OUTPUT)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS) \
		| $(OUTPUT)/tests
	$(call msg,TEST,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(DMT_LDLIBS) $(LDLIBS) -lcmocka -o $@

# BPF objects used by the tests only (no skeleton).
$(OUTPUT)/xdp_pass.bpf.o: tests/integration/xdp_pass.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

test-assets: $(OUTPUT)/xdp_pass.bpf.o $(OUTPUT)/bench/bystander $(CORE_LIB) \
	$(OUTPUT)/tests/core_load	# 79-token-bystander; 94 links the core; 38-core-layouts

$(OUTPUT)/tests/core_load: tests/integration/core_load.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $< $(DMT_LDLIBS) $(LDLIBS) -o $@

$(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bench/empty.bpf.o: bench/empty.bpf.c | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/attach: bench/attach.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $< $(DMT_LDLIBS) $(LDLIBS) -o $@

$(OUTPUT)/bench/bystander: bench/bystander.c | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(DMT_CFLAGS) $(CFLAGS) $< -o $@

bench-assets: test-assets $(OUTPUT)/bench/empty.bpf.o $(OUTPUT)/bench/attach \
	$(OUTPUT)/bench/bystander

# Per-event overhead of the hot-path programs (docs/light-mode.md, Overhead).
bench: all bench-assets
	$(Q)bench/overhead.sh

# What devmemtop costs TCP traffic that is not devmem (docs/tokens.md, Bystander cost)
bench-bystander: all bench-assets
	$(Q)bench/bystander.sh

# Every bench once, each writing its page under docs/results/ (bench/results.sh):
# the figures the docs quote, made again. Root, the host bed, a quiet machine
# (about 40 min); one bench: bench/results.sh NAME [ARGS].
evidence: all bench-assets
	$(Q)bench/results.sh overhead 3 6
	$(Q)BENCH_THROUGHPUT=0 bench/results.sh regular 5 4
	$(Q)bench/results.sh light 10 10 50 100
	$(Q)bench/results.sh light-scale
	$(Q)BYST_MODES="light devmem" BYST_SLICES=60 bench/results.sh bystander 0

# the lab's verdict logic, tested on the host (Python, no VM)
LAB_PY_TESTS := tests/lab/test_labcheck.py tests/lab/test_autorelease.py tests/lab/test_lightheld.py \
	tests/lab/test_lightscale.py

unit-tests: check-core-libs $(TEST_BINS)
	$(Q)tests/run-unit.sh $(TEST_BINS) $(LAB_PY_TESTS)

# Rewrite tests/golden/ from today's outputs (tests/unit/golden.h): only for
# an intended change, whose diff of tests/golden/ goes into the same commit.
golden-update: check-core-libs $(OUTPUT)/tests/test_golden $(OUTPUT)/tests/test_golden_cmd
	$(Q)DMT_GOLDEN_UPDATE=1 $(OUTPUT)/tests/test_golden
	$(Q)DMT_GOLDEN_UPDATE=1 $(OUTPUT)/tests/test_golden_cmd
	$(Q)git status --short tests/golden

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

# The lab on 6.12 (kernel-patches/series: baseline and patched), then on
# 7.3, the kernel users run (kernel-patches/7.3: netdevsim's devmem only);
# both run whatever the first gave, and either failing fails the target.
vmtest: all
	$(Q)scripts/lab/vmtest-all.sh

# On demand, not in check: every patch of kernel-patches/ builds on its own,
# and the series builds with PAGE_POOL, NET_DEVMEM or TRACEPOINTS off
# (issue 22; scripts/lab/kseries-build.sh, ccache).
kseries-build:
	$(Q)scripts/lab/kseries-build.sh

# The README's two commands. Both install what is missing first, then run
# a fresh make so pkg-config sees the libraries just installed.
run:
	$(Q)scripts/install-deps.sh --run
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(OUTPUT)/devmemtop $(ARGS)

# The live view on the host test bed (veth + XDP_PASS + TCP stream), torn
# down when the view exits. Root; ARGS as for run.
demo:
	$(Q)scripts/install-deps.sh --run
	$(Q)$(MAKE) --no-print-directory all test-assets
	$(Q)scripts/demo.sh $(ARGS)

check test:
	$(Q)scripts/install-deps.sh --lab
	$(Q)$(MAKE) --no-print-directory check-all

# The host integration suite and the QEMU lab side by side: the lab's VM
# runs TCG on one thread, the suite is timing-robust with both cores busy
# (docs/reliability.md: three clean runs beside a make -j2 kernel build),
# and one after the other they took 36 min in CI. Each target's output is
# printed whole when it ends.
check-all: all test-assets unit-tests asan-unit-tests
	$(Q)$(MAKE) --no-print-directory -j2 --output-sync=target integration-tests vmtest

deps:
	$(Q)scripts/install-deps.sh --lab

install: all
	install -D -m 0755 $(OUTPUT)/devmemtop $(DESTDIR)$(BINDIR)/devmemtop
	install -D -m 0644 man/devmemtop.8 $(DESTDIR)$(MANDIR)/man8/devmemtop.8
	install -d $(DESTDIR)$(DATADIR)/dashboards $(DESTDIR)$(DATADIR)/specs
	$(if $(wildcard dashboards/*),install -m 0644 $(wildcard dashboards/*.json dashboards/*.yml) $(DESTDIR)$(DATADIR)/dashboards/)
	$(if $(wildcard specs/*.yaml),install -m 0644 $(wildcard specs/*.yaml) $(DESTDIR)$(DATADIR)/specs/)

# A Debian package from this tree (debian/, debhelper): build/deb/*.deb.
# dpkg-buildpackage writes to the parent directory; the files are moved here.
deb:
	$(Q)rm -rf $(OUTPUT)/deb && mkdir -p $(OUTPUT)/deb
	$(Q)dpkg-buildpackage -b -us -uc $(if $(V),,>$(OUTPUT)/deb/build.log 2>&1) || \
		{ echo "make deb: dpkg-buildpackage failed, see $(OUTPUT)/deb/build.log" >&2; \
		  tail -20 $(OUTPUT)/deb/build.log >&2; exit 1; }
	$(Q)v=$$(dpkg-parsechangelog -SVersion) a=$$(dpkg-architecture -qDEB_HOST_ARCH); \
		mv ../devmemtop_$${v}_$$a.deb ../devmemtop_$${v}_$$a.buildinfo \
		   ../devmemtop_$${v}_$$a.changes $(OUTPUT)/deb/ && \
		{ [ ! -e ../devmemtop-dbgsym_$${v}_$$a.deb ] || \
		  mv ../devmemtop-dbgsym_$${v}_$$a.deb $(OUTPUT)/deb/; } && \
		ls $(OUTPUT)/deb/*.deb

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/devmemtop
	rm -f $(DESTDIR)$(MANDIR)/man8/devmemtop.8
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(ASAN_OUTPUT)

-include $(DEPS)

.DELETE_ON_ERROR:
.SECONDARY:
