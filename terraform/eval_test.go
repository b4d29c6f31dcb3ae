package terraform_test

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// evaluator computes a module's expressions the way Terraform would for the parts
// that need no provider: locals, derived numbers and strings, JSON bodies. Inputs
// are the variables (and module outputs) a test chooses, so the tests check what
// the configuration computes, not how it is spelled.
type evaluator struct {
	m       *tfModule
	vars    map[string]cty.Value
	modules map[string]cty.Value // module call → object of its outputs
	data    map[string]cty.Value // data source type → object of name → attributes
	locals  map[string]cty.Value
	busy    map[string]bool
}

func newEvaluator(m *tfModule, vars map[string]cty.Value, modules map[string]cty.Value) *evaluator {
	return &evaluator{m: m, vars: vars, modules: modules, locals: map[string]cty.Value{}, busy: map[string]bool{}}
}

// local evaluates local.name, first evaluating the locals it refers to.
func (ev *evaluator) local(name string) (cty.Value, error) {
	if v, ok := ev.locals[name]; ok {
		return v, nil
	}
	a := ev.m.locals[name]
	if a == nil {
		return cty.NilVal, fmt.Errorf("local.%s is not declared", name)
	}
	if ev.busy[name] {
		return cty.NilVal, fmt.Errorf("local.%s refers to itself", name)
	}
	ev.busy[name] = true
	defer delete(ev.busy, name)
	v, err := ev.eval(a.Expr)
	if err != nil {
		return cty.NilVal, fmt.Errorf("local.%s: %w", name, err)
	}
	ev.locals[name] = v
	return v, nil
}

// eval evaluates e with the variables, module outputs and the locals it refers to.
func (ev *evaluator) eval(e hclsyntax.Expression) (cty.Value, error) {
	locals := map[string]cty.Value{}
	for _, t := range traversals(e) {
		if t.RootName() != "local" {
			continue
		}
		name, ok := attrName(t, 1)
		if !ok {
			continue
		}
		v, err := ev.local(name)
		if err != nil {
			return cty.NilVal, err
		}
		locals[name] = v
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":    cty.ObjectVal(ev.vars),
			"local":  cty.ObjectVal(locals),
			"module": cty.ObjectVal(ev.modules),
			"data":   cty.ObjectVal(ev.data),
		},
		Functions: tfFunctions,
	}
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	return v, nil
}

// tfFunctions are the Terraform functions the evaluated expressions use.
var tfFunctions = map[string]function.Function{
	"ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc,
	"merge": stdlib.MergeFunc, "concat": stdlib.ConcatFunc, "flatten": stdlib.FlattenFunc, "setproduct": stdlib.SetProductFunc,
	"keys": stdlib.KeysFunc, "values": stdlib.ValuesFunc, "length": stdlib.LengthFunc,
	"jsonencode": stdlib.JSONEncodeFunc, "format": stdlib.FormatFunc, "join": stdlib.JoinFunc,
	"trimsuffix": stdlib.TrimSuffixFunc, "trim": stdlib.TrimFunc, "substr": stdlib.SubstrFunc,
	"lower": stdlib.LowerFunc, "sort": stdlib.SortFunc, "tostring": stdlib.MakeToFunc(cty.String),
	"regex": stdlib.RegexFunc, "can": tryfunc.CanFunc, "try": tryfunc.TryFunc,
	"replace":    replaceFunc,
	"one":        oneFunc,
	"startswith": stringTest(strings.HasPrefix),
	"endswith":   stringTest(strings.HasSuffix),
}

// replaceFunc is Terraform's replace: a pattern written /like this/ is a regular
// expression.
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "substr", Type: cty.String}, {Name: "replace", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		str, pat, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
		if len(pat) > 1 && strings.HasPrefix(pat, "/") && strings.HasSuffix(pat, "/") {
			re, err := regexp.Compile(pat[1 : len(pat)-1])
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(re.ReplaceAllString(str, repl)), nil
		}
		return cty.StringVal(strings.ReplaceAll(str, pat, repl)), nil
	},
})

// oneFunc is Terraform's one: the only element of a collection, null when empty.
var oneFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type: func(args []cty.Value) (cty.Type, error) {
		return cty.DynamicPseudoType, nil
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		switch n := args[0].LengthInt(); n {
		case 0:
			return cty.NullVal(cty.DynamicPseudoType), nil
		case 1:
			it := args[0].ElementIterator()
			it.Next()
			_, v := it.Element()
			return v, nil
		default:
			return cty.NilVal, fmt.Errorf("one: %d elements", n)
		}
	},
})

func stringTest(f func(s, affix string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "affix", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

// validationHolds evaluates every validation condition of variable name of m with
// the variable set to v.
func validationHolds(m *tfModule, name string, v cty.Value) (bool, error) {
	b := m.variables[name]
	if b == nil {
		return false, fmt.Errorf("%s: no variable %q", m.dir, name)
	}
	ev := newEvaluator(m, map[string]cty.Value{name: v}, nil)
	for _, vb := range b.Body.Blocks {
		if vb.Type != "validation" {
			continue
		}
		got, err := ev.eval(exprOf(vb.Body.Attributes["condition"]))
		if err != nil {
			return false, err
		}
		if got.False() {
			return false, nil
		}
	}
	return true, nil
}

func num(f float64) cty.Value { return cty.NumberFloatVal(f) }

func asFloat(v cty.Value) float64 {
	f, _ := v.AsBigFloat().Float64()
	return f
}
