# SPDX-License-Identifier: GPL-2.0-only
BUILD ?= build
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
HOOKDIR = $(PREFIX)/libexec/oci/hooks.d
HOOKSD = $(PREFIX)/share/containers/oci/hooks.d
MANDIR = $(PREFIX)/share/man
SYSTEMDDIR = $(PREFIX)/lib/systemd/system
CONFDIR = $(SYSCONFDIR)/oci-sockopt-hook
# make predefines CC=cc, so `CC ?= gcc` would never apply: take gcc only
# where neither the command line nor the environment chose a compiler.
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

# zlib is named for --version's zlibVersion(); libbpf needs it anyway.
LIBS_PC := libbpf json-c libcgroup zlib
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(LIBS_PC))
# The hook is a static PIE (STATIC=0 to link every library dynamically):
# libbpf, libelf, zlib, json-c, libcgroup and glibc are linked in. No
# dynamic loader runs at all, which saves about 0.15 ms on each of the two
# hook runs of every container start (docs/development.md), and the
# binary runs on nodes whatever their library versions. A fix to one of
# those libraries then reaches nodes only with a rebuilt hook; distribution
# packages build with STATIC=0 and get library fixes from the distribution
# (`oci-sockopt-hook --version` tells which a binary is). The hook calls no
# glibc function that needs NSS (the linker's getpwnam warnings come from
# libcgroup's rules parser, which the hook does not use). The unit tests
# and the sanitizer builds link glibc dynamically, as ASan needs, and so
# does `make hook-dyn` ($(BUILD)/dyn/oci-sockopt-hook: the same objects,
# only glibc shared) for valgrind and the LD_PRELOAD fault shim, which a
# static binary cannot host.
STATIC ?= 1
ifeq ($(STATIC),1)
PKG_LIBS = -Wl,-Bstatic $(shell $(PKG_CONFIG) --static --libs $(LIBS_PC)) -Wl,-Bdynamic
BIN_LIBS = -static-pie $(shell $(PKG_CONFIG) --static --libs $(LIBS_PC))
else
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(LIBS_PC))
BIN_LIBS = $(PKG_LIBS)
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2
# gcc warns about snprintf truncation that the code checks for; clang has
# no such warning and rejects the flag.
ifeq ($(findstring clang,$(shell $(CC) --version 2>/dev/null)),)
WARN += -Wno-format-truncation
endif
CFLAGS ?= -O2 -g
# hook/ is flat prefixed modules in folders that show the path: the
# commands in hook/cmd/, the BPF program lifecycle in hook/prog/, the rest
# at the top. Every folder is on the include path: a module includes
# another by its name alone, wherever it lives.
HOOK_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard hook/*.c hook/*/*.c))))
HOOK_INCLUDES := $(HOOK_DIRS:%=-I%)
override CFLAGS += -std=gnu11 $(WARN) -D_GNU_SOURCE -I$(BUILD) -Ibpf $(HOOK_INCLUDES) $(PKG_CFLAGS) \
	-DSH_HOOKSD_PREFIX='"$(HOOKSD)"'
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Each object's own header dependencies, in a .d file next to it.
DEPFLAGS = -MMD -MP

ARCH = $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
# With -target bpf, clang leaves out the host's own system include
# directories (asm/types.h and the like are in a multiarch directory on
# Debian): add the ones clang itself searches, after everything else, as
# libbpf-bootstrap does. Recursive, so that clang runs only for BPF objects.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ibpf $(CLANG_BPF_SYS_INCLUDES)

BPF_NAMES := sock_create setsockopt getsockopt
BPF_OBJS := $(BPF_NAMES:%=$(BUILD)/bpf/%.bpf.o)
SKELS := $(BPF_NAMES:%=$(BUILD)/%.skel.h)

HOOK_SRCS := $(foreach d,$(HOOK_DIRS),$(wildcard $(d)/*.c))
HOOK_HDRS := $(foreach d,$(HOOK_DIRS),$(wildcard $(d)/*.h))
LIB_SRCS := $(filter-out hook/cmd/main.c,$(HOOK_SRCS))
HOOK_OBJS := $(HOOK_SRCS:hook/%.c=$(BUILD)/obj/%.o)
LIB_OBJS := $(LIB_SRCS:hook/%.c=$(BUILD)/obj/%.o)
# Headers the build writes. Objects wait for them (order-only); which
# object includes which one, and so is rebuilt after it, the .d files say.
GEN_HDRS := $(SKELS) $(BUILD)/bpf_build_id.h

BIN := $(BUILD)/oci-sockopt-hook

# Quiet build, as in libbpf-bootstrap: `make V=1` shows the commands.
ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.SECONDARY:
.DELETE_ON_ERROR:
.PHONY: FORCE all man deps demo check check-quick check-node check-fresh unit hook-dyn bench fuzz format format-check shellcheck modules-check clean install uninstall
all: $(BIN) man

deps:
	./scripts/deps.sh build

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(@D)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .skel.h,,$(notdir $@))_bpf > $@.tmp
	$(Q)mv $@.tmp $@

# Seeds the policy hashes: a new build never shares an old build's copies.
$(BUILD)/bpf_build_id.h: $(BPF_OBJS)
	$(call msg,GEN,$@)
	$(Q)printf '#define SH_BPF_BUILD_ID 0x%sULL\n' \
		"$$(cat $^ | sha256sum | cut -c1-16)" > $@

# An object that exists without its .d file (built before there were any,
# or the .d lost) is rebuilt: nothing else says which headers it is stale for.
DEP_OBJS = $(HOOK_OBJS) $(LIB_SRCS:hook/%.c=$(BUILD)/san/%.o) $(BUILD)/san/cmd/main.o
$(filter-out $(patsubst %.d,%.o,$(wildcard $(DEP_OBJS:.o=.d))),$(wildcard $(DEP_OBJS))): FORCE

$(BUILD)/obj/%.o: hook/%.c | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# --version also prints what each library was built against: libelf and
# libcgroup have no call that returns their version.
modversion = $(shell $(PKG_CONFIG) --modversion $(1) 2>/dev/null || echo unknown)
$(BUILD)/obj/version.o $(BUILD)/san/version.o: override CFLAGS += \
	-DSH_BUILT_LIBBPF='"$(call modversion,libbpf)"' \
	-DSH_BUILT_LIBELF='"$(call modversion,libelf)"' \
	-DSH_BUILT_ZLIB='"$(call modversion,zlib)"' \
	-DSH_BUILT_JSON_C='"$(call modversion,json-c)"' \
	-DSH_BUILT_LIBCGROUP='"$(call modversion,libcgroup)"'

# The linker's NSS warnings name libcgroup functions the hook never calls
# (see STATIC above): they are dropped, any other message is shown.
NSS_WARNINGS := -e "in statically linked applications requires at runtime" \
	-e "in function .\(cgroup_change_cgroup_flags\|cgroup_parse_rules_file\|config_group_task_perm\)'"

$(BIN): $(HOOK_OBJS) Makefile
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(HOOK_OBJS) -o $@ $(BIN_LIBS) 2>$@.ld; \
		r=$$?; grep -v $(NSS_WARNINGS) $@.ld >&2; rm -f $@.ld; exit $$r

include tests/unit/unit.mk
-include tests/tests.mk
-include tests/fuzz/fuzz.mk
-include bench/bench.mk
-include $(wildcard $(BPF_OBJS:.o=.d) $(HOOK_OBJS:.o=.d))

demo:
	./scripts/deps.sh demo
	$(MAKE) all test-progs
	./scripts/demo.sh

# The build steps of check and check-quick use every core.
CHECK_JOBS ?= $(shell nproc)

# Everything (tests/README.md says what runs and how long it takes).
check:
	./scripts/deps.sh check
	$(MAKE) -j$(CHECK_JOBS) shellcheck all test-progs unit-progs unit-san-progs \
		hook-san hook-dyn fuzz-build bench-build
	$(MAKE) modules-check
	./tests/run.sh
	$(MAKE) FUZZ_PARALLEL=$(CHECK_JOBS) fuzz-smoke bench-smoke

# The inner loop, in under 5 minutes (tests/README.md, "make check-quick"):
# the unit tests plain and under ASan+UBSan, the format, module, shell
# and docs checks, and the fast suites below; no QEMU, no sanitized or
# valgrind reruns of the suites, no fuzzing, no benchmarks.
CHECK_QUICK_TESTS ?= unit- 00-hook-cli 01-cli 07-docs 10-runc 30-refusals 52-explain 57-trust
check-quick:
	./scripts/deps.sh check
	$(MAKE) -j$(CHECK_JOBS) format-check shellcheck all test-progs unit-progs unit-san-progs
	$(MAKE) modules-check
	TESTS='$(CHECK_QUICK_TESTS)' ./tests/run.sh

# The node suite alone (tests/node/README.md): a Debian unstable node with
# systemd and cgroup v2 only, under QEMU; `make check` runs it as
# tests/integration/95-node.sh. Ends with "node: N passed, N failed"; the
# script exits 77 when qemu, mmdebstrap or the mirror cannot be had.
check-node:
	./scripts/deps.sh check
	$(MAKE) all test-progs
	./tests/node/run-node-suite.sh -B $(BUILD)

# The README's two commands, each in a fresh Debian 12 root (not part of
# check: it installs everything twice; run it before a release).
check-fresh:
	./scripts/deps.sh check
	./tests/fresh/run.sh

bench:
	./scripts/deps.sh check
	$(MAKE) all test-progs
	$(MAKE) bench-run

# The same objects with glibc shared, for valgrind and the fault shim.
$(BUILD)/dyn/oci-sockopt-hook: $(HOOK_OBJS) Makefile
	@mkdir -p $(@D)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $(HOOK_OBJS) -o $@ $(PKG_LIBS)

hook-dyn: $(BUILD)/dyn/oci-sockopt-hook

# Prefixed exports, no include or call cycle in hook/, the map (docs/development.md) up to date.
modules-check: $(BIN)
	./scripts/check-modules.py $(BUILD)/obj hook docs/development.md

format:
	clang-format -i $(HOOK_SRCS) $(HOOK_HDRS) bpf/*.[ch] tests/*/*.[ch]

format-check:
	clang-format --dry-run -Werror $(HOOK_SRCS) $(HOOK_HDRS) bpf/*.[ch] tests/*/*.[ch]

# Debian's shellcheck over every shell script (scripts/shellcheck.sh).
shellcheck:
	./scripts/shellcheck.sh

# The hooks.d files point at wherever PREFIX put the binary and the config.
HOOKSD_VARIANTS := oci-sockopt-hook oci-sockopt-hook-always
$(BUILD)/hooks.d-%.json: examples/hooks.d-%.json FORCE
	@mkdir -p $(@D)
	sed -e 's|/usr/local/libexec/oci/hooks.d|$(HOOKDIR)|' \
		-e 's|/etc/oci-sockopt-hook|$(CONFDIR)|' $< > $@

# The preload units, likewise, and the metrics timer for node_exporter.
PRELOAD_UNITS := oci-sockopt-hook-preload.service oci-sockopt-hook-preload.path
METRICS_UNITS := oci-sockopt-hook-metrics.service oci-sockopt-hook-metrics.timer
$(BUILD)/systemd/%: examples/systemd/% FORCE
	@mkdir -p $(@D)
	sed -e 's|/usr/local/libexec/oci/hooks.d|$(HOOKDIR)|' \
		-e 's|/etc/oci-sockopt-hook|$(CONFDIR)|' $< > $@

# The man pages, from their Markdown sources (docs/man/), as crun's are.
GO_MD2MAN ?= go-md2man
MAN_PAGES := $(BUILD)/man/oci-sockopt-hook.1 $(BUILD)/man/oci-sockopt-hook.json.5
$(BUILD)/man/%: docs/man/%.md
	@mkdir -p $(@D)
	$(call msg,MAN,$@)
	$(Q)$(GO_MD2MAN) -in $< -out $@.tmp && mv $@.tmp $@

man: $(MAN_PAGES)

# scripts/install.sh does the installing (docs/install.md): the binary,
# units, man pages, the example config unless one exists, and the hooks.d
# file HOOKS_D chooses (auto: from whether the config has defaults);
# without DESTDIR it also starts the preload and metrics units.
HOOKS_D ?= auto
INSTALL_ENV = BIN='$(BIN)' BUILD='$(BUILD)' DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' \
	SYSCONFDIR='$(SYSCONFDIR)' HOOKDIR='$(HOOKDIR)' HOOKSD='$(HOOKSD)' MANDIR='$(MANDIR)' \
	SYSTEMDDIR='$(SYSTEMDDIR)' CONFDIR='$(CONFDIR)' HOOKS_D='$(HOOKS_D)' \
	EXAMPLE_CONFIG=examples/config.json

install: $(BIN) $(MAN_PAGES) $(HOOKSD_VARIANTS:%=$(BUILD)/hooks.d-%.json) $(PRELOAD_UNITS:%=$(BUILD)/systemd/%) $(METRICS_UNITS:%=$(BUILD)/systemd/%)
	@$(INSTALL_ENV) ./scripts/install.sh install

# Removes what install put there; the config only if it is still the
# unmodified example. Empty directories go too.
uninstall:
	@$(INSTALL_ENV) ./scripts/install.sh uninstall

clean:
	rm -rf $(BUILD)
