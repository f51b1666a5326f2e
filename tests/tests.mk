# SPDX-License-Identifier: GPL-2.0-only
# Test helper programs. The top Makefile includes this fragment.

BUILD ?= build

TEST_PROG_CC ?= gcc
TEST_PROG_CFLAGS := -static -O2 -Wall -Wextra -Werror
# -m32: the same probes through the i386 compat syscall ABI.
TEST_PROG_CFLAGS32 := $(TEST_PROG_CFLAGS) -m32
TEST_SHIM_CFLAGS := -shared -fPIC -O2 -Wall -Wextra -Werror -D_GNU_SOURCE

# The 32-bit builds need gcc-multilib, a TEST_PKGS dependency that a
# demo-only machine lacks; 72-escapes.sh skips its compat checks without
# them. Checked with wildcards, so that plain `make` runs no compiler.
M32_OK := $(and $(wildcard /usr/lib32/libc.a),$(wildcard /usr/lib/gcc/*/*/32/crtbeginT.o))
TEST_PROGS := $(addprefix $(BUILD)/tests/,sockcheck escape faultshim.so \
	$(if $(M32_OK),sockcheck32 escape32))
# Host-side helpers: another tool's cgroup program, an inotify hog.
TEST_PROGS += $(addprefix $(BUILD)/tests/,cgprog inotify_hog)

# One static program per attack (tests/attacks/*.c); they may use the
# hook's names table, which is plain C with no library behind it.
ATTACK_PROGS := $(patsubst tests/attacks/%.c,$(BUILD)/tests/attacks/%,\
	$(wildcard tests/attacks/*.c))
ATTACK_CFLAGS := $(TEST_PROG_CFLAGS) -Wno-unused-function -D_GNU_SOURCE -Itests/progs -Itests/attacks -Ihook -Ibpf
TEST_PROGS += $(ATTACK_PROGS)
ATTACK_HOOK_SRCS := hook/names.c hook/number.c hook/options.c

$(BUILD)/tests/attacks/%: tests/attacks/%.c $(wildcard tests/attacks/*.h) \
		tests/progs/probe_util.h $(ATTACK_HOOK_SRCS) $(ATTACK_HOOK_SRCS:.c=.h)
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(ATTACK_CFLAGS) -o $@ $< $(ATTACK_HOOK_SRCS)

$(BUILD)/tests/sockcheck: tests/progs/sockcheck.c tests/progs/probe_util.h
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS) -o $@ $<

$(BUILD)/tests/sockcheck32: tests/progs/sockcheck.c tests/progs/probe_util.h
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS32) -o $@ $<

$(BUILD)/tests/escape: tests/progs/escape.c tests/progs/probe_util.h
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS) -o $@ $<

$(BUILD)/tests/escape32: tests/progs/escape.c tests/progs/probe_util.h
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS32) -o $@ $<

$(BUILD)/tests/cgprog $(BUILD)/tests/inotify_hog: $(BUILD)/tests/%: \
		tests/progs/%.c
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS) -o $@ $<

# LD_PRELOAD fault injection into the hook's bpf() calls.
$(BUILD)/tests/faultshim.so: tests/progs/faultshim.c
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_SHIM_CFLAGS) -o $@ $< -ldl

.PHONY: test-progs
test-progs: $(TEST_PROGS)
