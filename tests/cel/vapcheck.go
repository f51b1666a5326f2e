// SPDX-License-Identifier: GPL-2.0-only

// vapcheck: compile and run the CEL of ValidatingAdmissionPolicies the way
// the Kubernetes API server does (cel-go, the variables object, oldObject,
// request, params, namespaceObject and variables, the extension libraries
// of Kubernetes 1.30: strings v2, sets, optional types), on example pods.
// No API server: the apiserver's own typing of object (from the OpenAPI
// schema) is replaced by dyn, so type errors that only a schema shows are
// not caught here.
//
//	vapcheck POLICY.yaml CASE.yaml...
//
// A case file:
//
//	namespace: batch            # the request's namespace
//	pod: {metadata: ..., spec: ...}
//	object: {kind: Deployment, ...}  # instead of pod: any kind the
//	                            # policies may match (kinds below)
//	operation: UPDATE           # optional: CREATE by default
//	params: {data: ...}         # optional: else the ConfigMap paramRef names
//	noParams: true              # optional: the paramRef's ConfigMap is gone
//	denied:                     # the messages of every failing validation,
//	  - "policy-name: message"  # in order; empty or absent: admitted
//
// As the API server does, a policy applies to a request only when one of
// its matchConstraints.resourceRules names the object's resource and
// operation, its namespaceSelector matches the namespace (labelled
// kubernetes.io/metadata.name, as every namespace is) and each of its
// matchConditions is true; a binding whose paramRef finds nothing denies
// or admits as its parameterNotFoundAction says.
//
// Prints TAP lines without a plan; exit 1 when one is "not ok".
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"gopkg.in/yaml.v3"
)

type expr struct {
	Name              string `yaml:"name"`
	Expression        string `yaml:"expression"`
	Message           string `yaml:"message"`
	MessageExpression string `yaml:"messageExpression"`
}

type resourceRule struct {
	APIGroups  []string `yaml:"apiGroups"`
	Operations []string `yaml:"operations"`
	Resources  []string `yaml:"resources"`
}

type selector struct {
	MatchExpressions []struct {
		Key      string   `yaml:"key"`
		Operator string   `yaml:"operator"`
		Values   []string `yaml:"values"`
	} `yaml:"matchExpressions"`
}

type doc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		PolicyName string `yaml:"policyName"`
		ParamKind  *struct {
			Kind string `yaml:"kind"`
		} `yaml:"paramKind"`
		ParamRef *struct {
			Name                    string `yaml:"name"`
			Namespace               string `yaml:"namespace"`
			ParameterNotFoundAction string `yaml:"parameterNotFoundAction"`
		} `yaml:"paramRef"`
		MatchConstraints struct {
			ResourceRules     []resourceRule `yaml:"resourceRules"`
			NamespaceSelector *selector      `yaml:"namespaceSelector"`
		} `yaml:"matchConstraints"`
		MatchConditions []expr `yaml:"matchConditions"`
		Variables       []expr `yaml:"variables"`
		Validations     []expr `yaml:"validations"`
	} `yaml:"spec"`
	Data map[string]string `yaml:"data"`
}

// The kinds a case may hold: API group, resource.
var kinds = map[string][2]string{
	"Pod":         {"", "pods"},
	"Deployment":  {"apps", "deployments"},
	"StatefulSet": {"apps", "statefulsets"},
	"DaemonSet":   {"apps", "daemonsets"},
	"ReplicaSet":  {"apps", "replicasets"},
	"Job":         {"batch", "jobs"},
	"CronJob":     {"batch", "cronjobs"},
}

type compiled struct {
	src     expr
	prog    cel.Program
	message cel.Program
}

type policy struct {
	name        string
	params      map[string]any // from the binding's paramRef, or nil
	paramRef    bool           // the binding has one
	notFound    string         // its parameterNotFoundAction
	rules       []resourceRule
	nsSelector  *selector
	conditions  []compiled
	variables   []compiled
	validations []compiled
}

var failed bool

func tap(ok bool, format string, args ...any) {
	status := "ok"
	if !ok {
		status, failed = "not ok", true
	}
	fmt.Printf("%s - %s\n", status, fmt.Sprintf(format, args...))
}

func env() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType),
		cel.Variable("authorizer", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
	)
}

func compile(e *cel.Env, what, src string, want *cel.Type) (cel.Program, error) {
	ast, iss := e.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%s: %w", what, iss.Err())
	}
	if want != nil && !ast.OutputType().IsAssignableType(want) &&
		ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("%s: type %s, want %s", what,
			ast.OutputType(), want)
	}
	return e.Program(ast, cel.CostLimit(1000000))
}

var varRef = regexp.MustCompile(`variables\.([A-Za-z_][A-Za-z0-9_]*)`)

// The API server types variables.X from X's declaration: a name that is
// not declared (before, for a variable) does not compile there.
func undeclared(src string, known map[string]bool) error {
	for _, m := range varRef.FindAllStringSubmatch(src, -1) {
		if !known[m[1]] {
			return fmt.Errorf("undeclared reference to variables.%s", m[1])
		}
	}
	return nil
}

func compilePolicy(e *cel.Env, d *doc) *policy {
	p := &policy{name: d.Metadata.Name, rules: d.Spec.MatchConstraints.ResourceRules,
		nsSelector: d.Spec.MatchConstraints.NamespaceSelector}
	known := map[string]bool{}
	for _, c := range d.Spec.MatchConditions {
		err := undeclared(c.Expression, map[string]bool{})
		var prog cel.Program
		if err == nil {
			prog, err = compile(e, "matchCondition "+c.Name, c.Expression, cel.BoolType)
		}
		tap(err == nil, "%s: matchCondition %s compiles to a bool (no variables)%s",
			p.name, c.Name, errText(err))
		p.conditions = append(p.conditions, compiled{src: c, prog: prog})
	}
	for _, v := range d.Spec.Variables {
		err := undeclared(v.Expression, known)
		known[v.Name] = true
		var prog cel.Program
		if err == nil {
			prog, err = compile(e, "variable "+v.Name, v.Expression, nil)
		}
		tap(err == nil, "%s: variable %s compiles%s", p.name, v.Name, errText(err))
		p.variables = append(p.variables, compiled{src: v, prog: prog})
	}
	for i, v := range d.Spec.Validations {
		c := compiled{src: v}
		err := undeclared(v.Expression+" "+v.MessageExpression, known)
		if err == nil {
			c.prog, err = compile(e, "expression", v.Expression, cel.BoolType)
		}
		tap(err == nil, "%s: validation %d compiles to a bool%s", p.name, i, errText(err))
		tap(v.MessageExpression != "" || v.Message != "",
			"%s: validation %d has a message", p.name, i)
		if v.MessageExpression != "" {
			c.message, err = compile(e, "messageExpression", v.MessageExpression, cel.StringType)
			tap(err == nil, "%s: validation %d messageExpression compiles to a string%s",
				p.name, i, errText(err))
		}
		p.validations = append(p.validations, c)
	}
	return p
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "\n# " + strings.ReplaceAll(err.Error(), "\n", "\n# ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s || v == "*" {
			return true
		}
	}
	return false
}

// Whether the policy's matchConstraints take the request.
func (p *policy) matches(group, resource, op, namespace string) bool {
	ruled := false
	for _, r := range p.rules {
		ruled = ruled || (contains(r.APIGroups, group) &&
			contains(r.Resources, resource) && contains(r.Operations, op))
	}
	if !ruled || p.nsSelector == nil {
		return ruled
	}
	labels := map[string]string{"kubernetes.io/metadata.name": namespace}
	for _, m := range p.nsSelector.MatchExpressions {
		v, has := labels[m.Key]
		in := has && contains(m.Values, v)
		switch m.Operator {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Runs one policy on one request; the denial messages, or an error (which
// failurePolicy: Fail turns into a denial too).
func (p *policy) run(act map[string]any) ([]string, error) {
	vars := map[string]any{}
	act["variables"] = vars
	for _, c := range p.conditions {
		if c.prog == nil {
			return nil, fmt.Errorf("matchCondition %s did not compile", c.src.Name)
		}
		out, _, err := c.prog.Eval(act)
		if err != nil {
			return nil, fmt.Errorf("matchCondition %s: %w", c.src.Name, err)
		}
		if out.Value() != true {
			return nil, nil // the policy does not apply
		}
	}
	for _, v := range p.variables {
		if v.prog == nil {
			return nil, fmt.Errorf("variable %s did not compile", v.src.Name)
		}
		out, _, err := v.prog.Eval(act)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.src.Name, err)
		}
		vars[v.src.Name] = out
	}
	var denied []string
	for i, v := range p.validations {
		if v.prog == nil {
			return nil, fmt.Errorf("validation %d did not compile", i)
		}
		out, _, err := v.prog.Eval(act)
		if err != nil {
			return nil, fmt.Errorf("validation %d: %w", i, err)
		}
		if out.Value() == true {
			continue
		}
		msg := v.src.Message
		if v.message != nil {
			m, _, err := v.message.Eval(act)
			if err != nil {
				return nil, fmt.Errorf("messageExpression %d: %w", i, err)
			}
			msg = m.Value().(string)
		}
		denied = append(denied, p.name+": "+msg)
	}
	return denied, nil
}

type testCase struct {
	Namespace string         `yaml:"namespace"`
	Pod       map[string]any `yaml:"pod"`
	Object    map[string]any `yaml:"object"`
	Operation string         `yaml:"operation"`
	Params    map[string]any `yaml:"params"`
	NoParams  bool           `yaml:"noParams"`
	Denied    []string       `yaml:"denied"`
}

func runCase(path string, policies []*policy) {
	raw, err := os.ReadFile(path)
	var c testCase
	if err == nil {
		err = yaml.Unmarshal(raw, &c)
	}
	name := filepath.Base(path)
	if c.Object == nil && c.Pod != nil {
		c.Object = map[string]any{"apiVersion": "v1", "kind": "Pod"}
		for k, v := range c.Pod {
			c.Object[k] = v
		}
	}
	kind, _ := c.Object["kind"].(string)
	gr, known := kinds[kind]
	if err != nil || c.Object == nil || c.Namespace == "" || !known {
		tap(false, "%s: a case with namespace and a pod or an object of a known kind%s",
			name, errText(err))
		return
	}
	if c.Operation == "" {
		c.Operation = "CREATE"
	}
	var got []string
	for _, p := range policies {
		if !p.matches(gr[0], gr[1], c.Operation, c.Namespace) {
			continue
		}
		params := p.params
		if c.Params != nil {
			params = c.Params
		}
		if c.NoParams && p.paramRef {
			if p.notFound != "Allow" {
				got = append(got, p.name+": no params found for binding "+
					p.name+" (parameterNotFoundAction: "+p.notFound+")")
			}
			continue
		}
		act := map[string]any{
			"object":    c.Object,
			"oldObject": nil,
			"request": map[string]any{
				"operation": c.Operation,
				"namespace": c.Namespace,
				"kind":      map[string]any{"group": gr[0], "version": "v1", "kind": kind},
				"resource":  map[string]any{"group": gr[0], "version": "v1", "resource": gr[1]},
			},
			"params":          params,
			"namespaceObject": map[string]any{"metadata": map[string]any{"name": c.Namespace}},
			"authorizer":      nil,
		}
		denied, err := p.run(act)
		if err != nil {
			denied = []string{p.name + ": error: " + err.Error()}
		}
		got = append(got, denied...)
	}
	want := c.Denied
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	verdict := "admitted"
	if len(want) > 0 {
		verdict = "denied"
	}
	tap(reflect.DeepEqual(got, want), "%s: %s in namespace %s%s", name, verdict, c.Namespace,
		map[bool]string{true: "", false: fmt.Sprintf("\n# got  %q\n# want %q", got, want)}[reflect.DeepEqual(got, want)])
}

func load(path string) ([]*doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var docs []*doc
	dec := yaml.NewDecoder(f)
	for {
		d := &doc{}
		if err := dec.Decode(d); err != nil {
			if err.Error() == "EOF" {
				return docs, nil
			}
			return nil, err
		}
		docs = append(docs, d)
	}
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: vapcheck POLICY.yaml CASE.yaml...")
		os.Exit(2)
	}
	docs, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vapcheck:", err)
		os.Exit(1)
	}
	e, err := env()
	if err != nil {
		fmt.Fprintln(os.Stderr, "vapcheck:", err)
		os.Exit(1)
	}
	var policies []*policy
	for _, d := range docs {
		if d.Kind == "ValidatingAdmissionPolicy" {
			policies = append(policies, compilePolicy(e, d))
		}
	}
	tap(len(policies) > 0, "%s holds ValidatingAdmissionPolicies (%d)", os.Args[1], len(policies))
	for _, p := range policies {
		bound := false
		for _, b := range docs {
			if b.Kind != "ValidatingAdmissionPolicyBinding" || b.Spec.PolicyName != p.name {
				continue
			}
			bound = true
			if b.Spec.ParamRef == nil {
				continue
			}
			p.paramRef = true
			p.notFound = b.Spec.ParamRef.ParameterNotFoundAction
			for _, cm := range docs {
				if cm.Kind == "ConfigMap" && cm.Metadata.Name == b.Spec.ParamRef.Name &&
					cm.Metadata.Namespace == b.Spec.ParamRef.Namespace {
					data := map[string]any{}
					for k, v := range cm.Data {
						data[k] = v
					}
					p.params = map[string]any{"data": data}
				}
			}
			tap(p.params != nil, "%s: the binding's paramRef names a ConfigMap in the file", p.name)
		}
		tap(bound, "%s: a binding names the policy", p.name)
	}
	for _, path := range os.Args[2:] {
		runCase(path, policies)
	}
	if failed {
		os.Exit(1)
	}
}
