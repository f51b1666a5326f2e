# SPDX-License-Identifier: GPL-2.0-only
# Test helper programs. The top Makefile includes this fragment.

BUILD ?= build

TEST_PROG_CC ?= gcc
TEST_PROG_CFLAGS := -static -O2 -Wall -Wextra -Werror

$(BUILD)/tests/sockcheck: tests/progs/sockcheck.c
	@mkdir -p $(dir $@)
	$(TEST_PROG_CC) $(TEST_PROG_CFLAGS) -o $@ $<

.PHONY: test-progs
test-progs: $(BUILD)/tests/sockcheck
