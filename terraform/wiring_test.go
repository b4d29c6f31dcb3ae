// Package terraform_test checks the wiring of the Terraform under this directory by
// parsing the HCL: references that `terraform validate` would catch (it cannot run
// here: the registry is unreachable) and tflint does not, plus the project's own
// rules (routes = openapi.yaml, the click DLQ pair, Go on arm64, least privilege,
// the resolver base URL rule, nothing forbidden) on the stack module, and that the
// environments are thin callers of it with a remote state backend.
package terraform_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"gopkg.in/yaml.v3"

	"github.com/linoone/linoone/internal/app/config"
)

var (
	// moduleNames are the capability modules (one main resource named `this` each).
	moduleNames = []string{"alarms", "cdn", "click-dlq", "dashboard", "event-bus", "function", "http-api"}
	// stackDir composes them, once for every environment.
	stackDir = filepath.Join("modules", "stack")
	envNames = []string{"prod", "sandbox"}
)

// ---------------------------------------------------------------------------
// Loading

// tfModule is one parsed Terraform module directory.
type tfModule struct {
	dir       string
	files     map[string]*hclsyntax.Body // base name → body
	variables map[string]*hclsyntax.Block
	outputs   map[string]*hclsyntax.Block
	locals    map[string]*hclsyntax.Attribute
	resources map[string]*hclsyntax.Block // "aws_sqs_queue.this"
	data      map[string]*hclsyntax.Block // "aws_iam_policy_document.this"
	calls     map[string]*hclsyntax.Block // module calls by name
	fileOf    map[*hclsyntax.Block]string
}

// parseModule parses the given files (base name → source) as one module.
func parseModule(dir string, srcs map[string]string) (*tfModule, error) {
	m := &tfModule{
		dir:       dir,
		files:     map[string]*hclsyntax.Body{},
		variables: map[string]*hclsyntax.Block{},
		outputs:   map[string]*hclsyntax.Block{},
		locals:    map[string]*hclsyntax.Attribute{},
		resources: map[string]*hclsyntax.Block{},
		data:      map[string]*hclsyntax.Block{},
		calls:     map[string]*hclsyntax.Block{},
		fileOf:    map[*hclsyntax.Block]string{},
	}
	p := hclparse.NewParser()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(srcs)) {
		f, diags := p.ParseHCL([]byte(srcs[name]), filepath.Join(dir, name))
		if diags.HasErrors() {
			errs = append(errs, diags)
			continue
		}
		body := f.Body.(*hclsyntax.Body)
		m.files[name] = body
		for _, b := range body.Blocks {
			m.fileOf[b] = name
			var target map[string]*hclsyntax.Block
			key := strings.Join(b.Labels, ".")
			switch b.Type {
			case "variable":
				target = m.variables
			case "output":
				target = m.outputs
			case "resource":
				target = m.resources
			case "data":
				target = m.data
			case "module":
				target = m.calls
			case "locals":
				for name, a := range b.Body.Attributes {
					if _, dup := m.locals[name]; dup {
						errs = append(errs, fmt.Errorf("%s: local.%s declared twice", a.SrcRange, name))
					}
					m.locals[name] = a
				}
				continue
			default:
				continue
			}
			if _, dup := target[key]; dup {
				errs = append(errs, fmt.Errorf("%s: %s %q declared twice", b.DefRange(), b.Type, key))
			}
			target[key] = b
		}
	}
	return m, errors.Join(errs...)
}

// isOverrideFile reports Terraform override files (override.tf, *_override.tf):
// local, git-ignored changes (a backend_override.tf for local state, see README.md),
// not part of the committed configuration these tests check.
func isOverrideFile(name string) bool {
	return name == "override.tf" || strings.HasSuffix(name, "_override.tf")
}

// loadModule parses every .tf file of dir except override files.
func loadModule(dir string) (*tfModule, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	paths = slices.DeleteFunc(paths, func(p string) bool { return isOverrideFile(filepath.Base(p)) })
	if len(paths) == 0 {
		return nil, fmt.Errorf("no .tf files in %s", dir)
	}
	srcs := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		srcs[filepath.Base(p)] = string(b)
	}
	return parseModule(dir, srcs)
}

// resolver finds the module a call's source points at.
type resolver func(caller *tfModule, source string) (*tfModule, error)

func diskResolver() resolver {
	cache := map[string]*tfModule{}
	return func(caller *tfModule, source string) (*tfModule, error) {
		if !strings.HasPrefix(source, "./") && !strings.HasPrefix(source, "../") {
			return nil, fmt.Errorf("module source %q is not a local path", source)
		}
		dir := filepath.Clean(filepath.Join(caller.dir, source))
		if m, ok := cache[dir]; ok {
			return m, nil
		}
		m, err := loadModule(dir)
		if err != nil {
			return nil, err
		}
		cache[dir] = m
		return m, nil
	}
}

func mustLoad(t *testing.T, dir string) *tfModule {
	t.Helper()
	m, err := loadModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func forEachModule(t *testing.T, fn func(t *testing.T, m *tfModule)) {
	t.Helper()
	var dirs []string
	for _, n := range moduleNames {
		dirs = append(dirs, filepath.Join("modules", n))
	}
	dirs = append(dirs, stackDir)
	for _, n := range envNames {
		dirs = append(dirs, filepath.Join("envs", n))
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) { fn(t, mustLoad(t, dir)) })
	}
}

// ---------------------------------------------------------------------------
// Expression helpers

// traversals returns every scope traversal (var.x, module.m.o, …) under node.
func traversals(node hclsyntax.Node) []hcl.Traversal {
	var out []hcl.Traversal
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if e, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
			out = append(out, e.Traversal)
		}
		return nil
	})
	return out
}

// ref renders a traversal as "module.m.o" / "aws_x.y[0].z".
func ref(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			} else if s.Key.Type() == cty.Number {
				b.WriteString("[" + s.Key.AsBigFloat().String() + "]")
			} else {
				b.WriteString("[?]")
			}
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// attrName returns the name of step i of t when it is an attribute step.
func attrName(t hcl.Traversal, i int) (string, bool) {
	if i >= len(t) {
		return "", false
	}
	a, ok := t[i].(hcl.TraverseAttr)
	return a.Name, ok
}

// refsWithLocals returns the references under node, following local values.
func refsWithLocals(m *tfModule, node hclsyntax.Node) map[string]bool {
	out := map[string]bool{}
	seen := map[string]bool{}
	var walk func(hclsyntax.Node)
	walk = func(n hclsyntax.Node) {
		for _, t := range traversals(n) {
			out[ref(t)] = true
			if t.RootName() != "local" {
				continue
			}
			name, ok := attrName(t, 1)
			if !ok || seen[name] {
				continue
			}
			seen[name] = true
			if a := m.locals[name]; a != nil {
				walk(a.Expr)
			}
		}
	}
	walk(node)
	return out
}

// followLocal unwraps expressions that are exactly `local.x`.
func followLocal(m *tfModule, e hclsyntax.Expression) hclsyntax.Expression {
	for range 10 {
		st, ok := e.(*hclsyntax.ScopeTraversalExpr)
		if !ok || st.Traversal.RootName() != "local" || len(st.Traversal) != 2 {
			return e
		}
		name, _ := attrName(st.Traversal, 1)
		a := m.locals[name]
		if a == nil {
			return e
		}
		e = a.Expr
	}
	return e
}

func literalString(e hclsyntax.Expression) (string, bool) {
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

func literalBool(e hclsyntax.Expression) (bool, bool) {
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.Bool {
		return false, false
	}
	return v.True(), true
}

// literalStrings evaluates a literal string or list of strings.
func literalStrings(e hclsyntax.Expression) ([]string, bool) {
	if s, ok := literalString(e); ok {
		return []string{s}, true
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		return nil, false
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.Type() != cty.String || ev.IsNull() {
			return nil, false
		}
		out = append(out, ev.AsString())
	}
	return out, true
}

// objectItems returns the items of an object constructor by key.
func objectItems(e hclsyntax.Expression) (map[string]hclsyntax.Expression, bool) {
	o, ok := e.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, false
	}
	out := map[string]hclsyntax.Expression{}
	for _, it := range o.Items {
		k, ok := literalString(it.KeyExpr)
		if !ok {
			return nil, false
		}
		out[k] = it.ValueExpr
	}
	return out, true
}

// mergedObject flattens merge(local.a, {…}) / {…} / local.a into its items.
func mergedObject(m *tfModule, e hclsyntax.Expression) (map[string]hclsyntax.Expression, error) {
	e = followLocal(m, e)
	if items, ok := objectItems(e); ok {
		return items, nil
	}
	// `cond ? tomap({…}) : tomap({})`: the variables set on either branch (a test
	// checks the condition of each where it matters).
	if c, ok := e.(*hclsyntax.ConditionalExpr); ok {
		out, err := mergedObject(m, c.TrueResult)
		if err != nil {
			return nil, err
		}
		other, err := mergedObject(m, c.FalseResult)
		maps.Copy(out, other)
		return out, err
	}
	call, ok := e.(*hclsyntax.FunctionCallExpr)
	if ok && call.Name == "tomap" && len(call.Args) == 1 {
		return mergedObject(m, call.Args[0])
	}
	if !ok || call.Name != "merge" {
		return nil, fmt.Errorf("%s: want an object, merge(...) of objects, cond ? tomap(…) : tomap(…), or a local holding one", e.Range())
	}
	out := map[string]hclsyntax.Expression{}
	for _, arg := range call.Args {
		items, err := mergedObject(m, arg)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, items)
	}
	return out, nil
}

func within(inner, outer hcl.Range) bool {
	return inner.Filename == outer.Filename && inner.Start.Byte >= outer.Start.Byte && inner.End.Byte <= outer.End.Byte
}

func callSource(b *hclsyntax.Block) string {
	if a := b.Body.Attributes["source"]; a != nil {
		s, _ := literalString(a.Expr)
		return s
	}
	return ""
}

// callsOf returns the names of m's module calls of the local module directory
// <module> (source ../<module> from a sibling module, ../../modules/<module> from an
// environment).
func callsOf(m *tfModule, module string) []string {
	var out []string
	for name, b := range m.calls {
		if src := callSource(b); strings.HasPrefix(src, ".") && path.Base(path.Clean(src)) == module {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// ---------------------------------------------------------------------------
// Checkers (return every problem found; tested against broken snippets below)

var callMetaArguments = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "providers": true, "depends_on": true}

// checkReferences reports references to undeclared variables, locals, resources,
// data sources, module calls and module outputs, and module calls whose arguments
// do not match the called module's variables.
func checkReferences(m *tfModule, resolve resolver) []error {
	var errs []error
	targets := map[string]*tfModule{}
	for _, name := range slices.Sorted(maps.Keys(m.calls)) {
		b := m.calls[name]
		target, err := resolve(m, callSource(b))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: module %q: %w", b.DefRange(), name, err))
			continue
		}
		targets[name] = target
		for arg, a := range b.Body.Attributes {
			if !callMetaArguments[arg] && target.variables[arg] == nil {
				errs = append(errs, fmt.Errorf("%s: module %q passes %q, which %s does not declare", a.SrcRange, name, arg, target.dir))
			}
		}
		for v, vb := range target.variables {
			if vb.Body.Attributes["default"] == nil && b.Body.Attributes[v] == nil {
				errs = append(errs, fmt.Errorf("%s: module %q does not pass required variable %q", b.DefRange(), name, v))
			}
		}
	}
	for _, file := range slices.Sorted(maps.Keys(m.files)) {
		for _, t := range traversals(m.files[file]) {
			root := t.RootName()
			rng := t.SourceRange()
			a1, ok1 := attrName(t, 1)
			switch {
			case root == "var":
				if !ok1 || m.variables[a1] == nil {
					errs = append(errs, fmt.Errorf("%s: %s is not declared", rng, ref(t)))
				}
			case root == "local":
				if !ok1 || m.locals[a1] == nil {
					errs = append(errs, fmt.Errorf("%s: %s is not declared", rng, ref(t)))
				}
			case root == "module":
				if !ok1 || m.calls[a1] == nil {
					errs = append(errs, fmt.Errorf("%s: %s: no such module call", rng, ref(t)))
					continue
				}
				out, ok2 := attrName(t, 2)
				if target := targets[a1]; ok2 && target != nil && target.outputs[out] == nil {
					errs = append(errs, fmt.Errorf("%s: %s: %s has no output %q", rng, ref(t), target.dir, out))
				}
			case root == "data":
				a2, ok2 := attrName(t, 2)
				if !ok1 || !ok2 || m.data[a1+"."+a2] == nil {
					errs = append(errs, fmt.Errorf("%s: %s: no such data source", rng, ref(t)))
				}
			case strings.HasPrefix(root, "aws_") || root == "terraform_data":
				if !ok1 || m.resources[root+"."+a1] == nil {
					errs = append(errs, fmt.Errorf("%s: %s: no such resource", rng, ref(t)))
				}
			}
		}
	}
	return errs
}

// checkDocs reports variables without type or description, outputs without
// description, and declarations outside variables.tf / outputs.tf.
func checkDocs(m *tfModule) []error {
	var errs []error
	described := func(b *hclsyntax.Block) bool {
		a := b.Body.Attributes["description"]
		if a == nil {
			return false
		}
		s, ok := literalString(a.Expr)
		return ok && strings.TrimSpace(s) != ""
	}
	for _, name := range slices.Sorted(maps.Keys(m.variables)) {
		b := m.variables[name]
		if !described(b) {
			errs = append(errs, fmt.Errorf("%s: variable %q has no description", b.DefRange(), name))
		}
		if b.Body.Attributes["type"] == nil {
			errs = append(errs, fmt.Errorf("%s: variable %q has no type", b.DefRange(), name))
		}
		if f := m.fileOf[b]; f != "variables.tf" {
			errs = append(errs, fmt.Errorf("%s: variable %q belongs in variables.tf", b.DefRange(), name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.outputs)) {
		b := m.outputs[name]
		if !described(b) {
			errs = append(errs, fmt.Errorf("%s: output %q has no description", b.DefRange(), name))
		}
		if f := m.fileOf[b]; f != "outputs.tf" {
			errs = append(errs, fmt.Errorf("%s: output %q belongs in outputs.tf", b.DefRange(), name))
		}
	}
	return errs
}

// route is one entry of an http-api call's `routes` map.
type route struct {
	Function string // module call of the target function
	Auth     string // NONE | AWS_IAM
}

// routesOf reads the literal `routes` map of the module call `call`.
func routesOf(m *tfModule, call string) (map[string]route, error) {
	b := m.calls[call]
	if b == nil {
		return nil, fmt.Errorf("no module call %q", call)
	}
	a := b.Body.Attributes["routes"]
	if a == nil {
		return nil, fmt.Errorf("%s: module %q has no routes", b.DefRange(), call)
	}
	items, ok := objectItems(followLocal(m, a.Expr))
	if !ok {
		return nil, fmt.Errorf("%s: routes of %q must be a literal map keyed by \"METHOD /path\"", a.SrcRange, call)
	}
	out := map[string]route{}
	var errs []error
	for key, v := range items {
		fields, ok := objectItems(v)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: route %q is not an object", v.Range(), key))
			continue
		}
		var r route
		if e := fields["authorization_type"]; e != nil {
			r.Auth, _ = literalString(e)
		}
		fnModules := map[string]bool{}
		for _, field := range []string{"function_name", "invoke_arn"} {
			e := fields[field]
			if e == nil {
				errs = append(errs, fmt.Errorf("%s: route %q has no %s", v.Range(), key, field))
				continue
			}
			for _, t := range traversals(e) {
				if name, ok := attrName(t, 1); ok && t.RootName() == "module" {
					fnModules[name] = true
				}
			}
		}
		if len(fnModules) != 1 {
			errs = append(errs, fmt.Errorf("%s: route %q: function_name and invoke_arn must come from one function module, got %v", v.Range(), key, slices.Sorted(maps.Keys(fnModules))))
		}
		for name := range fnModules {
			r.Function = name
		}
		out[key] = r
	}
	return out, errors.Join(errs...)
}

// checkRoutes compares configured routes with the operations of one API and
// checks the authorization and target function of each.
func checkRoutes(api string, got map[string]route, ops map[string]bool, function string, iam func(key string) bool) []error {
	var errs []error
	if diff := cmp.Diff(slices.Sorted(maps.Keys(ops)), slices.Sorted(maps.Keys(got))); diff != "" {
		errs = append(errs, fmt.Errorf("%s routes differ from the openapi.yaml operations (-openapi +terraform):\n%s", api, diff))
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		r := got[key]
		want := "NONE"
		if iam(key) {
			want = "AWS_IAM"
		}
		if r.Auth != want {
			errs = append(errs, fmt.Errorf("%s route %q: authorization_type %q, want %q", api, key, r.Auth, want))
		}
		if r.Function != function {
			errs = append(errs, fmt.Errorf("%s route %q targets module %q, want %q", api, key, r.Function, function))
		}
	}
	return errs
}

// checkClickDLQ checks the DLQ pair: aws_sqs_queue.this redrives to another
// declared queue, both are encrypted, the visibility timeout derives from the
// replay timeout and the event source mapping reports partial batch failures.
func checkClickDLQ(m *tfModule) []error {
	var errs []error
	q := m.resources["aws_sqs_queue.this"]
	if q == nil {
		return []error{errors.New("no aws_sqs_queue.this (the click DLQ)")}
	}
	rp := q.Body.Attributes["redrive_policy"]
	deadletter := ""
	if rp == nil {
		errs = append(errs, fmt.Errorf("%s: the click DLQ has no redrive_policy", q.DefRange()))
	} else {
		call, ok := rp.Expr.(*hclsyntax.FunctionCallExpr)
		var items map[string]hclsyntax.Expression
		if ok && call.Name == "jsonencode" && len(call.Args) == 1 {
			items, ok = objectItems(call.Args[0])
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%s: redrive_policy must be jsonencode({ deadLetterTargetArn = …, maxReceiveCount = … })", rp.SrcRange))
		} else {
			if items["maxReceiveCount"] == nil {
				errs = append(errs, fmt.Errorf("%s: redrive_policy has no maxReceiveCount", rp.SrcRange))
			}
			if e := items["deadLetterTargetArn"]; e != nil {
				for _, t := range traversals(e) {
					name, _ := attrName(t, 1)
					attr, _ := attrName(t, 2)
					if t.RootName() == "aws_sqs_queue" && name != "this" && attr == "arn" && m.resources["aws_sqs_queue."+name] != nil {
						deadletter = name
					}
				}
			}
			if deadletter == "" {
				errs = append(errs, fmt.Errorf("%s: redrive_policy.deadLetterTargetArn must be the arn of the module's deadletter aws_sqs_queue", rp.SrcRange))
			}
		}
	}
	for _, name := range []string{"this", deadletter} {
		b := m.resources["aws_sqs_queue."+name]
		if b == nil {
			continue
		}
		a := b.Body.Attributes["sqs_managed_sse_enabled"]
		if v, ok := literalBool(exprOf(a)); !ok || !v {
			errs = append(errs, fmt.Errorf("%s: aws_sqs_queue.%s must set sqs_managed_sse_enabled = true", b.DefRange(), name))
		}
	}
	if a := q.Body.Attributes["visibility_timeout_seconds"]; a == nil || !refsWithLocals(m, a.Expr)["var.replay_timeout_seconds"] {
		errs = append(errs, fmt.Errorf("%s: the click DLQ's visibility_timeout_seconds must derive from var.replay_timeout_seconds", q.DefRange()))
	}
	esms := 0
	for key, b := range m.resources {
		if !strings.HasPrefix(key, "aws_lambda_event_source_mapping.") {
			continue
		}
		esms++
		got, ok := literalStrings(exprOf(b.Body.Attributes["function_response_types"]))
		if !ok || !slices.Equal(got, []string{"ReportBatchItemFailures"}) {
			errs = append(errs, fmt.Errorf("%s: %s must set function_response_types = [\"ReportBatchItemFailures\"]", b.DefRange(), key))
		}
		if a := b.Body.Attributes["event_source_arn"]; a == nil || !refsWithLocals(m, a.Expr)["aws_sqs_queue.this.arn"] {
			errs = append(errs, fmt.Errorf("%s: %s must consume aws_sqs_queue.this", b.DefRange(), key))
		}
	}
	if esms != 1 {
		errs = append(errs, fmt.Errorf("want exactly one aws_lambda_event_source_mapping, found %d", esms))
	}
	return errs
}

func exprOf(a *hclsyntax.Attribute) hclsyntax.Expression {
	if a == nil {
		return &hclsyntax.LiteralValueExpr{Val: cty.NullVal(cty.DynamicPseudoType)}
	}
	return a.Expr
}

// checkFunctions checks every aws_lambda_function is a Go bootstrap on arm64.
func checkFunctions(m *tfModule) []error {
	var errs []error
	want := map[string][]string{
		"runtime":       {"provided.al2023"},
		"architectures": {"arm64"},
		"handler":       {"bootstrap"},
	}
	for _, key := range slices.Sorted(maps.Keys(m.resources)) {
		if !strings.HasPrefix(key, "aws_lambda_function.") {
			continue
		}
		b := m.resources[key]
		for _, attr := range slices.Sorted(maps.Keys(want)) {
			got, ok := literalStrings(exprOf(b.Body.Attributes[attr]))
			if !ok || !slices.Equal(got, want[attr]) {
				errs = append(errs, fmt.Errorf("%s: %s.%s = %q, want %q", b.DefRange(), key, attr, got, want[attr]))
			}
		}
		hash := b.Body.Attributes["source_code_hash"]
		call, ok := exprOf(hash).(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "filebase64sha256" {
			errs = append(errs, fmt.Errorf("%s: %s.source_code_hash must be filebase64sha256(<zip>)", b.DefRange(), key))
		}
	}
	return errs
}

var (
	actionKeys   = map[string]bool{"actions": true, "not_actions": true, "Action": true, "NotAction": true}
	resourceKeys = map[string]bool{"resources": true, "not_resources": true, "Resource": true, "NotResource": true}
)

// checkForbidden reports DynamoDB resources or data sources, wildcard or DynamoDB
// IAM actions and "*" resources in literal IAM statements.
func checkForbidden(m *tfModule) []error {
	var errs []error
	for _, blocks := range []map[string]*hclsyntax.Block{m.resources, m.data} {
		for key, b := range blocks {
			if strings.Contains(strings.ToLower(b.Labels[0]), "dynamodb") {
				errs = append(errs, fmt.Errorf("%s: %s: DynamoDB is forbidden (Persist is the source of truth)", b.DefRange(), key))
			}
		}
	}
	for _, b := range m.calls {
		if strings.Contains(strings.ToLower(callSource(b)), "dynamodb") {
			errs = append(errs, fmt.Errorf("%s: module source %q: DynamoDB is forbidden", b.DefRange(), callSource(b)))
		}
	}
	// A Deny statement may name every action (the queues' TLS-only policy denies
	// sqs:* to anyone without aws:SecureTransport): it takes rights away.
	var denies []hcl.Range
	for _, file := range slices.Sorted(maps.Keys(m.files)) {
		hclsyntax.VisitAll(m.files[file], func(n hclsyntax.Node) hcl.Diagnostics {
			if b, ok := n.(*hclsyntax.Block); ok && b.Type == "statement" {
				if effect, _ := literalString(exprOf(b.Body.Attributes["effect"])); effect == "Deny" {
					denies = append(denies, b.Range())
				}
			}
			return nil
		})
	}
	check := func(key string, e hclsyntax.Expression) {
		if slices.ContainsFunc(denies, func(r hcl.Range) bool { return within(e.Range(), r) }) {
			return
		}
		vals, ok := literalStrings(e)
		if !ok {
			return // computed (e.g. statement.value.actions); validated where literal
		}
		for _, v := range vals {
			switch {
			case actionKeys[key] && strings.Contains(v, "*"):
				errs = append(errs, fmt.Errorf("%s: wildcard IAM action %q", e.Range(), v))
			case actionKeys[key] && strings.HasPrefix(strings.ToLower(v), "dynamodb:"):
				errs = append(errs, fmt.Errorf("%s: DynamoDB IAM action %q is forbidden", e.Range(), v))
			case resourceKeys[key] && v == "*":
				errs = append(errs, fmt.Errorf("%s: IAM resource \"*\"", e.Range()))
			}
		}
	}
	for _, file := range slices.Sorted(maps.Keys(m.files)) {
		hclsyntax.VisitAll(m.files[file], func(n hclsyntax.Node) hcl.Diagnostics {
			switch n := n.(type) {
			case *hclsyntax.Attribute:
				check(n.Name, n.Expr)
			case *hclsyntax.ObjectConsExpr:
				for _, it := range n.Items {
					if k, ok := literalString(it.KeyExpr); ok {
						check(k, it.ValueExpr)
					}
				}
			}
			return nil
		})
	}
	return errs
}

// checkResolverBaseURL checks the rule for the resolver base URL, the issue
// function's LINOONE_RESOLVER_BASE_URL: `<cond> ? "https://${var.custom_domain_name}"
// : <…>module.<api>.api_endpoint` with var.custom_domain_routable in the condition,
// and the custom domain name is used nowhere else except to configure the resolver
// API's (gated) custom domain.
func checkResolverBaseURL(m *tfModule) []error {
	vars, err := functionEnv(m, "issue")
	if err != nil {
		return []error{err}
	}
	value := vars["LINOONE_RESOLVER_BASE_URL"]
	if value == nil {
		return []error{errors.New("the issue function has no LINOONE_RESOLVER_BASE_URL")}
	}
	cond, ok := followLocal(m, value).(*hclsyntax.ConditionalExpr)
	if !ok {
		return []error{fmt.Errorf("%s: the resolver base URL must be a conditional on var.custom_domain_routable (custom domain : API endpoint)", value.Range())}
	}
	var errs []error
	if !refsWithLocals(m, cond.Condition)["var.custom_domain_routable"] {
		errs = append(errs, fmt.Errorf("%s: the resolver base URL's condition must depend on var.custom_domain_routable", cond.Condition.Range()))
	}
	if !refsWithLocals(m, cond.TrueResult)["var.custom_domain_name"] {
		errs = append(errs, fmt.Errorf("%s: the routable branch must be the custom domain", cond.TrueResult.Range()))
	}
	falseRefs := refsWithLocals(m, cond.FalseResult)
	endpoint := false
	for r := range falseRefs {
		if strings.HasPrefix(r, "module.") && strings.HasSuffix(r, ".api_endpoint") {
			endpoint = true
		}
	}
	if !endpoint || falseRefs["var.custom_domain_name"] {
		errs = append(errs, fmt.Errorf("%s: when not routable the resolver base URL must be the resolver API's api_endpoint output", cond.FalseResult.Range()))
	}

	// Everywhere else var.custom_domain_name may only configure an http-api call.
	allowed := []hcl.Range{cond.Range()}
	for r := range refsWithLocals(m, cond.Condition) {
		if name, ok := strings.CutPrefix(r, "local."); ok && m.locals[name] != nil {
			allowed = append(allowed, m.locals[name].Expr.Range())
		}
	}
	for _, b := range m.variables {
		allowed = append(allowed, b.Range())
	}
	for _, call := range append(callsOf(m, "http-api"), callsOf(m, "cdn")...) {
		if a := m.calls[call].Body.Attributes["custom_domain_name"]; a != nil {
			allowed = append(allowed, a.SrcRange)
		}
	}
	for _, file := range slices.Sorted(maps.Keys(m.files)) {
		for _, t := range traversals(m.files[file]) {
			if ref(t) != "var.custom_domain_name" {
				continue
			}
			if !slices.ContainsFunc(allowed, func(r hcl.Range) bool { return within(t.SourceRange(), r) }) {
				errs = append(errs, fmt.Errorf("%s: var.custom_domain_name used outside the custom_domain_routable rule", t.SourceRange()))
			}
		}
	}
	return errs
}

// functionEnv returns the environment variables a function module call passes.
func functionEnv(m *tfModule, call string) (map[string]hclsyntax.Expression, error) {
	b := m.calls[call]
	if b == nil {
		return nil, fmt.Errorf("no module call %q", call)
	}
	a := b.Body.Attributes["environment_variables"]
	if a == nil {
		return nil, fmt.Errorf("%s: module %q sets no environment_variables", b.DefRange(), call)
	}
	return mergedObject(m, a.Expr)
}

// grants returns action → sorted resource references of a function call's
// literal policy_statements.
func grants(m *tfModule, call string) (map[string][]string, error) {
	b := m.calls[call]
	if b == nil {
		return nil, fmt.Errorf("no module call %q", call)
	}
	a := b.Body.Attributes["policy_statements"]
	if a == nil {
		return map[string][]string{}, nil
	}
	tuple, ok := followLocal(m, a.Expr).(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil, fmt.Errorf("%s: policy_statements of %q must be a literal list", a.SrcRange, call)
	}
	out := map[string][]string{}
	for _, e := range tuple.Exprs {
		items, ok := objectItems(followLocal(m, e))
		if !ok || items["actions"] == nil || items["resources"] == nil {
			return nil, fmt.Errorf("%s: a statement must be { sid, actions, resources }", e.Range())
		}
		actions, ok := literalStrings(items["actions"])
		if !ok {
			return nil, fmt.Errorf("%s: actions must be literal", items["actions"].Range())
		}
		var resources []string
		for _, t := range traversals(items["resources"]) {
			resources = append(resources, ref(t))
		}
		if lits, ok := literalStrings(items["resources"]); ok {
			resources = append(resources, lits...)
		}
		for _, act := range actions {
			out[act] = append(out[act], resources...)
			slices.Sort(out[act])
			out[act] = slices.Compact(out[act])
		}
	}
	return out, nil
}

// markdownTable returns the header and the rows (cells trimmed; the separator row
// left out) of the first table after the first line starting with heading in the
// markdown src.
func markdownTable(src, heading string) (header []string, rows [][]string, err error) {
	lines := strings.Split(src, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, heading) })
	if start < 0 {
		return nil, nil, fmt.Errorf("no line starting %q", heading)
	}
	cells := func(line string) []string {
		parts := strings.Split(strings.TrimSpace(line), "|")
		parts = parts[1 : len(parts)-1]
		for i, p := range parts {
			parts[i] = strings.TrimSpace(p)
		}
		return parts
	}
	for _, line := range lines[start+1:] {
		isRow := strings.HasPrefix(strings.TrimSpace(line), "|")
		switch {
		case !isRow && header != nil:
			return header, rows, nil
		case !isRow:
			if strings.HasPrefix(line, "#") {
				return nil, nil, fmt.Errorf("no table under %q", heading)
			}
		case header == nil:
			header = cells(line)
		case strings.Trim(line, "|-: ") == "":
			// the separator row
		default:
			rows = append(rows, cells(line))
		}
	}
	if header == nil {
		return nil, nil, fmt.Errorf("no table under %q", heading)
	}
	return header, rows, nil
}

// backticked returns the `code` spans of a markdown cell.
func backticked(cell string) []string {
	parts := strings.Split(cell, "`")
	var out []string
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// checkEnvTable compares a README table of environment variables (a `NAME` column,
// then one column per function holding ✓ or nothing) with the names each function
// is given (function → variable names).
func checkEnvTable(header []string, rows [][]string, want map[string][]string) []error {
	var errs []error
	col := map[string]int{}
	for _, fn := range slices.Sorted(maps.Keys(want)) {
		if i := slices.Index(header, fn); i > 0 {
			col[fn] = i
		} else {
			errs = append(errs, fmt.Errorf("the table has no %q column", fn))
		}
	}
	got := map[string][]string{}
	for _, row := range rows {
		var names []string
		if len(row) > 0 {
			names = backticked(row[0])
		}
		if len(names) != 1 {
			errs = append(errs, fmt.Errorf("row %q: want one `NAME` in the first column", strings.Join(row, " | ")))
			continue
		}
		for fn, i := range col {
			switch {
			case i < len(row) && row[i] == "✓":
				got[fn] = append(got[fn], names[0])
			case i < len(row) && row[i] != "":
				errs = append(errs, fmt.Errorf("%s, %s: %q, want ✓ or nothing", names[0], fn, row[i]))
			}
		}
	}
	for _, fn := range slices.Sorted(maps.Keys(col)) {
		for _, name := range slices.Sorted(slices.Values(want[fn])) {
			if !slices.Contains(got[fn], name) {
				errs = append(errs, fmt.Errorf("%s: Terraform sets %s, the table does not tick it", fn, name))
			}
		}
		for _, name := range slices.Sorted(slices.Values(got[fn])) {
			if !slices.Contains(want[fn], name) {
				errs = append(errs, fmt.Errorf("%s: the table ticks %s, Terraform does not set it", fn, name))
			}
		}
	}
	return errs
}

// resourcePhrases name, in the IAM table of README.md, each resource the stack
// grants a function (a reference as grants returns it → the words naming it).
var resourcePhrases = map[string]string{
	"local.persist_gremlin_arn":                "`POST /persist/gremlin`",
	"local.persist_ingest_arn":                 "`POST /persist/ingest`",
	"aws_ssm_parameter.denylist.arn":           "`denylist`",
	"aws_ssm_parameter.idempotency_secret.arn": "`idempotency-secret`",
	"module.event_bus.arn":                     "the shared bus ARN",
	"module.click_dlq.queue_arn":               "the click DLQ",
}

// checkGrantsTable compares a README table of IAM grants (function | `actions` |
// resources in words, see resourcePhrases; several rows may grant one function
// the same action) with the grants of each function (function → action → refs).
func checkGrantsTable(rows [][]string, want map[string]map[string][]string) []error {
	var errs []error
	for _, fn := range slices.Sorted(maps.Keys(want)) {
		for _, refs := range want[fn] {
			for _, r := range refs {
				if resourcePhrases[r] == "" {
					errs = append(errs, fmt.Errorf("%s is granted %s, which resourcePhrases does not name", fn, r))
				}
			}
		}
	}
	got := map[string]map[string][]string{}
	for _, row := range rows {
		if len(row) != 3 {
			errs = append(errs, fmt.Errorf("row %q: want function | actions | resources", strings.Join(row, " | ")))
			continue
		}
		var refs []string
		for r, phrase := range resourcePhrases {
			if strings.Contains(row[2], phrase) {
				refs = append(refs, r)
			}
		}
		if len(refs) == 0 {
			errs = append(errs, fmt.Errorf("row %q names no resource of resourcePhrases", strings.Join(row, " | ")))
		}
		if got[row[0]] == nil {
			got[row[0]] = map[string][]string{}
		}
		for _, action := range backticked(row[1]) {
			merged := append(got[row[0]][action], refs...)
			slices.Sort(merged)
			got[row[0]][action] = slices.Compact(merged)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		errs = append(errs, fmt.Errorf("IAM grants, function → action → resources (-terraform +table):\n%s", diff))
	}
	return errs
}

// checkThinEnv checks that env is only a caller of stack: a provider, the terraform
// block and one call of the stack module that passes every stack variable as the
// environment variable of the same name, with each environment output the stack
// output of the same name. What may differ between environments is then only in
// the defaults (and validations) of their variables.
func checkThinEnv(env, stack *tfModule) []error {
	var errs []error
	allowed := map[string]bool{"terraform": true, "provider": true, "module": true, "variable": true, "output": true}
	for _, file := range slices.Sorted(maps.Keys(env.files)) {
		for _, b := range env.files[file].Blocks {
			if !allowed[b.Type] {
				errs = append(errs, fmt.Errorf("%s: %s block in an environment: it belongs in the stack module", b.DefRange(), b.Type))
			}
		}
	}
	if names := slices.Sorted(maps.Keys(env.calls)); !slices.Equal(names, []string{"stack"}) {
		errs = append(errs, fmt.Errorf("%s: module calls %v, want only [stack]", env.dir, names))
	}
	call := env.calls["stack"]
	if call == nil {
		return errs
	}
	if got := callsOf(env, "stack"); !slices.Equal(got, []string{"stack"}) {
		errs = append(errs, fmt.Errorf("%s: module \"stack\" source %q is not the stack module", call.DefRange(), callSource(call)))
	}
	passThrough := func(e hclsyntax.Expression, root, name string) bool {
		st, ok := e.(*hclsyntax.ScopeTraversalExpr)
		return ok && ref(st.Traversal) == root+"."+name
	}
	for arg, a := range call.Body.Attributes {
		if arg != "source" && arg != "providers" && callMetaArguments[arg] {
			errs = append(errs, fmt.Errorf("%s: module \"stack\" sets %s: an environment deploys one stack", a.SrcRange, arg))
		}
	}
	passed := map[string]bool{}
	for _, v := range slices.Sorted(maps.Keys(stack.variables)) {
		a := call.Body.Attributes[v]
		switch {
		case a == nil:
			errs = append(errs, fmt.Errorf("%s: module \"stack\" does not pass %q", call.DefRange(), v))
		case !passThrough(a.Expr, "var", v) || env.variables[v] == nil:
			errs = append(errs, fmt.Errorf("%s: module \"stack\" must pass %s = var.%s (a declared variable of the environment; its value is the environment's default)", a.SrcRange, v, v))
		default:
			passed[v] = true
		}
	}
	// A variable the stack does not take may only configure the provider.
	providerRefs := map[string]bool{}
	for _, file := range slices.Sorted(maps.Keys(env.files)) {
		for _, b := range env.files[file].Blocks {
			if b.Type == "provider" {
				maps.Copy(providerRefs, refsWithLocals(env, b.Body))
			}
		}
	}
	for _, v := range slices.Sorted(maps.Keys(env.variables)) {
		if !passed[v] && !providerRefs["var."+v] {
			errs = append(errs, fmt.Errorf("%s: variable %q is neither passed to the stack nor used by the provider", env.variables[v].DefRange(), v))
		}
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(stack.outputs)), slices.Sorted(maps.Keys(env.outputs))); diff != "" {
		errs = append(errs, fmt.Errorf("%s: outputs differ from the stack's (-stack +env):\n%s", env.dir, diff))
	}
	for _, name := range slices.Sorted(maps.Keys(env.outputs)) {
		b := env.outputs[name]
		if a := b.Body.Attributes["value"]; a == nil || !passThrough(a.Expr, "module.stack", name) {
			errs = append(errs, fmt.Errorf("%s: output %q must be module.stack.%s", b.DefRange(), name, name))
		}
	}
	return errs
}

// minTerraform is the oldest Terraform the environments may allow: the S3 backend's
// use_lockfile needs 1.10.
var minTerraform = [2]int{1, 10}

// checkBackend checks env's state backend: S3 with the native lock file, and the
// location (bucket, key, region) left to `terraform init -backend-config=…`.
func checkBackend(env *tfModule) []error {
	var errs []error
	var backends []*hclsyntax.Block
	for _, file := range slices.Sorted(maps.Keys(env.files)) {
		for _, b := range env.files[file].Blocks {
			if b.Type != "terraform" {
				continue
			}
			if a := b.Body.Attributes["required_version"]; a != nil {
				v, _ := literalString(a.Expr)
				var major, minor int
				if n, _ := fmt.Sscanf(strings.ReplaceAll(v, " ", ""), ">=%d.%d", &major, &minor); n != 2 || major < minTerraform[0] || major == minTerraform[0] && minor < minTerraform[1] {
					errs = append(errs, fmt.Errorf("%s: required_version %q must be \">= %d.%d\" or later (use_lockfile)", a.SrcRange, v, minTerraform[0], minTerraform[1]))
				}
			} else {
				errs = append(errs, fmt.Errorf("%s: terraform block without required_version", b.DefRange()))
			}
			for _, inner := range b.Body.Blocks {
				if inner.Type == "backend" {
					backends = append(backends, inner)
				}
			}
		}
	}
	if len(backends) != 1 {
		return append(errs, fmt.Errorf("%s: want one backend block, found %d", env.dir, len(backends)))
	}
	b := backends[0]
	if !slices.Equal(b.Labels, []string{"s3"}) {
		errs = append(errs, fmt.Errorf("%s: backend %v, want \"s3\"", b.DefRange(), b.Labels))
	}
	if v, ok := literalBool(exprOf(b.Body.Attributes["use_lockfile"])); !ok || !v {
		errs = append(errs, fmt.Errorf("%s: the s3 backend must set use_lockfile = true (native S3 locking)", b.DefRange()))
	}
	for _, name := range []string{"bucket", "key", "region", "dynamodb_table", "profile", "role_arn"} {
		if a := b.Body.Attributes[name]; a != nil {
			errs = append(errs, fmt.Errorf("%s: backend %s is committed; give it at terraform init -backend-config=%s=…", a.SrcRange, name, name))
		}
	}
	return errs
}

// checkReusable reports what a called module must not hold: provider
// configurations (the caller's job) and backend blocks (ignored in a module).
func checkReusable(m *tfModule) []error {
	var errs []error
	for _, file := range slices.Sorted(maps.Keys(m.files)) {
		for _, b := range m.files[file].Blocks {
			if b.Type == "provider" {
				errs = append(errs, fmt.Errorf("%s: provider block in a module: the environment configures providers", b.DefRange()))
			}
			if b.Type != "terraform" {
				continue
			}
			for _, inner := range b.Body.Blocks {
				if inner.Type == "backend" || inner.Type == "cloud" {
					errs = append(errs, fmt.Errorf("%s: %s block in a module: state is configured by the environment", inner.DefRange(), inner.Type))
				}
			}
		}
	}
	return errs
}

// ---------------------------------------------------------------------------
// openapi.yaml

// operations returns the "METHOD /path" operations of openapi.yaml by tag.
func operations(path string) (map[string]map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}
	out := map[string]map[string]bool{}
	for p, item := range doc.Paths {
		for method, node := range item {
			if !methods[method] {
				continue
			}
			var op struct {
				Tags     []string `yaml:"tags"`
				AlsoHead bool     `yaml:"x-linoone-also-head"`
			}
			if err := node.Decode(&op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, p, err)
			}
			if len(op.Tags) == 0 {
				return nil, fmt.Errorf("%s %s has no tag saying which API serves it", method, p)
			}
			for _, tag := range op.Tags {
				if out[tag] == nil {
					out[tag] = map[string]bool{}
				}
				out[tag][strings.ToUpper(method)+" "+p] = true
				if op.AlsoHead { // served as a HEAD route too (see the operation's description)
					out[tag]["HEAD "+p] = true
				}
			}
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Tests of the real configuration

func reportAll(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Error(err)
	}
}

func TestModulesFollowLayout(t *testing.T) {
	for _, name := range moduleNames {
		dir := filepath.Join("modules", name)
		t.Run(dir, func(t *testing.T) {
			for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
			m := mustLoad(t, dir)
			this := false
			for key := range m.resources {
				this = this || strings.HasSuffix(key, ".this")
			}
			if !this {
				t.Errorf("%s: no resource named \"this\"", dir)
			}
		})
	}
	// The stack composes modules: the same files, but no single main resource.
	for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md"} {
		if _, err := os.Stat(filepath.Join(stackDir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, name := range envNames {
		dir := filepath.Join("envs", name)
		for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "terraform.tfvars.example", "README.md"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
}

func TestReferencesAreDeclared(t *testing.T) {
	resolve := diskResolver()
	forEachModule(t, func(t *testing.T, m *tfModule) { reportAll(t, checkReferences(m, resolve)) })
}

func TestVariablesAndOutputsDocumented(t *testing.T) {
	forEachModule(t, func(t *testing.T, m *tfModule) { reportAll(t, checkDocs(m)) })
}

func TestReadmesListVariablesAndOutputs(t *testing.T) {
	check := func(t *testing.T, readme string, m *tfModule) {
		t.Helper()
		raw, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, names := range []map[string]*hclsyntax.Block{m.variables, m.outputs} {
			for _, name := range slices.Sorted(maps.Keys(names)) {
				if !strings.Contains(text, "`"+name+"`") {
					t.Errorf("%s does not list `%s`", readme, name)
				}
			}
		}
	}
	for _, name := range moduleNames {
		dir := filepath.Join("modules", name)
		t.Run(dir, func(t *testing.T) { check(t, filepath.Join(dir, "README.md"), mustLoad(t, dir)) })
	}
	t.Run(stackDir, func(t *testing.T) { check(t, filepath.Join(stackDir, "README.md"), mustLoad(t, stackDir)) })
	for _, name := range envNames {
		dir := filepath.Join("envs", name)
		t.Run(dir, func(t *testing.T) { check(t, "README.md", mustLoad(t, dir)) })
	}
}

func TestRoutesMatchOpenAPI(t *testing.T) {
	ops, err := operations(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops["resolver"]) == 0 || len(ops["management"]) == 0 {
		t.Fatalf("openapi.yaml tags: want resolver and management operations, got %v", ops)
	}
	// The environments only call the stack (TestEnvironmentsAreThin), so its routes
	// are every environment's routes.
	m := mustLoad(t, stackDir)
	if got := callsOf(m, "http-api"); !slices.Equal(got, []string{"management_api", "resolver_api"}) {
		t.Fatalf("%s: http-api calls = %v, want [management_api resolver_api]", stackDir, got)
	}
	resolver, err := routesOf(m, "resolver_api")
	if err != nil {
		t.Fatal(err)
	}
	management, err := routesOf(m, "management_api")
	if err != nil {
		t.Fatal(err)
	}
	// The management API answers HEAD on its public GETs as GET (mgmtapi headAsGet),
	// so each has an unsigned HEAD route; the contract lists only the GETs.
	for key := range publicManagementRoutes {
		if strings.HasPrefix(key, "HEAD ") {
			ops["management"][key] = true
		}
	}
	// Public resolver: no route is signed.
	reportAll(t, checkRoutes("resolver", resolver, ops["resolver"], "resolve", func(string) bool { return false }))
	// Management: everything is SigV4-signed except the liveness probe and the
	// contract (openapi.yaml and its HTML reference), which are public.
	reportAll(t, checkRoutes("management", management, ops["management"], "issue", func(key string) bool { return !publicManagementRoutes[key] }))
	for key := range publicManagementRoutes {
		if r, ok := management[key]; !ok || r.Auth != "NONE" {
			t.Errorf("management route %q: %+v (declared: %v), want authorization_type NONE", key, r, ok)
		}
	}
	// The management_url output names every route behind it, in the stack and in
	// each environment (which repeat its description).
	dirs := []string{stackDir}
	for _, env := range envNames {
		dirs = append(dirs, filepath.Join("envs", env))
	}
	for _, dir := range dirs {
		out := mustLoad(t, dir).outputs["management_url"]
		if out == nil {
			t.Errorf("%s: no output management_url", dir)
			continue
		}
		desc, _ := literalString(exprOf(out.Body.Attributes["description"]))
		named := routeMention.FindAllString(desc, -1)
		if diff := cmp.Diff(slices.Sorted(maps.Keys(management)), slices.Sorted(slices.Values(named))); diff != "" {
			t.Errorf("%s: routes named by the management_url description (-terraform +description):\n%s", dir, diff)
		}
	}
}

// routeMention is a "METHOD /path" in prose.
var routeMention = regexp.MustCompile(`\b(GET|HEAD|POST|PUT|PATCH|DELETE) /[^\s,;)]*`)

// publicManagementRoutes are the management API's routes without a signature; every
// other management route is AWS_IAM. Each public GET has its HEAD twin.
var publicManagementRoutes = map[string]bool{
	"GET /healthz": true, "GET /openapi.yaml": true, "GET /docs": true,
	"HEAD /healthz": true, "HEAD /openapi.yaml": true, "HEAD /docs": true,
}

func TestClickDLQPair(t *testing.T) {
	reportAll(t, checkClickDLQ(mustLoad(t, filepath.Join("modules", "click-dlq"))))
}

func TestFunctionsAreGoOnArm64(t *testing.T) {
	m := mustLoad(t, filepath.Join("modules", "function"))
	if m.resources["aws_lambda_function.this"] == nil {
		t.Fatal("modules/function has no aws_lambda_function.this")
	}
	forEachModule(t, func(t *testing.T, m *tfModule) { reportAll(t, checkFunctions(m)) })
	stack := mustLoad(t, stackDir)
	if got := callsOf(stack, "function"); !slices.Equal(got, []string{"issue", "replay", "resolve"}) {
		t.Errorf("%s: function calls = %v, want [issue replay resolve]", stackDir, got)
	}
	for _, call := range callsOf(stack, "function") {
		fn, ok := literalString(exprOf(stack.calls[call].Body.Attributes["filename"]))
		if !ok {
			// "${var.artifacts_dir}/<name>.zip" is a template: check its tail.
			a := stack.calls[call].Body.Attributes["filename"]
			if tmpl, isTmpl := exprOf(a).(*hclsyntax.TemplateExpr); isTmpl && len(tmpl.Parts) > 0 {
				fn, _ = literalString(tmpl.Parts[len(tmpl.Parts)-1])
			}
		}
		if fn != "/"+call+".zip" {
			t.Errorf("%s: module %q filename must be \"${var.artifacts_dir}/%s.zip\" (make build output)", stackDir, call, call)
		}
	}
}

func TestNoForbiddenResourcesOrWildcards(t *testing.T) {
	forEachModule(t, func(t *testing.T, m *tfModule) { reportAll(t, checkForbidden(m)) })
}

func TestResolverBaseURLUsesCustomDomainOnlyWhenRoutable(t *testing.T) {
	// In the stack; the environments pass the custom domain variables and the
	// resolver_url output through unchanged (TestEnvironmentsAreThin).
	t.Run(stackDir, func(t *testing.T) {
		m := mustLoad(t, stackDir)
		reportAll(t, checkResolverBaseURL(m))
		// The resolver_url output reports the value the issue function gets.
		vars, err := functionEnv(m, "issue")
		if err != nil {
			t.Fatal(err)
		}
		out := m.outputs["resolver_url"]
		if out == nil {
			t.Fatal("no output resolver_url")
		}
		if e := vars["LINOONE_RESOLVER_BASE_URL"]; e == nil || followLocal(m, exprOf(out.Body.Attributes["value"])) != followLocal(m, e) {
			t.Error("output resolver_url must be the same value as the issue function's LINOONE_RESOLVER_BASE_URL")
		}
		// The http-api module creates the domain resources from a name and a
		// certificate (DNS needs their target before discovery can prove routing),
		// never from the routable flag alone.
		api := mustLoad(t, filepath.Join("modules", "http-api"))
		for _, key := range []string{"aws_apigatewayv2_domain_name.this", "aws_apigatewayv2_api_mapping.this"} {
			b := api.resources[key]
			if b == nil || b.Body.Attributes["count"] == nil {
				t.Errorf("modules/http-api: %s must be counted", key)
				continue
			}
			refs := refsWithLocals(api, b.Body.Attributes["count"].Expr)
			if !refs["var.custom_domain_name"] || !refs["var.custom_domain_certificate_arn"] {
				t.Errorf("modules/http-api: %s must be counted on the domain name and certificate", key)
			}
		}
	})
}

func TestFunctionEnvironment(t *testing.T) {
	common := []string{"LINOONE_ENVIRONMENT", "LINOONE_LOG_LEVEL"}
	want := map[string][]string{
		"issue": append([]string{"LINOONE_PERSIST_URL", "LINOONE_PERSIST_SIGV4", "LINOONE_RESOLVER_BASE_URL", "LINOONE_PERSIST_INLINE_LITERALS",
			"LINOONE_DENYLIST_PARAM", "LINOONE_DENYLIST_REFRESH", "LINOONE_METRICS_NAMESPACE", "LINOONE_IDEMPOTENCY_SECRET_PARAM"}, common...),
		"resolve": append([]string{"LINOONE_PERSIST_URL", "LINOONE_PERSIST_SIGV4", "LINOONE_PERSIST_INLINE_LITERALS", "LINOONE_EVENT_BUS", "LINOONE_CLICK_DLQ_URL", "LINOONE_PUBLISH_TIMEOUT", "LINOONE_DLQ_TIMEOUT", "LINOONE_METRICS_NAMESPACE",
			"LINOONE_DENYLIST_PARAM", "LINOONE_DENYLIST_REFRESH", "LINOONE_VISITOR_IP_FROM", "LINOONE_ORIGIN_VERIFY_SECRET"}, common...),
		"replay": append([]string{"LINOONE_EVENT_BUS", "LINOONE_METRICS_NAMESPACE"}, common...),
	}
	m := mustLoad(t, stackDir)
	for _, fn := range slices.Sorted(maps.Keys(want)) {
		t.Run(stackDir+"/"+fn, func(t *testing.T) {
			vars, err := functionEnv(m, fn)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want[fn])), slices.Sorted(maps.Keys(vars))); diff != "" {
				t.Errorf("environment variables (-want +got):\n%s", diff)
			}
			if e := vars["LINOONE_PERSIST_SIGV4"]; e != nil {
				if s, _ := literalString(e); s != "true" {
					t.Errorf("LINOONE_PERSIST_SIGV4 = %q, want \"true\"", s)
				}
			}
		})
	}
}

func TestLeastPrivilegeStatements(t *testing.T) {
	const (
		gremlin  = "local.persist_gremlin_arn" // issue 48: resolve only looks up
		ingest   = "local.persist_ingest_arn"
		bus      = "module.event_bus.arn"
		dlq      = "module.click_dlq.queue_arn"
		denylist = "aws_ssm_parameter.denylist.arn" // issue 11: issue and resolve only
	)
	want := map[string]map[string][]string{
		"issue": {
			"execute-api:Invoke": {gremlin, ingest},
			"ssm:GetParameter":   {denylist, "aws_ssm_parameter.idempotency_secret.arn"},
		},
		"resolve": {
			"execute-api:Invoke": {gremlin},
			"ssm:GetParameter":   {denylist},
			"events:PutEvents":   {bus},
			"sqs:SendMessage":    {dlq},
		},
		"replay": {
			"sqs:ReceiveMessage":          {dlq},
			"sqs:DeleteMessage":           {dlq},
			"sqs:GetQueueAttributes":      {dlq},
			"sqs:ChangeMessageVisibility": {dlq},
			"events:PutEvents":            {bus},
		},
	}
	stack := mustLoad(t, stackDir)
	for _, fn := range slices.Sorted(maps.Keys(want)) {
		t.Run(stackDir+"/"+fn, func(t *testing.T) {
			got, err := grants(stack, fn)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want[fn], got); diff != "" {
				t.Errorf("IAM grants, action → resources (-want +got):\n%s", diff)
			}
		})
	}
	// The module itself grants only writes to the function's own log group.
	m := mustLoad(t, filepath.Join("modules", "function"))
	doc := m.data["aws_iam_policy_document.this"]
	if doc == nil {
		t.Fatal("modules/function: no data.aws_iam_policy_document.this")
	}
	for _, b := range doc.Body.Blocks {
		if b.Type != "statement" {
			continue
		}
		actions, _ := literalStrings(exprOf(b.Body.Attributes["actions"]))
		if slices.Equal(actions, []string{"logs:CreateLogStream", "logs:PutLogEvents"}) {
			if r := b.Body.Attributes["resources"]; r == nil || !refsWithLocals(m, r.Expr)["aws_cloudwatch_log_group.this.arn"] {
				t.Error("modules/function: log writes must be limited to aws_cloudwatch_log_group.this")
			}
		}
	}
}

// TestReadmeFunctionTables: the environment variable and IAM tables of README.md
// are what the stack gives each function, so that neither drifts from it.
func TestReadmeFunctionTables(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	stack := mustLoad(t, stackDir)
	env := map[string][]string{}
	iam := map[string]map[string][]string{}
	for _, fn := range callsOf(stack, "function") {
		vars, err := functionEnv(stack, fn)
		if err != nil {
			t.Fatal(err)
		}
		env[fn] = slices.Sorted(maps.Keys(vars))
		if iam[fn], err = grants(stack, fn); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("environment variables", func(t *testing.T) {
		header, rows, err := markdownTable(string(raw), "### Function configuration (environment variables)")
		if err != nil {
			t.Fatal(err)
		}
		reportAll(t, checkEnvTable(header, rows, env))
	})
	t.Run("IAM", func(t *testing.T) {
		_, rows, err := markdownTable(string(raw), "### IAM (least privilege)")
		if err != nil {
			t.Fatal(err)
		}
		reportAll(t, checkGrantsTable(rows, iam))
	})
}

// TestChecksTableListsEveryTest: the "Checks" section of README.md lists every test
// of this package, so that a reader knows what is enforced.
func TestChecksTableListsEveryTest(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			tests = append(tests, m[1])
		}
	}
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := markdownTable(string(raw), "3. **Go tests")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, row := range rows {
		listed = append(listed, backticked(row[0])...)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(tests)), slices.Sorted(slices.Values(listed))); diff != "" {
		t.Errorf("README.md's table of Go tests (-tests +table):\n%s", diff)
	}
}

// testFunc is the declaration of a top-level test.
var testFunc = regexp.MustCompile(`(?m)^func (Test\w*)\(t \*testing\.T\)`)

// TestFunctionsStartWithoutSSM: issue 48. A function's start reads nothing from
// SSM, so a slow or throttled SSM never delays or fails it: each function's
// configuration loads from exactly the variables the stack sets, none of them
// names a parameter that configuration would read at start, issue and resolve get
// the Persist URL itself, and no SSM parameter holds it or the resolver base URL.
func TestFunctionsStartWithoutSSM(t *testing.T) {
	stack := mustLoad(t, stackDir)
	for _, fn := range callsOf(stack, "function") {
		t.Run(fn, func(t *testing.T) {
			vars, err := functionEnv(stack, fn)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"LINOONE_PERSIST_URL_PARAM", "LINOONE_RESOLVER_BASE_URL_PARAM", "LINOONE_CONFIG_REVISION"} {
				if vars[name] != nil {
					t.Errorf("%s is set: the function's start reads its configuration from the environment", name)
				}
			}
			if err := loadFunctionConfig(fn, vars); err != nil {
				t.Errorf("the configuration does not load from the variables the stack sets: %v", err)
			}
			if fn == "replay" {
				return
			}
			if e := vars["LINOONE_PERSIST_URL"]; e == nil || !refsWithLocals(stack, e)["var.persist_url"] {
				t.Error("LINOONE_PERSIST_URL must be var.persist_url")
			}
		})
	}
	for key, b := range stack.resources {
		if !strings.HasPrefix(key, "aws_ssm_parameter.") {
			continue
		}
		refs := refsWithLocals(stack, exprOf(b.Body.Attributes["value"]))
		if refs["var.persist_url"] || refs["var.custom_domain_name"] || refs["local.resolver_base_url"] {
			t.Errorf("%s holds a URL the functions get in their environment", key)
		}
	}
}

// startupSamples are valid values of the variables the stack sets, to load a
// function's configuration from the stack's variable names.
var startupSamples = map[string]string{
	"LINOONE_ENVIRONMENT":              "test",
	"LINOONE_LOG_LEVEL":                "info",
	"LINOONE_PERSIST_URL":              "https://persist.example.com",
	"LINOONE_PERSIST_SIGV4":            "true",
	"LINOONE_PERSIST_INLINE_LITERALS":  "false",
	"LINOONE_RESOLVER_BASE_URL":        "https://abc123defg.execute-api.us-east-1.amazonaws.com",
	"LINOONE_EVENT_BUS":                "arn:aws:events:us-east-1:123456789012:event-bus/bus",
	"LINOONE_CLICK_DLQ_URL":            "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
	"LINOONE_PUBLISH_TIMEOUT":          "150ms",
	"LINOONE_DLQ_TIMEOUT":              "100ms",
	"LINOONE_METRICS_NAMESPACE":        "Linoone",
	"LINOONE_DENYLIST_PARAM":           "/linoone/test/denylist",
	"LINOONE_DENYLIST_REFRESH":         "1m",
	"LINOONE_IDEMPOTENCY_SECRET_PARAM": "/linoone/test/idempotency-secret",
	"LINOONE_VISITOR_IP_FROM":          "cloudfront",
	"LINOONE_ORIGIN_VERIFY_SECRET":     "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL",
}

// loadFunctionConfig loads function fn's configuration with exactly the variables
// vars names, each set to its sample.
func loadFunctionConfig(fn string, vars map[string]hclsyntax.Expression) error {
	getenv := func(name string) string {
		if vars[name] == nil {
			return ""
		}
		return startupSamples[name]
	}
	var err error
	switch fn {
	case "issue":
		_, err = config.LoadIssueFunction(getenv)
	case "resolve":
		_, err = config.LoadResolveFunction(getenv)
	case "replay":
		_, err = config.LoadReplayFunction(getenv)
	default:
		err = fmt.Errorf("no configuration loader for function %q", fn)
	}
	return err
}

// TestDenyListParameter: issue 11. The deny list parameter starts as a comment (SSM
// refuses an empty value) and Terraform never resets what operators wrote.
func TestDenyListParameter(t *testing.T) {
	m := mustLoad(t, stackDir)
	r := m.resources["aws_ssm_parameter.denylist"]
	if r == nil {
		t.Fatal("modules/stack: no aws_ssm_parameter.denylist")
	}
	if v, ok := literalString(exprOf(r.Body.Attributes["value"])); !ok || !strings.HasPrefix(v, "#") {
		t.Errorf("initial value %q: want a literal comment line", v)
	}
	ignored := false
	for _, b := range r.Body.Blocks {
		if b.Type != "lifecycle" || b.Body.Attributes["ignore_changes"] == nil {
			continue
		}
		for _, tr := range traversals(b.Body.Attributes["ignore_changes"].Expr) {
			ignored = ignored || ref(tr) == "value"
		}
	}
	if !ignored {
		t.Error("aws_ssm_parameter.denylist must have lifecycle { ignore_changes = [value] }")
	}
}

func TestEnvironmentsAreThin(t *testing.T) {
	stack := mustLoad(t, stackDir)
	reportAll(t, checkReusable(stack))
	for _, env := range envNames {
		t.Run(env, func(t *testing.T) {
			m := mustLoad(t, filepath.Join("envs", env))
			reportAll(t, checkThinEnv(m, stack))
			reportAll(t, checkBackend(m))
			// main.tf holds the provider and the stack call, nothing else.
			var blocks []string
			for _, b := range m.files["main.tf"].Blocks {
				blocks = append(blocks, b.Type+" "+strings.Join(b.Labels, " "))
			}
			// The second provider is us-east-1's, for the cdn option's WAF.
			if diff := cmp.Diff([]string{"provider aws", "provider aws", "module stack"}, blocks); diff != "" {
				t.Errorf("envs/%s/main.tf blocks (-want +got):\n%s", env, diff)
			}
		})
	}
}

func TestEnvironmentsTakeSameInputsAndOutputs(t *testing.T) {
	sandbox := mustLoad(t, filepath.Join("envs", "sandbox"))
	prod := mustLoad(t, filepath.Join("envs", "prod"))
	stack := mustLoad(t, stackDir)
	for _, c := range []struct {
		what     string
		sandbox  map[string]*hclsyntax.Block
		prod     map[string]*hclsyntax.Block
		expected []string
	}{
		{what: "variables", sandbox: sandbox.variables, prod: prod.variables},
		{
			what: "outputs", sandbox: sandbox.outputs, prod: prod.outputs,
			expected: []string{"click_deadletter_url", "click_dlq_url", "event_bus_arn", "event_bus_name", "issue_function_name", "management_url", "replay_function_name", "resolve_function_name", "resolver_api_endpoint", "resolver_custom_domain_target", "resolver_url"},
		},
	} {
		s, p := slices.Sorted(maps.Keys(c.sandbox)), slices.Sorted(maps.Keys(c.prod))
		if diff := cmp.Diff(s, p); diff != "" {
			t.Errorf("%s differ (-sandbox +prod):\n%s", c.what, diff)
		}
		for _, name := range c.expected {
			if c.prod[name] == nil || c.sandbox[name] == nil || stack.outputs[name] == nil {
				t.Errorf("%s: %q missing", c.what, name)
			}
		}
	}
	// Set by linoone discover or named in terraform/README.md: every environment takes
	// them and the stack uses them.
	for _, name := range []string{"custom_domain_name", "custom_domain_routable", "custom_domain_certificate_arn", "event_bus_name", "create_bus", "artifacts_dir", "persist_api_execution_arn"} {
		for dir, m := range map[string]*tfModule{"envs/sandbox": sandbox, "envs/prod": prod, stackDir: stack} {
			if m.variables[name] == nil {
				t.Errorf("%s: variable %q missing (set by linoone discover or named in terraform/README.md)", dir, name)
			}
		}
	}
	for dir, m := range map[string]*tfModule{"envs/sandbox": sandbox, "envs/prod": prod} {
		if d, _ := literalString(exprOf(m.variables["artifacts_dir"].Body.Attributes["default"])); d != "../../../dist" {
			t.Errorf("%s: artifacts_dir default = %q, want ../../../dist", dir, d)
		}
	}
	// The defaults are the environments': the stack has none to drift from them.
	for _, name := range slices.Sorted(maps.Keys(stack.variables)) {
		if stack.variables[name].Body.Attributes["default"] != nil {
			t.Errorf("%s: variable %q has a default; defaults belong to the environments", stackDir, name)
		}
	}
}

func TestBusCreatedOnlyInSandbox(t *testing.T) {
	sandbox := mustLoad(t, filepath.Join("envs", "sandbox"))
	prod := mustLoad(t, filepath.Join("envs", "prod"))
	if v, ok := literalBool(exprOf(sandbox.variables["create_bus"].Body.Attributes["default"])); !ok || !v {
		t.Error("sandbox: create_bus must default to true")
	}
	if prod.variables["event_bus_name"].Body.Attributes["default"] != nil {
		t.Error("prod: event_bus_name must be required (no default): production imports the shared bus")
	}
	cb := prod.variables["create_bus"]
	if v, ok := literalBool(exprOf(cb.Body.Attributes["default"])); !ok || v {
		t.Error("prod: create_bus must default to false")
	}
	validated := false
	for _, b := range cb.Body.Blocks {
		if b.Type == "validation" && refsWithLocals(prod, exprOf(b.Body.Attributes["condition"]))["var.create_bus"] {
			validated = true
		}
	}
	if !validated {
		t.Error("prod: create_bus needs a validation rejecting true")
	}
	// The stack hands the environment's choice to the event-bus module unchanged.
	stack := mustLoad(t, stackDir)
	if got := callsOf(stack, "event-bus"); !slices.Equal(got, []string{"event_bus"}) {
		t.Fatalf("%s: event-bus calls = %v, want [event_bus]", stackDir, got)
	}
	for _, v := range []string{"create_bus", "event_bus_name"} {
		a := stack.calls["event_bus"].Body.Attributes[v]
		if st, ok := exprOf(a).(*hclsyntax.ScopeTraversalExpr); !ok || ref(st.Traversal) != "var."+v {
			t.Errorf("%s: module \"event_bus\" must pass %s = var.%s", stackDir, v, v)
		}
	}
	bus := mustLoad(t, filepath.Join("modules", "event-bus"))
	for _, b := range []*hclsyntax.Block{bus.resources["aws_cloudwatch_event_bus.this"], bus.data["aws_cloudwatch_event_bus.this"]} {
		if b == nil || b.Body.Attributes["count"] == nil || !refsWithLocals(bus, b.Body.Attributes["count"].Expr)["var.create_bus"] {
			t.Error("modules/event-bus: the bus resource and data source must be counted on var.create_bus")
		}
	}
}

// ---------------------------------------------------------------------------
// The checkers must be able to fail.

func TestCheckersRejectBrokenConfig(t *testing.T) {
	child, err := parseModule("child", map[string]string{
		"variables.tf": `variable "needed" {
  description = "x"
  type        = string
}`,
		"outputs.tf": `output "id" {
  description = "x"
  value       = var.needed
}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(*tfModule, string) (*tfModule, error) { return child, nil }

	goodDLQ := `
resource "aws_sqs_queue" "deadletter" {
  sqs_managed_sse_enabled = true
}
resource "aws_sqs_queue" "this" {
  sqs_managed_sse_enabled    = true
  visibility_timeout_seconds = 6 * var.replay_timeout_seconds
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.deadletter.arn
    maxReceiveCount     = 5
  })
}
resource "aws_lambda_event_source_mapping" "this" {
  event_source_arn        = aws_sqs_queue.this.arn
  function_response_types = ["ReportBatchItemFailures"]
}`
	goodBaseURL := `
locals {
  enabled = var.custom_domain_routable && var.custom_domain_name != ""
  base    = local.enabled ? "https://${var.custom_domain_name}" : module.resolver_api.api_endpoint
}
module "issue" {
  environment_variables = { LINOONE_RESOLVER_BASE_URL = local.base }
}`

	cases := []struct {
		name  string
		src   string
		check func(*tfModule) []error
		want  string // substring of one error; "" = must pass
	}{
		{"references ok", `
variable "a" {
  type = string
}
locals {
  b = var.a
}
module "m" {
  source = "./child"
  needed = local.b
}
output "o" {
  value = module.m.id
}`, func(m *tfModule) []error { return checkReferences(m, resolve) }, ""},
		{"undeclared variable", `output "o" { value = var.nope }`, func(m *tfModule) []error { return checkReferences(m, resolve) }, "var.nope is not declared"},
		{"undeclared local", `output "o" { value = local.nope }`, func(m *tfModule) []error { return checkReferences(m, resolve) }, "local.nope is not declared"},
		{"undeclared resource", `output "o" { value = aws_sqs_queue.nope.arn }`, func(m *tfModule) []error { return checkReferences(m, resolve) }, "no such resource"},
		{"undeclared data source", `output "o" { value = data.aws_iam_policy_document.nope.json }`, func(m *tfModule) []error { return checkReferences(m, resolve) }, "no such data source"},
		{"missing module output", `
module "m" {
  source = "./child"
  needed = "x"
}
output "o" { value = module.m.nope }`, func(m *tfModule) []error { return checkReferences(m, resolve) }, `has no output "nope"`},
		{"unknown module argument", `
module "m" {
  source = "./child"
  needed = "x"
  extra  = "y"
}`, func(m *tfModule) []error { return checkReferences(m, resolve) }, `passes "extra"`},
		{"missing required module argument", `
module "m" {
  source = "./child"
}`, func(m *tfModule) []error { return checkReferences(m, resolve) }, `required variable "needed"`},
		{"variable without description", `variable "v" { type = string }`, checkDocs, "has no description"},
		{"variable without type", `variable "v" { description = "d" }`, checkDocs, "has no type"},
		{"output without description", `output "o" { value = 1 }`, checkDocs, "has no description"},
		{"dlq ok", goodDLQ, checkClickDLQ, ""},
		{"dlq without redrive", strings.Replace(goodDLQ, "redrive_policy", "policy", 1), checkClickDLQ, "no redrive_policy"},
		{"dlq redriving to itself", strings.Replace(goodDLQ, "aws_sqs_queue.deadletter.arn", "aws_sqs_queue.this.arn", 1), checkClickDLQ, "deadLetterTargetArn"},
		{"dlq unencrypted", strings.Replace(goodDLQ, "sqs_managed_sse_enabled = true\n}", "sqs_managed_sse_enabled = false\n}", 1), checkClickDLQ, "sqs_managed_sse_enabled"},
		{"esm without partial batch", strings.Replace(goodDLQ, `["ReportBatchItemFailures"]`, `[]`, 1), checkClickDLQ, "ReportBatchItemFailures"},
		{"lambda on x86", `
resource "aws_lambda_function" "this" {
  runtime          = "provided.al2023"
  architectures    = ["x86_64"]
  handler          = "bootstrap"
  source_code_hash = filebase64sha256("f.zip")
}`, checkFunctions, "architectures"},
		{"lambda on go1.x", `
resource "aws_lambda_function" "this" {
  runtime          = "go1.x"
  architectures    = ["arm64"]
  handler          = "main"
  source_code_hash = filebase64sha256("f.zip")
}`, checkFunctions, "runtime"},
		{"dynamodb table", `resource "aws_dynamodb_table" "tokens" {}`, checkForbidden, "DynamoDB is forbidden"},
		{"wildcard action", `
data "aws_iam_policy_document" "p" {
  statement {
    actions   = ["sqs:*"]
    resources = ["arn:aws:sqs:us-east-1:123456789012:q"]
  }
}`, checkForbidden, "wildcard IAM action"},
		{"star action in object", `
module "f" {
  policy_statements = [{ sid = "A", actions = ["*"], resources = ["arn:x"] }]
}`, checkForbidden, "wildcard IAM action"},
		{"dynamodb action", `
module "f" {
  policy_statements = [{ sid = "A", actions = ["dynamodb:GetItem"], resources = ["arn:x"] }]
}`, checkForbidden, "DynamoDB IAM action"},
		{"star resource", `
module "f" {
  policy_statements = [{ sid = "A", actions = ["events:PutEvents"], resources = ["*"] }]
}`, checkForbidden, `IAM resource "*"`},
		{"base url ok", goodBaseURL, checkResolverBaseURL, ""},
		{"base url always custom domain", `
module "issue" {
  environment_variables = { LINOONE_RESOLVER_BASE_URL = "https://${var.custom_domain_name}" }
}`, checkResolverBaseURL, "must be a conditional"},
		{"base url gated on the name only", strings.Replace(goodBaseURL, "var.custom_domain_routable && ", "", 1), checkResolverBaseURL, "var.custom_domain_routable"},
		{"base url falls back to a placeholder", strings.Replace(goodBaseURL, "module.resolver_api.api_endpoint", `"https://short.example.com"`, 1), checkResolverBaseURL, "api_endpoint"},
		{"custom domain leaks elsewhere", goodBaseURL + `
module "resolve" {
  environment_variables = { BASE = "https://${var.custom_domain_name}" }
}`, checkResolverBaseURL, "outside the custom_domain_routable rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseModule("snippet", map[string]string{"main.tf": c.src})
			if err != nil {
				t.Fatal(err)
			}
			errs := c.check(m)
			if c.want == "" {
				reportAll(t, errs)
				return
			}
			if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), c.want) }) {
				t.Errorf("want an error containing %q, got %v", c.want, errs)
			}
		})
	}

	t.Run("environments", func(t *testing.T) {
		stack, err := parseModule("stack", map[string]string{
			"variables.tf": `
variable "a" {
  type = string
}
variable "b" {
  type = number
}`,
			"outputs.tf": `output "o" { value = var.a }`,
		})
		if err != nil {
			t.Fatal(err)
		}
		goodEnv := `
terraform {
  required_version = ">= 1.10"
  backend "s3" {
    use_lockfile = true
  }
}
provider "aws" {
  region = var.region
}
variable "region" {
  type = string
}
variable "a" {
  type    = string
  default = "x"
}
variable "b" {
  type    = number
  default = 1
}
module "stack" {
  source = "../../modules/stack"
  a      = var.a
  b      = var.b
}
output "o" { value = module.stack.o }
`
		envCases := []struct {
			name  string
			src   string
			check func(*tfModule) []error
			want  string
		}{
			{"thin ok", goodEnv, func(m *tfModule) []error { return checkThinEnv(m, stack) }, ""},
			{"backend ok", goodEnv, checkBackend, ""},
			{"resource in env", goodEnv + `resource "aws_sqs_queue" "q" {}`, func(m *tfModule) []error { return checkThinEnv(m, stack) }, "resource block in an environment"},
			{"locals in env", goodEnv + `locals { c = 1 }`, func(m *tfModule) []error { return checkThinEnv(m, stack) }, "locals block in an environment"},
			{"second module call", goodEnv + `
module "extra" {
  source = "../../modules/function"
}`, func(m *tfModule) []error { return checkThinEnv(m, stack) }, "want only [stack]"},
			{"other source", strings.Replace(goodEnv, "../../modules/stack", "../../modules/stack-copy", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "is not the stack module"},
			{"variable not passed", strings.Replace(goodEnv, "  b      = var.b\n", "", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, `does not pass "b"`},
			{"literal instead of variable", strings.Replace(goodEnv, "b      = var.b", "b      = 2", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "must pass b = var.b"},
			{"computed pass", strings.Replace(goodEnv, "b      = var.b", "b      = var.b + 1", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "must pass b = var.b"},
			{"crossed variables", strings.Replace(goodEnv, "a      = var.a", "a      = var.region", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "must pass a = var.a"},
			{"unused variable", goodEnv + `variable "c" { type = string }`, func(m *tfModule) []error { return checkThinEnv(m, stack) }, `variable "c" is neither passed`},
			{"counted stack", strings.Replace(goodEnv, `source = "../../modules/stack"`, "source = \"../../modules/stack\"\n  count  = 2", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "sets count"},
			{"computed output", strings.Replace(goodEnv, "module.stack.o", `"https://${module.stack.o}"`, 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "must be module.stack.o"},
			{"missing output", strings.Replace(goodEnv, `output "o" { value = module.stack.o }`, "", 1), func(m *tfModule) []error { return checkThinEnv(m, stack) }, "outputs differ"},
			{"no backend", strings.Replace(goodEnv, "backend \"s3\" {\n    use_lockfile = true\n  }", "", 1), checkBackend, "want one backend block"},
			{"local backend", strings.Replace(goodEnv, `backend "s3"`, `backend "local"`, 1), checkBackend, `want "s3"`},
			{"no lock file", strings.Replace(goodEnv, "use_lockfile = true", "use_lockfile = false", 1), checkBackend, "use_lockfile = true"},
			{"bucket committed", strings.Replace(goodEnv, "use_lockfile = true", "use_lockfile = true\n    bucket       = \"state\"", 1), checkBackend, "backend bucket is committed"},
			{"old terraform", strings.Replace(goodEnv, ">= 1.10", ">= 1.6", 1), checkBackend, "required_version"},
			{"provider in module", goodEnv, checkReusable, "provider block in a module"},
			{"backend in module", goodEnv, checkReusable, "backend block in a module"},
		}
		for _, c := range envCases {
			t.Run(c.name, func(t *testing.T) {
				m, err := parseModule("envs/x", map[string]string{"main.tf": c.src})
				if err != nil {
					t.Fatal(err)
				}
				errs := c.check(m)
				if c.want == "" {
					reportAll(t, errs)
					return
				}
				if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), c.want) }) {
					t.Errorf("want an error containing %q, got %v", c.want, errs)
				}
			})
		}
	})

	t.Run("readme tables", func(t *testing.T) {
		env := map[string][]string{"issue": {"A", "B"}, "resolve": {"B"}}
		envTable := "## Env\n\n| Variable | issue | resolve | Value |\n|---|---|---|---|\n| `A` | ✓ | | a |\n| `B` | ✓ | ✓ | b |\n\nAfter.\n"
		iam := map[string]map[string][]string{
			"issue":   {"ssm:GetParameter": {"aws_ssm_parameter.denylist.arn", "aws_ssm_parameter.idempotency_secret.arn"}},
			"resolve": {"events:PutEvents": {"module.event_bus.arn"}, "sqs:SendMessage": {"module.click_dlq.queue_arn"}},
		}
		iamTable := "## IAM\n\nText.\n\n| Function | Actions | Resource |\n|---|---|---|\n" +
			"| issue | `ssm:GetParameter` | the `idempotency-secret` parameter |\n| issue | `ssm:GetParameter` | the `denylist` parameter |\n" +
			"| resolve | `events:PutEvents` | the shared bus ARN |\n| resolve | `sqs:SendMessage` | the click DLQ |\n"
		for _, c := range []struct {
			name, table, want string
		}{
			{"env ok", envTable, ""},
			{"env variable missing", strings.Replace(envTable, "| `A` | ✓ | | a |\n", "", 1), "issue: Terraform sets A, the table does not tick it"},
			{"env tick missing", strings.Replace(envTable, "| `B` | ✓ | ✓ |", "| `B` | ✓ | |", 1), "resolve: Terraform sets B, the table does not tick it"},
			{"env tick extra", strings.Replace(envTable, "| `A` | ✓ | |", "| `A` | ✓ | ✓ |", 1), "resolve: the table ticks A, Terraform does not set it"},
			{"env bad cell", strings.Replace(envTable, "| `A` | ✓ | |", "| `A` | ✓ | yes |", 1), `want ✓ or nothing`},
			{"env column missing", strings.Replace(envTable, "| resolve |", "| replay |", 1), `no "resolve" column`},
			{"iam ok", iamTable, ""},
			{"iam resource missing", strings.Replace(iamTable, "| issue | `ssm:GetParameter` | the `denylist` parameter |\n", "", 1), "aws_ssm_parameter.denylist.arn"},
			{"iam action missing", strings.Replace(iamTable, "| resolve | `sqs:SendMessage` | the click DLQ |\n", "", 1), "sqs:SendMessage"},
			{"iam resource extra", strings.Replace(iamTable, "| the click DLQ |", "| the click DLQ and the shared bus ARN |", 1), "module.event_bus.arn"},
			{"iam unknown resource", strings.Replace(iamTable, "the click DLQ", "the queue", 1), "names no resource"},
		} {
			t.Run(c.name, func(t *testing.T) {
				heading := "## Env"
				if strings.HasPrefix(c.name, "iam") {
					heading = "## IAM"
				}
				header, rows, err := markdownTable(c.table, heading)
				if err != nil {
					t.Fatal(err)
				}
				var errs []error
				if heading == "## Env" {
					errs = checkEnvTable(header, rows, env)
				} else {
					errs = checkGrantsTable(rows, iam)
				}
				if c.want == "" {
					reportAll(t, errs)
					return
				}
				if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), c.want) }) {
					t.Errorf("want an error containing %q, got %v", c.want, errs)
				}
			})
		}
		iam["issue"]["ssm:GetParameter"] = append(iam["issue"]["ssm:GetParameter"], "aws_ssm_parameter.other.arn")
		_, rows, _ := markdownTable(iamTable, "## IAM")
		if errs := checkGrantsTable(rows, iam); !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), "resourcePhrases does not name") }) {
			t.Errorf("a grant without a phrase: want an error naming resourcePhrases, got %v", errs)
		}
	})

	t.Run("routes differ from openapi", func(t *testing.T) {
		m, err := parseModule("snippet", map[string]string{"main.tf": `
module "resolver_api" {
  routes = {
    "GET /{token}" = {
      function_name      = module.resolve.function_name
      invoke_arn         = module.resolve.invoke_arn
      authorization_type = "AWS_IAM"
    }
    "GET /extra" = {
      function_name      = module.issue.function_name
      invoke_arn         = module.issue.invoke_arn
      authorization_type = "NONE"
    }
  }
}`})
		if err != nil {
			t.Fatal(err)
		}
		routes, err := routesOf(m, "resolver_api")
		if err != nil {
			t.Fatal(err)
		}
		errs := checkRoutes("resolver", routes, map[string]bool{"GET /{token}": true, "GET /healthz": true}, "resolve", func(string) bool { return false })
		for _, want := range []string{"differ from the openapi.yaml operations", `"GET /{token}": authorization_type "AWS_IAM"`, `targets module "issue"`} {
			if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), want) }) {
				t.Errorf("want an error containing %q, got %v", want, errs)
			}
		}
	})
}

// TestClickFactAlarms: every resolver EMF counter of a click fact that did not
// reach the bus alarms (issue 9: a full disk buffers facts, past the buffer they
// are logged, past a log limit dropped), on the configured namespace.
func TestClickFactAlarms(t *testing.T) {
	m := mustLoad(t, filepath.Join("modules", "alarms"))
	merged := false
	for _, tr := range traversals(exprOf(m.locals["alarms"])) {
		merged = merged || ref(tr) == "local.fact_alarms"
	}
	if !merged {
		t.Error("alarms: local.alarms does not merge local.fact_alarms")
	}
	// Evaluated, not read as literals: the EMF counters' alarms are one for over a
	// map; the inputs are sentinels, so the namespace shows where it came from.
	v, err := newEvaluator(m, dashboardInputs(m), nil).local("fact_alarms")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	var alarms map[string]struct {
		Namespace string   `json:"namespace"`
		Metric    string   `json:"metric_name"`
		Threshold *float64 `json:"threshold"`
	}
	if err := json.Unmarshal(raw, &alarms); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"facts-dead-lettered": "FactsDeadLettered",
		"facts-buffered":      "FactsBuffered",
		"facts-lost-to-log":   "FactsLostToLog",
		"facts-dropped":       "FactsDropped",
	}
	for label, metric := range want {
		a, ok := alarms[label]
		if !ok {
			t.Errorf("alarms: no %q alarm", label)
			continue
		}
		if a.Metric != metric {
			t.Errorf("alarm %q: metric_name %q, want %q", label, a.Metric, metric)
		}
		if a.Namespace != sentinel("metrics_namespace") {
			t.Errorf("alarm %q: namespace %q is not var.metrics_namespace", label, a.Namespace)
		}
		if a.Threshold == nil {
			t.Errorf("alarm %q: no threshold, want 0 (any such fact alarms)", label)
		} else if *a.Threshold != 0 {
			t.Errorf("alarm %q: threshold %v, want 0 (any such fact alarms)", label, *a.Threshold)
		}
	}
}
