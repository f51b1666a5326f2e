# SPDX-License-Identifier: GPL-2.0-only
# C unit tests, built twice: plain, and with ASan+UBSan.
# Every tests/unit/test_NAME.c is a unit test binary unit-NAME.
UNIT_NAMES := $(patsubst tests/unit/test_%.c,%,$(wildcard tests/unit/test_*.c))
UNIT_CFLAGS = $(CFLAGS) -Itests/unit -Itests/lib -DEXAMPLES=\"$(CURDIR)/examples\"
UNIT_BINS := $(UNIT_NAMES:%=$(BUILD)/tests/unit-%)
UNIT_SAN_BINS := $(UNIT_NAMES:%=$(BUILD)/tests/unit-san-%)
SAN_OBJS := $(LIB_SRCS:hook/%.c=$(BUILD)/san/%.o) $(PB_NAMES:%=$(BUILD)/san/pb/%.pb-c.o)

$(BUILD)/san/pb/%.pb-c.o: $(NRI_GEN)/%.pb-c.c | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(NRI_GEN) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/san/%.o: hook/%.c | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c $< -o $@

# A test that makes the hook's allocations fail links with the --wrap
# flags it names (UNIT_LDFLAGS_NAME), and defines the __wrap_ functions.
UNIT_LDFLAGS_wiring := -Wl,--wrap=realloc -Wl,--wrap=free

$(BUILD)/tests/unit-%: tests/unit/test_%.c $(LIB_OBJS) | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $(DEPFLAGS) $< $(LIB_OBJS) -o $@ $(UNIT_LDFLAGS_$*) $(PKG_LIBS)

$(BUILD)/tests/unit-san-%: tests/unit/test_%.c $(SAN_OBJS) | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) $< $(SAN_OBJS) -o $@ $(UNIT_LDFLAGS_$*) $(PKG_LIBS)

# unit and unit-san build and run them (no root needed); the -progs
# targets only build them, for tests/run.sh to run in make check.
unit-progs: $(UNIT_BINS)
unit-san-progs: $(UNIT_SAN_BINS)
unit: unit-progs
	$(Q)./tests/unit/run.sh $(UNIT_BINS)
unit-san: unit-san-progs
	$(Q)./tests/unit/run.sh $(UNIT_SAN_BINS)
.PHONY: unit-progs unit-san-progs unit unit-san

# The hook itself under ASan+UBSan, for the integration suites.
$(BUILD)/san/oci-sockopt-hook: $(SAN_OBJS) $(BUILD)/san/main.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ $(PKG_LIBS)

hook-san: $(BUILD)/san/oci-sockopt-hook
.PHONY: hook-san

-include $(wildcard $(SAN_OBJS:.o=.d) $(BUILD)/san/main.d $(UNIT_BINS:%=%.d) $(UNIT_SAN_BINS:%=%.d))

# Which lines of each module the unit tests run (gcov, no root):
# make unit-coverage prints one line per module, least covered first.
# The generated protobuf code is linked in plain: it is not ours.
COV_OBJS := $(LIB_SRCS:hook/%.c=$(BUILD)/cov/obj/%.o) $(PB_OBJS)
COV_BINS := $(UNIT_NAMES:%=$(BUILD)/cov/unit-%)

$(BUILD)/cov/obj/%.o: hook/%.c | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -O0 --coverage $(DEPFLAGS) -c $< -o $@

$(BUILD)/cov/unit-%: tests/unit/test_%.c $(COV_OBJS) | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) -O0 --coverage $(DEPFLAGS) $< $(COV_OBJS) -o $@ $(UNIT_LDFLAGS_$*) $(PKG_LIBS)

unit-coverage: $(COV_BINS)
	$(Q)find $(BUILD)/cov -name '*.gcda' -delete
	$(Q)./tests/unit/run.sh $(COV_BINS) >/dev/null || true
	$(Q)./tests/unit/coverage.py $(BUILD)/cov/obj $(LIB_SRCS)
.PHONY: unit-coverage

# The hook itself with --coverage (the same objects as unit-coverage,
# and main), for tests/san/suite-coverage.sh: which code each suite runs.
$(BUILD)/cov/oci-sockopt-hook: $(COV_OBJS) $(BUILD)/cov/obj/main.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) --coverage $^ -o $@ $(PKG_LIBS)

hook-cov: $(BUILD)/cov/oci-sockopt-hook
.PHONY: hook-cov

-include $(wildcard $(COV_OBJS:.o=.d) $(BUILD)/cov/obj/main.d $(COV_BINS:%=%.d))
