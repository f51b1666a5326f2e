# SPDX-License-Identifier: GPL-2.0-only
# libFuzzer targets (clang, ASan+UBSan) for the hook's parsers. The top
# Makefile includes this fragment; it also works alone after `make`:
#   make -f tests/fuzz/fuzz.mk fuzz FUZZ_SECONDS=600
#
#   fuzz        each target for FUZZ_SECONDS (default 600), seeded from
#               tests/fuzz/corpus/<target>/ and examples/; prints execs per
#               target and the crash count; fails on any crash
#   fuzz-smoke  replays tests/fuzz/regressions/<target>/, then each target
#               for FUZZ_SMOKE_SECONDS (default 10); for make check
#   fuzz-build  only builds $(BUILD)/fuzz/fuzz_<target>
# FUZZ_TARGETS selects targets, FUZZ_PARALLEL runs that many at once.
# Logs, the growing corpora and crash artifacts live under $(BUILD)/fuzz/.

BUILD ?= build
PKG_CONFIG ?= pkg-config
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_PARALLEL ?= 1
# Extra flags for the targets, e.g. -DFUZZ_IGNORE_NUL (see fuzz_common.h).
FUZZ_DEFINES ?=
FUZZ_ALL_TARGETS := oci_state bundle_config config annotations state_record
FUZZ_TARGETS ?= $(FUZZ_ALL_TARGETS)

FUZZ_DIR := $(BUILD)/fuzz
# version.c parses nothing, and would need zlib linked in.
# hook/ and its folders, as the top Makefile finds them.
HOOK_DIRS ?= $(patsubst %/,%,$(sort $(dir $(wildcard hook/*.c hook/*/*.c))))
FUZZ_HOOK_SRCS := $(filter-out hook/cmd/main.c hook/version.c,\
	$(foreach d,$(HOOK_DIRS),$(wildcard $(d)/*.c)))
FUZZ_OBJS := $(FUZZ_HOOK_SRCS:hook/%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_BINS := $(FUZZ_ALL_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
# The hook's sources include headers that the top Makefile generates
# (skeletons and the like): building the hook first makes all of them.
# Which object includes which header, generated or not, its .d file says.
FUZZ_HOOK_BIN := $(BUILD)/oci-sockopt-hook

FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_BASE_CFLAGS = -g -O1 -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ibpf $(HOOK_DIRS:%=-I%) \
	$(shell $(PKG_CONFIG) --cflags libbpf json-c libcgroup) $(FUZZ_SAN)
FUZZ_LIBS = $(shell $(PKG_CONFIG) --libs libbpf json-c libcgroup)
# The hook's own sources are other people's code under clang: warnings
# there must not stop the fuzzers from building. Ours are -Werror.
FUZZ_WARN := -Wall -Wextra -Wno-unused-parameter

.PHONY: fuzz fuzz-smoke fuzz-build

ifeq ($(V),1)
FUZZ_Q =
else
FUZZ_Q = @
endif

# Alone (make -f tests/fuzz/fuzz.mk), ask the top Makefile for the hook;
# included, its own rule makes it.
ifeq ($(notdir $(firstword $(MAKEFILE_LIST))),fuzz.mk)
$(FUZZ_HOOK_BIN): FORCE
	$(MAKE) -f Makefile all
.PHONY: FORCE
FORCE:
endif

$(FUZZ_DIR)/obj/%.o: hook/%.c | $(FUZZ_HOOK_BIN)
	@mkdir -p $(@D)
	@printf '  %-8s %s\n' FUZZ-CC $@
	$(FUZZ_Q)$(FUZZ_CC) $(FUZZ_BASE_CFLAGS) $(FUZZ_WARN) -fsanitize=fuzzer-no-link \
		-MMD -MP -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	@mkdir -p $(@D)
	@printf '  %-8s %s\n' FUZZ-LD $@
	$(FUZZ_Q)$(FUZZ_CC) $(FUZZ_BASE_CFLAGS) $(FUZZ_WARN) -Werror $(FUZZ_DEFINES) \
		-fsanitize=fuzzer -MMD -MP \
		$< $(FUZZ_OBJS) -o $@ $(FUZZ_LIBS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_BINS:%=%.d)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	BUILD=$(BUILD) tests/fuzz/run-fuzz.sh -j $(FUZZ_PARALLEL) \
		$(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	BUILD=$(BUILD) tests/fuzz/run-fuzz.sh -j $(FUZZ_PARALLEL) -r \
		$(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)
