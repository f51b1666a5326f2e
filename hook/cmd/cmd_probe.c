// SPDX-License-Identifier: GPL-2.0-only
/*
 * `probe`: what this kernel and host can do, checked by doing it (loading
 * the real programs), not by reading version numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup/cg.h"
#include "cmd/commands.h"
#include "config/families.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/jsonw.h"
#include "lib/log.h"
#include "lib/mountinfo.h"
#include "lib/number.h"
#include "prog/generic.h"
#include "prog/keys.h"
#include "prog/load.h"
#include "prog/pin.h"
#include "state/state.h"

#define PROBE_INT_FILE_MAX 64 /* a sysctl holding one number */

struct probe_result {
	struct cg_root root;
	bool cgroup2;
	bool nsdelegate; /* the hierarchy's namespaces are boundaries */
	bool bpf_syscall;
	bool prog_sock;
	bool prog_sockopt;
	int bypass; /* 1 yes, 0 no, <0 could not tell */
	bool sysctl_bypass;
	int unpriv_bpf; /* kernel.unprivileged_bpf_disabled, -1 unknown */
	bool state_writable;
	int pins; /* preloaded programs; -errno: no usable pin directory */
	int generic; /* of the pins, generic programs (generic.h) */
	char pin_error[SH_ERROR_MSG_MAX];
	/* Families whose TCP/UDP no cgroup program sees (families.h). */
	struct family_seen families[FAMILIES_MAX];
	int nr_families_offered;
	enum bpffs_state bpffs; /* where the pin directory would go */
	char bpffs_why[SH_ERROR_MSG_MAX];
	struct keys_state keys; /* kept on by preload (keep_keys) */
	char keys_error[SH_ERROR_MSG_MAX];
};

static int read_int_file(const char *path)
{
	_cleanup_free_ char *text = NULL;
	long long v;
	size_t len;

	if (fileio_read_at(AT_FDCWD, path, 0, PROBE_INT_FILE_MAX, &text, &len))
		return -1;
	text[strcspn(text, "\n")] = '\0';
	return number_parse(text, 0, INT_MAX, &v) ? -1 : (int)v;
}

static bool state_dir_writable(void)
{
	const char *dir = state_dir();

	if (access(dir, W_OK) == 0)
		return true;
	/* Not created yet: the hook makes it under a writable parent. */
	return errno == ENOENT && access("/run", W_OK) == 0;
}

static int count_pin(int dir, const char *name, const char *type, uint64_t hash,
		     void *data)
{
	struct probe_result *p = data;

	(void)dir, (void)name;
	if (type && generic_is_pin(type, hash))
		p->generic++;
	else
		p->pins += type != NULL;
	return 0;
}

static void probe_pins(struct probe_result *p)
{
	struct sh_error err = { 0 };
	_cleanup_close_ int dir = pin_dir_open(/* create= */ false, &err);

	p->pins = p->generic = 0;
	if (dir >= 0 && pin_foreach(dir, count_pin, p, &err) == 0)
		return;
	p->pins = dir >= 0 ? err.code : dir;
	snprintf(p->pin_error, sizeof(p->pin_error), "%s", err.msg);
}

static bool probe_nsdelegate(void)
{
	struct mountinfo mi = { 0 };
	const char *text = mountinfo_text(&mi);
	bool has = text && mountinfo_cgroup2_nsdelegate(text);

	mountinfo_done(&mi);
	return has;
}

static void run_probes(struct probe_result *p)
{
	struct sh_error err = { 0 };

	memset(p, 0, sizeof(*p));
	p->cgroup2 = cg_find_root(&p->root, &err) == 0;
	p->nsdelegate = p->cgroup2 && probe_nsdelegate();
	p->prog_sock = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK,
						  NULL) == 1;
	p->prog_sockopt = libbpf_probe_bpf_prog_type(
				  BPF_PROG_TYPE_CGROUP_SOCKOPT, NULL) == 1;
	p->bpf_syscall = p->prog_sock || errno != ENOSYS;
	p->bypass = p->prog_sock ? load_probe_bypass() : 0;
	p->sysctl_bypass = access("/proc/sys/net/core/bypass_prot_mem", F_OK) ==
			   0;
	p->unpriv_bpf =
		read_int_file("/proc/sys/kernel/unprivileged_bpf_disabled");
	p->state_writable = state_dir_writable();
	p->bpffs =
		pin_bpffs_check(pin_dir(), p->bpffs_why, sizeof(p->bpffs_why));
	probe_pins(p);
	if (keys_query(&p->keys, &err))
		snprintf(p->keys_error, sizeof(p->keys_error), "%s", err.msg);
	p->nr_families_offered = families_probe(p->families);
}

static struct json_object *families_json(const struct probe_result *p)
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; i < FAMILIES_MAX; i++)
		json_object_object_add(
			o, p->families[i].name,
			json_object_new_string(
				families_state_name(p->families[i].state)));
	return o;
}

/* Text: on stderr, as validate's warnings. JSON: in "warnings", so that
 * stdout and stderr read together still parse. */
static struct json_object *warnings_json(const struct probe_result *p)
{
	struct json_object *arr = json_object_new_array();
	char text[SH_LOG_LINE_MAX];

	families_warning(p->families, text, sizeof(text));
	if (text[0])
		json_object_array_add(arr, json_object_new_string(text));
	return arr;
}

static void warn_families(const struct probe_result *p)
{
	char text[SH_LOG_LINE_MAX];

	families_warning(p->families, text, sizeof(text));
	if (text[0])
		log_warn("%s", text);
}

static const char *const bpffs_names[] = {
	[BPFFS_MOUNTED] = "mounted",
	[BPFFS_MOUNTABLE] = "mountable",
	[BPFFS_UNUSABLE] = "unusable",
};

static const char *verdict(const struct probe_result *p)
{
	if (!p->cgroup2)
		return "unusable: no cgroup2 hierarchy is mounted";
	if (!p->prog_sock || !p->prog_sockopt)
		return "unusable: cannot load cgroup socket programs (need root/CAP_BPF and Linux >= 5.3)";
	if (!p->state_writable)
		return "unusable: state directory is not writable";
	if (p->bypass != 1)
		return "ready: socket policy works; bypass-prot-mem needs Linux >= 6.19";
	return "ready: socket policy and bypass-prot-mem work";
}

/* {"kept": [kinds], "cgroup": path or null, "populated": bool, "error"} */
static struct json_object *keys_json(const struct probe_result *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *kept = json_object_new_array();

	for (int k = 0; k < SH_PROG_KINDS; k++)
		if (p->keys.kept[k])
			json_object_array_add(kept, json_object_new_string(
							    kind_get(k)->name));
	json_object_object_add(o, "kept", kept);
	jsonw_str(o, "cgroup", p->keys.cgroup[0] ? p->keys.cgroup : NULL);
	jsonw_bool(o, "populated", p->keys.populated);
	jsonw_str(o, "error", p->keys_error[0] ? p->keys_error : NULL);
	return o;
}

static void print_keys(const struct probe_result *p)
{
	char kept[64];

	keys_text(&p->keys, kept, sizeof(kept));
	if (p->keys_error[0])
		printf("static keys kept on:        unknown (%s)\n",
		       p->keys_error);
	else if (!p->keys.cgroup[0])
		printf("static keys kept on:        none (keep_keys off, or no preload)\n");
	else
		printf("static keys kept on:        %s (cgroup %s%s)\n", kept,
		       p->keys.cgroup,
		       p->keys.populated ?
			       "; it holds processes: move them out" :
			       "");
}

static void print_json(const struct probe_result *p)
{
	_cleanup_json_ struct json_object *o = json_object_new_object();

	jsonw_str(o, "cgroup2_mount", p->cgroup2 ? p->root.mount : NULL);
	jsonw_bool(o, "hybrid", p->root.hybrid);
	if (p->cgroup2)
		jsonw_bool(o, "cgroup2_nsdelegate", p->nsdelegate);
	else
		json_object_object_add(o, "cgroup2_nsdelegate", NULL);
	jsonw_bool(o, "bpf_syscall", p->bpf_syscall);
	jsonw_bool(o, "prog_type_cgroup_sock", p->prog_sock);
	jsonw_bool(o, "prog_type_cgroup_sockopt", p->prog_sockopt);
	jsonw_bool(o, "bypass_prot_mem", p->bypass == 1);
	jsonw_bool(o, "sysctl_bypass_prot_mem", p->sysctl_bypass);
	jsonw_int(o, "unprivileged_bpf_disabled", p->unpriv_bpf);
	jsonw_str(o, "state_dir", state_dir());
	jsonw_bool(o, "state_dir_writable", p->state_writable);
	jsonw_str(o, "pin_dir", pin_dir());
	jsonw_int(o, "preloaded_programs", p->pins < 0 ? 0 : p->pins);
	jsonw_int(o, "generic_programs", p->pins < 0 ? 0 : p->generic);
	jsonw_str(o, "pin_dir_error",
		  p->pins < 0 && p->pins != -ENOENT ? p->pin_error : NULL);
	json_object_object_add(o, "unseen_socket_families", families_json(p));
	json_object_object_add(o, "warnings", warnings_json(p));
	json_object_object_add(o, "bpffs",
			       json_object_new_string(bpffs_names[p->bpffs]));
	json_object_object_add(o, "bpffs_error",
			       p->bpffs == BPFFS_UNUSABLE ?
				       json_object_new_string(p->bpffs_why) :
				       NULL);
	json_object_object_add(o, "static_keys", keys_json(p));
	jsonw_str(o, "verdict", verdict(p));
	puts(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static const char *yes(bool v)
{
	return v ? "yes" : "no";
}

/* Preload and record mode pin on it. */
static void print_bpffs(const struct probe_result *p)
{
	if (p->bpffs == BPFFS_MOUNTED)
		printf("BPF filesystem:             mounted (pin directory %s)\n",
		       pin_dir());
	else if (p->bpffs == BPFFS_MOUNTABLE)
		printf("BPF filesystem:             none at %s yet: preload and record mode mount one there\n",
		       SH_BPFFS_DEFAULT);
	else
		printf("BPF filesystem:             unusable: %s\n",
		       p->bpffs_why);
}

static void print_text(const struct probe_result *p)
{
	printf("cgroup2 mount:              %s%s\n",
	       p->cgroup2 ? p->root.mount : "(none)",
	       p->root.hybrid ? " (hybrid host)" : "");
	if (p->cgroup2)
		printf("cgroup2 nsdelegate:         %s\n",
		       p->nsdelegate ?
			       "yes (a cgroup namespace bounds a container's moves)" :
			       "no (a cgroup namespace does not bound a bind of the tree)");
	printf("bpf syscall:                %s\n", yes(p->bpf_syscall));
	printf("CGROUP_SOCK programs:       %s\n", yes(p->prog_sock));
	printf("CGROUP_SOCKOPT programs:    %s\n", yes(p->prog_sockopt));
	printf("bypass-prot-mem (BPF):      %s\n", yes(p->bypass == 1));
	printf("net.core.bypass_prot_mem:   %s\n", yes(p->sysctl_bypass));
	printf("unprivileged_bpf_disabled:  %d\n", p->unpriv_bpf);
	printf("state dir %s writable: %s\n", state_dir(),
	       yes(p->state_writable));
	print_bpffs(p);
	if (p->pins >= 0)
		printf("preloaded programs:         %d in %s, and %d generic (%s)\n",
		       p->pins, pin_dir(), p->generic,
		       p->generic ?
			       "a policy not preloaded starts without loading" :
			       "a policy not preloaded loads at start");
	else if (p->pins == -ENOENT && p->bpffs == BPFFS_UNUSABLE)
		printf("preloaded programs:         none (preload is impossible: %s)\n",
		       p->bpffs_why);
	else if (p->pins == -ENOENT)
		printf("preloaded programs:         none (no %s: run `oci-sockopt-hook preload`)\n",
		       pin_dir());
	else
		printf("preloaded programs:         none (%s)\n", p->pin_error);
	printf("families no program sees:  ");
	for (int i = 0; i < FAMILIES_MAX; i++)
		printf("%s%s %s", i ? ", " : " ", p->families[i].name,
		       families_state_name(p->families[i].state));
	printf("\n");
	print_keys(p);
	printf("verdict: %s\n", verdict(p));
}

static int run(const struct cli_command *cmd, const struct cli_global *global,
	       int argc, char **argv)
{
	struct probe_result res;
	struct cli_parser p;
	int end = cli_parse(&p, cmd, global, argc, argv);

	if (end)
		return cli_exit(end);
	run_probes(&res);
	if (p.json) {
		print_json(&res);
	} else {
		warn_families(&res);
		print_text(&res);
	}
	return 0;
}

const struct cli_command cmd_probe_command = {
	.name = "probe",
	.summary = "what this kernel and host support",
	.description =
		"The cgroup v2 mount, each program kind and its bypass-prot-mem\n"
		"variant loaded for real, the attach types, the programs\n"
		"preload pinned, and what the kernel offers of the socket\n"
		"families whose TCP/UDP no cgroup program sees (a warning when\n"
		"it offers any; --json: in \"warnings\"); then a verdict.\n",
	.options = cli_json_only,
	.run = run,
};
