# SPDX-License-Identifier: GPL-2.0-only
# C unit tests, built twice: plain, and with ASan+UBSan.
UNIT_NAMES := config container oci_policy options cgroup_rules state_record lint require audit_log prom stats status labelkey footprint fileio ttrpc_mux nri families toml wiring
UNIT_CFLAGS = $(CFLAGS) -Itests/unit -DEXAMPLES=\"$(CURDIR)/examples\"
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

$(BUILD)/tests/unit-%: tests/unit/test_%.c $(LIB_OBJS) | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $(DEPFLAGS) $< $(LIB_OBJS) -o $@ $(PKG_LIBS)

$(BUILD)/tests/unit-san-%: tests/unit/test_%.c $(SAN_OBJS) | $(GEN_HDRS)
	@mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) $< $(SAN_OBJS) -o $@ $(PKG_LIBS)

unit: $(UNIT_BINS)
unit-san: $(UNIT_SAN_BINS)

# The hook itself under ASan+UBSan, for the integration suites.
$(BUILD)/san/oci-sockopt-hook: $(SAN_OBJS) $(BUILD)/san/cmd/main.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $^ -o $@ $(PKG_LIBS)

hook-san: $(BUILD)/san/oci-sockopt-hook
.PHONY: hook-san

-include $(wildcard $(SAN_OBJS:.o=.d) $(BUILD)/san/cmd/main.d $(UNIT_BINS:%=%.d) $(UNIT_SAN_BINS:%=%.d))
