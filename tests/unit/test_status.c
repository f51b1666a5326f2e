// SPDX-License-Identifier: GPL-2.0-only
/* status: its filters, short ids, what a policy's programs enforce in one
 * line, bypass states, the caveats a container gets, and drift.
 *
 * Modules: `cmd_status.c`, `status_view.c`
 */
#include <string.h>

#include "cmd/commands.h"
#include "config/config.h"
#include "observe/status_view.h"
#include "tap.h"

static const char config[] =
	"{\"policies\": {"
	"\"r\": {\"socket\": {\"deny\": ["
	"{\"family\": \"AF_INET6\"},"
	"{\"family\": \"AF_INET\", \"type\": \"SOCK_RAW\"},"
	"{\"protocol\": \"IPPROTO_MPTCP\"}],"
	"\"mark\": 7, \"priority\": 2},"
	"\"setsockopt\": ["
	"{\"level\": \"SOL_SOCKET\", \"option\": \"SO_MARK\", "
	"\"action\": \"deny\"},"
	"{\"level\": \"SOL_SOCKET\", \"option\": \"SO_RCVBUF\", "
	"\"action\": \"clamp\", \"min\": 4096, \"max\": 65536},"
	"{\"level\": \"SOL_TCP\", \"option\": \"TCP_CONGESTION\", "
	"\"action\": \"force\", \"value\": \"reno\"},"
	"{\"level\": \"SOL_IP\", \"option\": \"IP_TTL\", "
	"\"action\": \"force\", \"value\": 64}]},"
	"\"m\": {\"socket\": {\"mark\": 1}},"
	"\"a\": {\"default\": \"deny\", \"setsockopt\": ["
	"{\"level\": \"SOL_SOCKET\", \"option\": \"SO_KEEPALIVE\", "
	"\"action\": \"allow\"}]}"
	"}}";

static void rules(const struct sh_config *cfg, const char *policy,
		  enum sh_prog_kind kind, bool bypass, const char *want)
{
	char buf[SH_STATUS_VIEW_TEXT_MAX];

	status_view_rules_text(policy ? config_find_policy(cfg, policy) : NULL,
			       kind, bypass, buf, sizeof(buf));
	ok(!strcmp(buf, want), "%s %s: %s", policy ? policy : "(none)",
	   kind_get(kind)->name, buf);
}

static void test_rules(void)
{
	struct sh_error err = { 0 };
	struct sh_config cfg;
	char small[24];

	if (config_parse("t.json", config, strlen(config), &cfg, &err)) {
		ok(0, "the test config parses: %s", err.msg);
		return;
	}
	rules(&cfg, "r", SH_PROG_SOCK, false,
	      "deny AF_INET6; deny AF_INET SOCK_RAW; deny IPPROTO_MPTCP; mark 7; priority 2");
	rules(&cfg, "r", SH_PROG_SET, false,
	      "default allow: deny SOL_SOCKET SO_MARK; clamp SOL_SOCKET SO_RCVBUF 4096..65536; force SOL_TCP TCP_CONGESTION =\"reno\"; force SOL_IP IP_TTL =64");
	rules(&cfg, "r", SH_PROG_GET, false, "default allow: no rules");
	rules(&cfg, "m", SH_PROG_SOCK, true, "mark 1; bypass-prot-mem");
	rules(&cfg, "a", SH_PROG_SET, false,
	      "default deny (allow-list): allow SOL_SOCKET SO_KEEPALIVE");
	rules(&cfg, NULL, SH_PROG_SOCK, false, "counts sockets");
	rules(&cfg, NULL, SH_PROG_SOCK, true, "bypass-prot-mem");
	rules(&cfg, NULL, SH_PROG_SET, false, "no rules");
	status_view_rules_text(config_find_policy(&cfg, "r"), SH_PROG_SOCK,
			       false, small, sizeof(small));
	ok(strlen(small) == sizeof(small) - 1 &&
		   !strcmp(small + strlen(small) - 3, "..."),
	   "a text that does not fit ends in '...': %s", small);
	config_free(&cfg);
}

static void test_bypass(void)
{
	is_str(status_view_bypass_token(status_view_bypass_state(false, false)),
	       "not_asked", "bypass not asked");
	is_str(status_view_bypass_token(status_view_bypass_state(true, true)),
	       "applied", "bypass applied");
	is_str(status_view_bypass_token(status_view_bypass_state(true, false)),
	       "fell_back", "bypass fell back");
	ok(strstr(status_view_bypass_text(STATUS_VIEW_BYPASS_FELL_BACK),
		  "fell back"),
	   "the fell-back text says so");
}

static void put_attachment(struct sh_attachment *att, int nr, ...)
{
	static const enum bpf_attach_type types[] = {
		BPF_CGROUP_INET_SOCK_CREATE, BPF_CGROUP_SETSOCKOPT,
		BPF_CGROUP_GETSOCKOPT
	};

	memset(att, 0, sizeof(*att));
	strcpy(att->id, "c1");
	strcpy(att->cg.rel, "/c1");
	strcpy(att->policy, "r");
	for (int i = 0; i < nr; i++) {
		att->progs.prog[i].type = types[i];
		att->progs.prog[i].id = 40 + (__u32)i;
	}
	att->progs.nr = nr;
}

static void caveat_ids(const struct caveats_input *in, char *buf, size_t len)
{
	struct caveats cav;

	status_view_caveats(in, &cav);
	buf[0] = '\0';
	for (int i = 0; i < cav.nr; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 i ? " " : "", cav.c[i].id);
}

static void test_caveats(void)
{
	struct sh_attachment att;
	struct caveats_input in = { .att = &att, .live = true };
	struct sh_policy mark_only = { .has_mark = true };
	struct caveats cav;
	char ids[256];

	put_attachment(&att, 3, 0);
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "compat_syscalls packet_sockets sock_diag"),
	   "all three programs, own cgroup: compat, packet and sock_diag caveats (%s)",
	   ids);
	put_attachment(&att, 1, 0);
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "packet_sockets"),
	   "sock_create alone: no compat caveat");
	put_attachment(&att, 0, 0);
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, ""), "no program: no caveat");
	att.cg.created = true;
	strcpy(att.cg.parent_rel, "/parent");
	att.bypass = true;
	strcpy(att.bypass_source, "policy bulk");
	in.live = false;
	in.other_programs = "setsockopt 9 (other)";
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids,
		   "stale_record hook_made_cgroup bypass_fell_back other_programs"),
	   "gone, hook-made cgroup, bypass fell back, other programs");
	status_view_caveats(&in, &cav);
	ok(strstr(cav.c[1].text, "NOT policed") &&
		   strstr(cav.c[1].text, "/parent"),
	   "hook_made_cgroup names the parent: %s", cav.c[1].text);
	ok(strstr(cav.c[3].text, "setsockopt 9 (other)"),
	   "other_programs names them");
	put_attachment(&att, 1, 0);
	in = (struct caveats_input){ .att = &att, .live = true };
	in.policy = &mark_only;
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "packet_sockets sock_diag mptcp_subflows"),
	   "a mark without an MPTCP deny: the mptcp caveat, and sock_diag shows the mark (%s)",
	   ids);
	mark_only.nr_deny = 1;
	mark_only.deny[0] = (struct sh_sock_rule){ SH_ANY, SH_ANY, 262 };
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "packet_sockets sock_diag"),
	   "a mark with an MPTCP deny: no mptcp caveat (%s)", ids);
	in.families = "AF_RDS (module present)";
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "packet_sockets kernel_sockets sock_diag"),
	   "a kernel that offers AF_RDS: the kernel_sockets caveat (%s)", ids);
	status_view_caveats(&in, &cav);
	ok(strstr(cav.c[1].text, "AF_RDS (module present)") &&
		   strstr(cav.c[1].text, "seccomp-socket-allowlist.json"),
	   "kernel_sockets names the family and the seccomp example: %s",
	   cav.c[1].text);
	put_attachment(&att, 0, 0);
	caveat_ids(&in, ids, sizeof(ids));
	ok(!strcmp(ids, "sock_diag"),
	   "no sock_create program: no kernel_sockets caveat (%s)", ids);
	is_str(status_view_caveat_name(CAVEATS_COMPAT_SYSCALLS),
	       "compat_syscalls", "status_view_caveat_name");
}

static void drift(__u32 recorded, int nr, __u32 a, __u32 b, const char *state,
		  const char *want)
{
	struct drift_kind k = { .type = BPF_CGROUP_SETSOCKOPT,
				.recorded = recorded,
				.nr_ours = nr,
				.ours = { a, b } };
	char buf[SH_DRIFT_TEXT_MAX];
	int r = status_view_drift_text(&k, "/c1", buf, sizeof(buf));

	is_str(status_view_drift_state_name(status_view_drift_state_of(&k)),
	       state, "drift: %s", state);
	if (want)
		ok(r == 1 && !strcmp(buf, want), "drift %s: %s", state,
		   r ? buf : "(none)");
	else
		ok(r == 0, "drift %s: no line", state);
}

static void test_drift(void)
{
	struct sh_attachment att;
	struct drift_report rep;

	drift(0, 0, 0, 0, "none", NULL);
	drift(42, 1, 42, 0, "attached", NULL);
	drift(42, 0, 0, 0, "missing",
	      "record says setsockopt program 42 on /c1, the cgroup has none");
	drift(42, 1, 43, 0, "replaced",
	      "record says setsockopt program 42 on /c1, the cgroup has 43");
	drift(42, 2, 42, 43, "extra",
	      "record says setsockopt program 42 on /c1, the cgroup has 42, 43");
	drift(0, 1, 43, 0, "unrecorded",
	      "the record names no setsockopt program on /c1, the cgroup has 43");
	put_attachment(&att, 2, 0);
	status_view_drift_init(&att, &rep);
	ok(rep.kind[SH_PROG_SOCK].recorded == 40 &&
		   rep.kind[SH_PROG_SET].recorded == 41 &&
		   rep.kind[SH_PROG_GET].recorded == 0,
	   "status_view_drift_init takes each kind's id from the record");
}

static void test_filters(void)
{
	struct cmd_status_filter f = { 0 };
	struct sh_attachment att = { 0 };
	char id[80];

	strcpy(att.k8s_namespace, "team-a");
	strcpy(att.pod, "web-0");
	strcpy(att.container, "app");
	strcpy(att.policy, "restricted");
	ok(cmd_status_match(&att, &f), "no filter: every record");
	f.k8s_namespace = "team-a";
	f.policy = "restricted";
	ok(cmd_status_match(&att, &f), "namespace and policy match");
	f.pod = "web";
	ok(!cmd_status_match(&att, &f), "a pod prefix does not match");
	f.pod = NULL;
	att.k8s_namespace[0] = '\0';
	ok(!cmd_status_match(&att, &f), "no namespace: no match");
	ok(!cmd_status_bad_filter(&f), "valid names pass");
	f.container = "a b";
	is_str(cmd_status_bad_filter(&f), "--container",
	       "a space: --container is refused");
	f.container = "-app";
	is_str(cmd_status_bad_filter(&f), "--container",
	       "a leading '-': refused");
	f.container = NULL;
	f.policy = "";
	is_str(cmd_status_bad_filter(&f), "--policy",
	       "an empty policy: refused");
	f.policy = "a.b_c-1";
	ok(!cmd_status_bad_filter(&f), "policy name characters pass");
	f.k8s_namespace = "Team_A";
	ok(!cmd_status_bad_filter(&f), "a podman name passes");
	cmd_status_short_id(
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		id, sizeof(id));
	ok(!strcmp(id, "0123456789ab"), "a 64 hex digit id: its first 12");
	cmd_status_short_id("my-container", id, sizeof(id));
	ok(!strcmp(id, "my-container"), "any other id: whole");
}

int main(void)
{
	test_rules();
	test_bypass();
	test_caveats();
	test_drift();
	test_filters();
	return tap_done();
}
