# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks: `make bench-run` (the full run, a table and
# build/bench/results.json), `make bench-smoke` (every benchmark for a
# few iterations, no timing verdicts; for make check) and `make bench-gap`
# (where a `runc run` with our hooks spends its time beyond one with
# /bin/true hooks: an accounting table, and build/bench/gap/). The top
# Makefile includes this fragment; it uses its BUILD, BIN and BPF_OBJS.

BUILD ?= build
BENCH_BUILD := $(BUILD)/bench
BENCH_CC ?= $(CC)
BENCH_CLANG ?= $(CLANG)
BENCH_BPFTOOL ?= $(BPFTOOL)
BENCH_PKG_CONFIG ?= $(PKG_CONFIG)

BENCH_CFLAGS = -O2 -g -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 \
	-Wno-unused-parameter -D_GNU_SOURCE -I$(BENCH_BUILD) -Ibench \
	$(shell $(BENCH_PKG_CONFIG) --cflags libbpf)
BENCH_LIBS = $(shell $(BENCH_PKG_CONFIG) --libs libbpf)
# The top Makefile's target flags and clang's system include directories.
BENCH_BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall \
	-Werror $(CLANG_BPF_SYS_INCLUDES)

BENCH_BPF_NAMES := empty keys
BENCH_SKELS := $(BENCH_BPF_NAMES:%=$(BENCH_BUILD)/%.skel.h)
BENCH_OBJS := $(patsubst bench/%.c,$(BENCH_BUILD)/obj/%.o,\
	bench/sockbench.c bench/sb_bpf.c bench/sb_exec.c bench/sb_seccomp.c)
SOCKBENCH := $(BENCH_BUILD)/sockbench
# The baseline hook that reads the state (bench/readstate.c), static.
READSTATE := $(BENCH_BUILD)/readstate

$(BENCH_BUILD)/%.bpf.o: bench/%.bpf.c
	@mkdir -p $(@D)
	$(BENCH_CLANG) $(BENCH_BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BENCH_BUILD)/%.skel.h: $(BENCH_BUILD)/%.bpf.o
	$(BENCH_BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp
	mv $@.tmp $@

$(BENCH_BUILD)/obj/%.o: bench/%.c | $(BENCH_SKELS)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(SOCKBENCH): $(BENCH_OBJS)
	$(BENCH_CC) $(BENCH_CFLAGS) $^ -o $@ $(BENCH_LIBS)

$(READSTATE): bench/readstate.c
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -static-pie $< -o $@

.PHONY: bench-build bench-run bench-smoke bench-gap bench-format-check bench-nri bench-nri-smoke
bench-build: $(SOCKBENCH) $(READSTATE) $(if $(BIN),$(BIN)) $(BPF_OBJS)

bench-run: bench-build
	BUILD=$(BUILD) ./bench/run.sh

bench-smoke: bench-build
	BUILD=$(BUILD) ./bench/run.sh --smoke

bench-gap: bench-build
	BUILD=$(BUILD) ./bench/runc_gap.sh

bench-format-check:
	clang-format --dry-run -Werror bench/*.[ch]

-include $(BENCH_OBJS:.o=.d) $(BENCH_BPF_NAMES:%=$(BENCH_BUILD)/%.bpf.d)

# What the NRI plugin adds to a container's creation through the CRI, on a
# private containerd 2.1.9 (bench/nri.sh): `make bench` runs it after
# bench-run.
bench-nri: $(if $(BIN),$(BIN))
	BUILD=$(BUILD) ./bench/nri.sh

bench-nri-smoke: $(if $(BIN),$(BIN))
	BUILD=$(BUILD) ./bench/nri.sh --smoke
