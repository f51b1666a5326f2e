#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The command line, command by command (hook/cmd/cli.c): every command x
# every option the binary knows. The table below says which command takes
# which option, written here on its own rather than read from the hook:
#  - an option a command takes is accepted: `CMD --OPT [VALUE] --help`
#    prints CMD's usage and exits 0 (options are read in order, so --help
#    is reached only when --OPT was taken, and nothing runs);
#  - anywhere else it is a usage error: exit 2, nothing on stdout, one line
#    on stderr that names the command and the option;
#  - `CMD --help` and `help CMD` print the same usage, whose options are
#    exactly the table's; `--help` and `help` list every command;
#  - operands: too many, or record without its ID, is a usage error;
#  - the documented global forms (`--config PATH CMD`, `--json CMD`) and
#    options after an operand still work, run for real where that needs
#    no root (validate, metrics).
# Needs no root: nothing is attached, loaded or written outside $tmp.
#
# Modules: `cli.c`, `main.c`, every `cmd_*.c`
# Root: no
# shellcheck source-path=SCRIPTDIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/tap.sh
. "$top/tests/lib/tap.sh"
HOOK=${HOOK:-$top/build/oci-sockopt-hook}
[ -x "$HOOK" ] || tap_bail "no hook at $HOOK (make first)"
tmp=$(mktemp -d) || tap_bail "mktemp"
trap 'rm -rf "$tmp"' EXIT
CONFIG=$top/examples/config.json

# command -> the options it takes after its name.
declare -A TAKES=(
	[prestart]="config cdi-device"
	[createRuntime]="config cdi-device"
	[poststop]="config cdi-device"
	[hook]="config cdi-device"
	[probe]="json"
	[status]="config json namespace pod container policy"
	[explain]="config json bundle"
	[validate]="config json hooks-dir"
	[gc]="json"
	[metrics]="output"
	[features]="config json nfd-file ctd-config hooks-dir"
	[record]="json"
	[preload]="config json unpin"
	[apply]="config json dry-run all"
	[nri]="config socket"
	[runtime]="config runtime dry-run restart hook-path hook-env ctd-config drop-in keep-net-raw hooks-dir crio-dir unit nri add-import cdi cdi-dir docker-config default-runtime"
	[runtime-exec]="config runc hook-env"
	[cdi]="config output hook-path hook-env cdi-dir"
	[help]=""
)
COMMANDS="prestart createRuntime poststop hook probe status explain validate gc metrics features record preload apply nri runtime cdi runtime-exec help"
# Every option any command takes, and two no command takes.
OPTIONS="config json namespace pod container policy bundle hooks-dir output nfd-file unpin socket
ctd-config runtime dry-run all restart hook-path hook-env drop-in keep-net-raw crio-dir unit nri add-import cdi-dir cdi-device docker-config runc
version verbose"
FLAGS=" json unpin dry-run all restart keep-net-raw add-import version verbose cdi default-runtime "

takes() # CMD OPT
{
	[[ " ${TAKES[$1]} " == *" $2 "* ]]
}

opt_args() # OPT: the option as a command line gives it
{
	if [[ $FLAGS == *" $1 "* ]]; then
		echo "--$1"
	else
		echo "--$1 x"
	fi
}

# run ARGS...: the hook with stdin closed; sets rc, out, err.
run()
{
	out=$(OCI_SOCKOPT_HOOK_STATE_DIR=$tmp/state \
		OCI_SOCKOPT_HOOK_PIN_DIR=$tmp/pins timeout 20 "$HOOK" "$@" \
		</dev/null 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}

# usage_error DESC REGEX ARGS...: exit 2, no stdout, one stderr line like
# "oci-sockopt-hook: REGEX".
usage_error()
{
	local desc=$1 re=$2

	shift 2
	run "$@"
	[ "$rc" = 2 ] && [ -z "$out" ] && [ "$(grep -c . <<<"$err")" = 1 ] &&
		[[ $err =~ ^oci-sockopt-hook:\ $re ]]
	tap_ok $? "$desc" || tap_diag "exit $rc" "stdout: $out" "stderr: $err"
}

# usage_of CMD ARGS...: exit 0, CMD's usage on stdout, nothing on stderr.
usage_of()
{
	local cmd=$1

	shift
	run "$@"
	[ "$rc" = 0 ] && [ -z "$err" ] &&
		[[ $out == "Usage: oci-sockopt-hook $cmd "* ]]
	tap_ok $? "$*: $cmd's usage, exit 0" ||
		tap_diag "exit $rc" "stdout: ${out:0:200}" "stderr: $err"
}

# ---- every command x every option ---------------------------------------

for c in $COMMANDS; do
	for o in $OPTIONS; do
		# shellcheck disable=SC2046
		if takes "$c" "$o"; then
			usage_of "$c" "$c" $(opt_args "$o") --help
		else
			usage_error "$c $(opt_args "$o"): unknown option, naming $c" \
				"$c: unknown option '--$o'" "$c" $(opt_args "$o") --help
		fi
	done
done

# The value forms: --OPT=VALUE, and --OPT at the end without its value.
for c in $COMMANDS; do
	for o in ${TAKES[$c]}; do
		if [[ $FLAGS == *" $o "* ]]; then
			usage_error "$c --$o=1: a flag takes no value" \
				"$c: option --$o takes no value" "$c" "--$o=1"
		else
			usage_of "$c" "$c" "--$o=x" --help
			usage_error "$c --$o: needs a value" \
				"$c: option --$o needs a value" "$c" "--$o"
		fi
	done
done

# ---- --help and help CMD ------------------------------------------------

for c in $COMMANDS; do
	usage_of "$c" "$c" --help
	usage_of "$c" "$c" -h
	help=$out
	usage_of "$c" help "$c"
	tap_is "$out" "$help" "help $c prints what $c --help does"
	# The options the usage lists are the table's, and --help.
	listed=$(sed -n '/^Options:$/,$p' <<<"$help" |
		grep -oE '^  (-h, )?--[a-z-]+' | sed 's/.*--//' | sort | xargs)
	# shellcheck disable=SC2086 # one word per option
	want=$(printf '%s\n' ${TAKES[$c]} help | sort | xargs)
	tap_is "$listed" "$want" "$c --help lists exactly its options"
	usage_of "$c" --config "$CONFIG" "$c" --help
done

run --help
all=1
for c in $COMMANDS; do
	grep -qE "^  $c +[a-z]" <<<"$out" || all=0
done
[ "$rc" = 0 ] && [ "$all" = 1 ]
tap_ok $? "--help: exit 0, every command listed with its summary" ||
	tap_diag "exit $rc" "$out"
run help
tap_is "$rc:$out" "0:$("$HOOK" --help)" "help: the same list as --help"
usage_error "help of an unknown command" "help: unknown command 'nope'" \
	help nope
usage_error "an unknown command" "unknown command 'nope'" nope --help
usage_error "no command" "no command given" --config "$CONFIG"
usage_error "an unknown global option" "unknown option '--verbose'" \
	--verbose probe
usage_error "--config without its value, before the command" \
	"option --config needs a value" --config

# ---- global options before the command ----------------------------------

for c in $COMMANDS; do
	if takes "$c" json; then
		usage_of "$c" --json "$c" --help
	else
		usage_error "--json $c: $c has no JSON output" \
			"$c: no JSON output" --json "$c" --help
	fi
done

# ---- operands -----------------------------------------------------------

for c in $COMMANDS; do
	case $c in
	status | validate | help) usage_of "$c" "$c" one --help
		usage_error "$c with two operands" \
			"$c: unexpected argument 'two'" "$c" one two ;;
	record) usage_of "$c" "$c" one --help
		usage_error "record without its ID" "record: ID missing" record
		usage_error "record with two operands" \
			"record: unexpected argument 'two'" record one two ;;
	runtime) usage_of "$c" "$c" configure --help
		usage_error "runtime without configure or unconfigure" \
			"runtime: configure\|unconfigure missing" runtime
		usage_error "runtime with two operands" \
			"runtime: unexpected argument 'two'" runtime configure two
		usage_error "runtime with another verb" \
			"runtime: configure or unconfigure, not 'one'" runtime one --runtime podman
		usage_error "runtime without --runtime" \
			"runtime: --runtime containerd, crio, podman or docker" runtime configure
		usage_error "runtime --hook-env without '='" \
			"runtime: --hook-env takes KEY=VALUE, not 'x'" runtime configure \
			--runtime podman --hook-env x
		usage_error "runtime --nri with another mode" \
			"runtime: --nri service, plugin or pod, not 'x'" runtime configure \
			--runtime containerd --nri x
		usage_error "runtime --nri for a runtime without NRI" \
			"runtime: --nri: podman has no NRI \\(containerd and crio have\\)" \
			runtime configure --runtime podman --nri service ;;
	cdi) usage_of "$c" "$c" generate --help
		usage_error "cdi without generate or refresh" \
			"cdi: generate\|refresh missing" cdi
		usage_error "cdi with another verb" \
			"cdi: generate or refresh, not 'one'" cdi one
		usage_error "cdi refresh with generate's options" \
			"cdi: refresh keeps the hook of the spec it finds" cdi refresh --output x
		usage_error "cdi --hook-env without '='" \
			"cdi: --hook-env takes KEY=VALUE, not 'x'" cdi generate --hook-env x
		usage_error "runtime --cdi with --runtime" \
			"runtime: --cdi stands alone: not with --runtime podman" \
			runtime configure --cdi --runtime podman ;;
	runtime-exec) usage_of "$c" "$c" create --help
		usage_error "runtime-exec without runc's arguments" \
			"runtime-exec: -- RUNC-ARGS... missing" runtime-exec ;;
	*) usage_error "$c with an operand" \
		"$c: unexpected argument 'one'" "$c" one ;;
	esac
done
usage_error "after --, --json is an operand" \
	"status: unexpected argument '--json'" status -- one --json
usage_error "an operand after --" "probe: unexpected argument '--json'" \
	probe -- --json

# ---- run for real: the documented forms ---------------------------------

run validate --json "$CONFIG"
tap_like "$rc:$out" '^0:\{.*"valid": ?true' "validate --json CONFIG: JSON, valid"
run validate "$CONFIG" --hooks-dir "$tmp" --json
tap_like "$rc:$out" '^0:\{.*"valid": ?true' \
	"validate CONFIG --hooks-dir DIR --json: options after the operand"
run --json validate "$CONFIG"
tap_like "$rc:$out" '^0:\{.*"valid": ?true' "--json validate CONFIG: global --json"
run --config "$CONFIG" validate
tap_is "$rc:$out" "0:$("$HOOK" validate "$CONFIG" 2>/dev/null)" \
	"--config CONFIG validate: the config global --config names"
run validate --config "$CONFIG"
tap_is "$rc:$out" "0:$("$HOOK" validate "$CONFIG" 2>/dev/null)" \
	"validate --config CONFIG: --config after the command"
run --config "$CONFIG" metrics --output "$tmp/m.prom"
grep -q '^oci_sockopt_hook_build_info' "$tmp/m.prom" 2>/dev/null
tap_ok $? "--config CONFIG metrics --output FILE.prom (the DaemonSet's call): written" ||
	tap_diag "exit $rc" "$err"
run --config "$CONFIG" apply
tap_like "$rc:$out" '^0:apply: 0 updated, 0 unchanged, 0 left as it was, 0 failed, 0 gone \(config ' \
	"--config CONFIG apply (the units' call) with no container: the summary, exit 0"
run --json apply --config "$CONFIG" --dry-run
tap_like "$rc:$out" '^0:\{.*"dry_run": ?true' "--json apply --config CONFIG --dry-run: JSON"
usage_error "validate --unpin --pod x --nfd-file y CONFIG: refused, not ignored" \
	"validate: unknown option '--unpin'" \
	validate --unpin --pod x --nfd-file y "$CONFIG"

tap_done
