#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every JSON example validates against its JSON Schema with a real
# validator (python3-jsonschema), and the hook's own validator agrees.
# A deliberately broken config must fail both, so this test can fail.
#
# Modules: `config.c`, `cmd_validate.c`
# Root: no
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
HOOK=${HOOK:-$top/build/oci-sockopt-hook}
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null ||
	tap_skip_all "python3-jsonschema is not installed"

validate() # SCHEMA FILE
{
	$PY - "$1" "$2" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)
for e in errors:
    print("%s: %s" % ("/".join(map(str, e.absolute_path)) or "$", e.message))
sys.exit(1 if errors else 0)
PY
}

schema_for() # FILE: which schema describes it
{
	case $(basename "$1") in
	config*.json) echo "$top/schemas/config.schema.json" ;;
	hooks.d-*.json | *hook.json) echo "$top/schemas/hooks.d.schema.json" ;;
	*-hooks.json) echo "$top/schemas/oci-hooks.schema.json" ;;
	*base-spec.json) echo "$top/schemas/oci-runtime-spec.schema.json" ;;
	seccomp-*.json) echo "$top/schemas/seccomp.schema.json" ;;
	*-dashboard.json) echo "$top/schemas/grafana-dashboard.schema.json" ;;
	*) echo "" ;;
	esac
}

while IFS= read -r f; do
	schema=$(schema_for "$f")
	if [ -z "$schema" ]; then
		tap_ok 1 "$(basename "$f") has a schema"
		continue
	fi
	out=$(validate "$schema" "$f" 2>&1)
	tap_ok $? "$(basename "$f") validates against $(basename "$schema")" ||
		tap_diag "$out"
	case $(basename "$f") in config*.json)
		out=$("$HOOK" validate "$f" 2>&1)
		tap_ok $? "oci-sockopt-hook validate accepts $(basename "$f")" ||
			tap_diag "$out"
		;;
	esac
done < <(find "$top/examples" -name '*.json' | sort)

bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
echo '{"policies":{"p":{"setsockopt":[{"level":"SOL_SOCKET","option":"SO_MARK","action":"clamp"}]}}}' >"$bad"
out=$(validate "$top/schemas/config.schema.json" "$bad" 2>&1)
tap_ok $((!$?)) "schema rejects a clamp without bounds"
"$HOOK" validate "$bad" >/dev/null 2>&1
tap_ok $((!$?)) "hook rejects a clamp without bounds"
echo '{"hooks":{"prestart":[{"path":"oci-sockopt-hook","args":["oci-sockopt-hook","prestart"]}]}}' >"$bad"
validate "$top/schemas/oci-hooks.schema.json" "$bad" >/dev/null 2>&1
tap_ok $((!$?)) "schema rejects a runtime hook with a relative path"
jq 'del(.hooks)' "$top/examples/containerd/sockopt-hook-base-spec.json" >"$bad"
validate "$top/schemas/oci-runtime-spec.schema.json" "$bad" >/dev/null 2>&1
tap_ok $((!$?)) "schema rejects a base runtime spec without hooks"
tap_done
