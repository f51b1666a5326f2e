# SPDX-License-Identifier: GPL-2.0-only
# Test helper programs. The top Makefile includes this fragment.

BUILD ?= build

TEST_PROG_CC ?= gcc
TEST_PROG_CFLAGS := -static -O2 -Wall -Wextra -Werror
# -m32: the same probes through the i386 compat syscall ABI; -mx32:
# through the x32 one (in_compat_syscall() is true for both).
TEST_PROG_CFLAGS32 := $(TEST_PROG_CFLAGS) -m32
TEST_PROG_CFLAGSX32 := $(TEST_PROG_CFLAGS) -mx32
TEST_SHIM_CFLAGS := -shared -fPIC -O2 -Wall -Wextra -Werror -D_GNU_SOURCE

# The 32-bit builds need gcc-multilib, a TEST_PKGS dependency that a
# demo-only machine lacks; 72-escapes.sh skips its compat checks without
# them. Checked with wildcards, so that plain `make` runs no compiler.
# gcc-multilib brings the x32 libraries too (libc6-dev-x32).
M32_OK := $(and $(wildcard /usr/lib32/libc.a),$(wildcard /usr/lib/gcc/*/*/32/crtbeginT.o))
MX32_OK := $(and $(wildcard /usr/libx32/libc.a),$(wildcard /usr/lib/gcc/*/*/x32/crtbeginT.o))
PROBE_PROGS := $(addprefix $(BUILD)/tests/,sockcheck escape pause \
	$(if $(M32_OK),sockcheck32 escape32) $(if $(MX32_OK),sockcheckx32 escapex32))
# Host-side helpers: another tool's cgroup program, an inotify hog.
HOST_PROGS := $(addprefix $(BUILD)/tests/,cgprog inotify_hog)
TEST_PROGS := $(PROBE_PROGS) $(HOST_PROGS) $(BUILD)/tests/faultshim.so

# One static program per attack (tests/attacks/*.c); they may use the
# hook's names table, which is plain C with no library behind it.
ATTACK_PROGS := $(patsubst tests/attacks/%.c,$(BUILD)/tests/attacks/%,\
	$(wildcard tests/attacks/*.c))
ATTACK_CFLAGS := $(TEST_PROG_CFLAGS) -Wno-unused-function -D_GNU_SOURCE -Itests/progs -Itests/attacks -Ihook -Ibpf
ATTACK_HOOK_OBJS := $(BUILD)/tests/obj/config/names.o $(BUILD)/tests/obj/lib/number.o
TEST_PROGS += $(ATTACK_PROGS)

$(BUILD)/tests/obj/%.o: hook/%.c
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(ATTACK_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/attacks/%: tests/attacks/%.c $(ATTACK_HOOK_OBJS)
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(ATTACK_CFLAGS) $(DEPFLAGS) -o $@ $< $(ATTACK_HOOK_OBJS)

# sockcheck32 and escape32: sockcheck.c and escape.c built with -m32;
# sockcheckx32 and escapex32 with -mx32.
$(BUILD)/tests/%x32: tests/progs/%.c
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGSX32) $(DEPFLAGS) -o $@ $<

$(BUILD)/tests/%32: tests/progs/%.c
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS32) $(DEPFLAGS) -o $@ $<

$(BUILD)/tests/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS) $(DEPFLAGS) -o $@ $<

# LD_PRELOAD fault injection into the hook's bpf() calls.
$(BUILD)/tests/faultshim.so: tests/progs/faultshim.c
	@mkdir -p $(@D)
	$(TEST_PROG_CC) $(TEST_SHIM_CFLAGS) $(DEPFLAGS) -MF $@.d -o $@ $< -ldl

.PHONY: test-progs
test-progs: $(TEST_PROGS)

-include $(TEST_PROGS:%=%.d) $(ATTACK_HOOK_OBJS:.o=.d)
