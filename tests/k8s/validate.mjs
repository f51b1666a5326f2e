// SPDX-License-Identifier: GPL-2.0-only
//
// node validate.mjs MODULES_DIR FILE.json...
//
// Every Kubernetes object in FILE.json (a JSON array of objects, as
// tests/integration/28-kustomize.sh turns `kubectl kustomize`'s YAML into)
// checked against the API's schemas as npm's kubernetes-models has them
// (MODULES_DIR/node_modules, scripts/k8s-tools.sh), strictly:
//
//  - the model's own validate() (the OpenAPI schema compiled by ajv:
//    types, enums, required fields, formats);
//  - unknown fields are errors: kubernetes-models' schemas let any key
//    through (the API server drops an unknown key silently, or with
//    --validate=strict refuses it), so each object is walked beside the
//    model's TypeScript declarations (.d.ts, generated from the same
//    schema), and a key its interface does not declare is reported with
//    its path.
//
// The schema sets, each a package alias of tests/k8s/package.json:
//   k8s-1.27    kubernetes-models 4.4.2: Kubernetes 1.27 (no SleepAction
//               of 1.29, no ValidatingAdmissionPolicy v1beta1 of 1.28)
//   k8s-1.33    kubernetes-models 4.5.1: Kubernetes 1.33 (Lifecycle's
//               stopSignal, no PodSpec hostnameOverride of 1.34)
//   k8s-newest  kubernetes-models 5.1.0, the newest: 1.35 or later
//               (resource.k8s.io/v1, MutatingAdmissionPolicy v1,
//               PodSpec hostnameOverride and schedulingGroup)
// npm has no build for 1.30. The 1.30 floor: an object whose kind 1.27
// has must pass 1.27's schema (a stable field is never removed, so it is
// valid in 1.30); the kinds that came in 1.28-1.30 must be in
// NEW_IN_1_30 (GA in 1.30) and pass 1.33's. Every object must pass 1.33's
// and the newest's. prometheus-operator's kinds (ServiceMonitor,
// PrometheusRule) go against @kubernetes-models/prometheus-operator 6.0.0,
// the CRDs' own schemas, the same way.
//
// Prints one line per object and set; exit 1 when any object fails.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const NEW_IN_1_30 = new Set([
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy",
	"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding",
]);
const SETS = [
	{ name: "k8s-1.27", k8s: "1.27", floor: true },
	{ name: "k8s-1.33", k8s: "1.33" },
	{ name: "k8s-newest", k8s: "newest" },
];
const CRDS = "@kubernetes-models/prometheus-operator";

const [modulesDir, ...files] = process.argv.slice(2);
if (!modulesDir || files.length === 0) {
	console.error("usage: node validate.mjs MODULES_DIR FILE.json...");
	process.exit(2);
}
const nodeModules = path.resolve(modulesDir, "node_modules");

// --- the .d.ts side: interfaces and the keys they declare ---------------------

const parsed = new Map();

// The package directory that spec names, found from file upwards.
function packageDir(file, spec) {
	const parts = spec.split("/");
	const name = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
	for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
		const cand = path.join(dir, "node_modules", name);
		if (fs.existsSync(cand))
			return { dir: cand, rest: parts.slice(name.split("/").length).join("/") };
		if (dir === path.dirname(dir)) return null;
	}
}

function resolveImport(file, spec) {
	const strip = (s) => s.replace(/\.(m?js)$/, "");
	if (spec.startsWith(".")) return strip(path.resolve(path.dirname(file), spec)) + ".d.ts";
	const pkg = packageDir(file, spec);
	return pkg ? path.join(pkg.dir, strip(pkg.rest) + ".d.ts") : null;
}

// The properties of a block of TypeScript members: name -> type text.
function members(lines) {
	const props = new Map();
	let name = null, type = "", depth = 0;
	for (const line of lines) {
		if (name === null) {
			const m = /^\s*"([^"]+)"\??: (.*)$/.exec(line);
			if (!m) continue;
			name = m[1];
			type = m[2];
		} else {
			type += " " + line.trim();
		}
		depth = (type.match(/[{<(]/g) || []).length - (type.match(/[}>)]/g) || []).length;
		if (depth <= 0 && type.trimEnd().endsWith(";")) {
			props.set(name, type.trim().replace(/;$/, "").replace(/\s+/g, " "));
			name = null;
		}
	}
	return props;
}

function parseDts(file) {
	if (parsed.has(file)) return parsed.get(file);
	let text = "";
	try {
		text = fs.readFileSync(file, "utf8");
	} catch {
		parsed.set(file, null);
		return null;
	}
	const imports = new Map();
	for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";/gm))
		for (const id of m[1].split(",").map((s) => s.trim().split(/\s+as\s+/).pop()))
			imports.set(id, resolveImport(file, m[2]));
	// the first interface, at the top level: its members up to the "}"
	// that closes it
	const lines = text.split("\n");
	const start = lines.findIndex((l) => /^export interface \w+( extends [\w, ]+)? \{$/.test(l));
	let iface = null;
	const info = { file, imports, iface };
	parsed.set(file, info);
	if (start >= 0) {
		const end = lines.findIndex((l, i) => i > start && l === "}");
		// members at the interface's own level only (4 spaces)
		const block = [];
		let depth = 0;
		for (const l of lines.slice(start + 1, end)) {
			if (depth === 0 && !/^    "/.test(l) && block.length === 0) continue;
			block.push(l);
			depth += (l.match(/[{<(]/g) || []).length - (l.match(/[}>)]/g) || []).length;
		}
		// each key with the declarations its type is read in; an
		// interface it extends (allOf) adds its own
		iface = new Map();
		const ext = / extends ([\w, ]+) \{$/.exec(lines[start]);
		for (const id of ext ? ext[1].split(",").map((x) => x.trim()) : []) {
			const parent = imports.has(id) ? parseDts(imports.get(id)) : null;
			if (parent && parent.iface) for (const [k, v] of parent.iface) iface.set(k, v);
		}
		for (const [k, type] of members(block)) iface.set(k, { type, info });
		info.iface = iface;
	}
	return info;
}

function isObject(v) {
	return v !== null && typeof v === "object" && !Array.isArray(v);
}

// Unknown keys of value, typed as type in the declarations of info.
function walkType(value, type, info, where, errors) {
	let m;
	type = type.trim();
	if ((m = /^Array<(.+)>$/.exec(type))) {
		if (Array.isArray(value)) value.forEach((v, i) => walkType(v, m[1], info, `${where}[${i}]`, errors));
		return;
	}
	if ((m = /^\{ \[key: string\]: (.+?);? \}$/.exec(type))) {
		if (isObject(value)) for (const [k, v] of Object.entries(value)) walkType(v, m[1], info, `${where}.${k}`, errors);
		return;
	}
	if (/^\{ "/.test(type)) {
		const inline = new Map();
		for (const [k, t] of members(type.slice(1, -1).split(/(?<=;) /))) inline.set(k, { type: t, info });
		walkObject(value, inline, where, errors);
		return;
	}
	if (/^I\w+$/.test(type) && info.imports.has(type)) {
		const next = parseDts(info.imports.get(type));
		if (next && next.iface) walkObject(value, next.iface, where, errors);
	}
	// anything else (string, number, unions, IntOrString, Quantity, JSON
	// values) has no keys of its own to check
}

// iface: key -> { type, info: the declarations the type is read in }
function walkObject(value, iface, where, errors) {
	if (!isObject(value)) return;
	for (const [k, v] of Object.entries(value)) {
		const decl = iface.get(k);
		if (!decl) {
			errors.push(`${where ? where + "." : ""}${k}: unknown field`);
			continue;
		}
		walkType(v, decl.type, decl.info, where ? `${where}.${k}` : k, errors);
	}
}

// --- the models ---------------------------------------------------------------

// The model's files for apiVersion and kind in package pkg, or null.
function modelFiles(pkg, apiVersion, kind) {
	const base = path.join(nodeModules, pkg, apiVersion, kind);
	return fs.existsSync(base + ".d.ts") && fs.existsSync(base + ".js") ? base : null;
}

async function loadModel(pkg, base, kind) {
	const esm = JSON.parse(fs.readFileSync(path.join(nodeModules, pkg, "package.json"), "utf8")).type === "module";
	const mod = esm ? await import(pathToFileURL(base + ".js").href) : createRequire(import.meta.url)(base + ".js");
	return mod[kind];
}

async function check(pkg, obj) {
	const base = modelFiles(pkg, obj.apiVersion, obj.kind);
	if (!base) return null;
	const errors = [];
	const Model = await loadModel(pkg, base, obj.kind);
	try {
		new Model(obj).validate();
	} catch (e) {
		errors.push(...String(e.message).split(", "));
	}
	const info = parseDts(base + ".d.ts");
	if (!info || !info.iface) errors.push(`no interface in ${base}.d.ts`);
	else walkObject(obj, info.iface, "", errors);
	return errors;
}

let failed = 0;
for (const file of files) {
	const docs = JSON.parse(fs.readFileSync(file, "utf8"));
	for (const obj of docs) {
		const id = `${obj.apiVersion} ${obj.kind}`;
		const label = `${path.basename(file)}: ${obj.kind} ${obj.metadata?.namespace ? obj.metadata.namespace + "/" : ""}${obj.metadata?.name}`;
		const say = (ok, against, errs) => {
			if (ok) console.log(`ok ${label} (${against})`);
			else {
				failed++;
				for (const e of errs) console.log(`FAIL ${label} (${against}): ${e}`);
			}
		};
		if (obj.apiVersion === "monitoring.coreos.com/v1") {
			const errs = await check(CRDS, obj);
			say(errs && errs.length === 0, `${CRDS} 6.0.0`, errs || ["no such kind"]);
			continue;
		}
		for (const set of SETS) {
			const errs = await check(set.name, obj);
			if (errs === null && set.floor && NEW_IN_1_30.has(id)) continue;
			say(errs && errs.length === 0, `Kubernetes ${set.k8s}`, errs || [`${id}: no such kind in Kubernetes ${set.k8s}`]);
		}
	}
}
process.exit(failed ? 1 : 0);
