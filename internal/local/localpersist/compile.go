package localpersist

import (
	"fmt"
)

type stepKind int

const (
	stepHasLabel stepKind = iota
	stepHas
	stepLimit
	stepCount
	stepValues
	stepOutE
	stepInE
	stepID
	stepLabel
	stepProject
	stepGroup
	stepGroupCount
	stepDedup
	stepOrder
	stepOr
)

// step is one checked, binding-resolved step of a traversal.
type step struct {
	kind   stepKind
	name   string
	pos    int
	labels []string     // hasLabel, outE, inE
	key    string       // has, values
	value  any          // has: string, int64 or bool
	pred   *predicate   // has(key, predicate): compare instead of equal
	within []any        // has(key, within(…)): the values any of which matches; non-nil for within
	n      int64        // limit
	proj   []projection // project
	group  [2]string    // group().by(key).by(value key); groupCount().by(key) in key
	order  []orderKey   // order().by(key[, desc])…
	or     [][]step     // or(traversal, …): filters
}

// matches is what an equality has() step compares with: within's values, or its
// one value.
func (st step) matches() []any {
	if st.within != nil {
		return st.within
	}
	return []any{st.value}
}

// projection is one key of a project() step and the by() modulator that fills it:
// a property key or an anonymous traversal whose first result is the value.
type projection struct {
	key    string
	byKey  string
	byTrav []step
	isTrav bool
}

// plan is a compiled root traversal g.V()…: the steps after V().
type plan struct {
	src   string
	steps []step
}

// maxPlanParameters bounds the values a plan binds as SQL parameters. SQLite
// refuses a statement with more than 32,766 (SQLITE_MAX_VARIABLE_NUMBER as
// modernc.org/sqlite builds it), and a list binding may hold maxBindingList values,
// one parameter each: used four times, within(t, t, t, t), it failed in SQLite as
// a storage failure. Every value any of the plan's statements may bind is counted,
// so the count bounds each statement's.
const maxPlanParameters = 32_000

// maxProjectKeys bounds the keys of a project(), each of which every traverser
// evaluates: 2,000 over 200 vertices built an 812 MB answer. The most Linoone
// asks for is 445: a link's stats in one request (the clicks of all time, and of
// each day by user agent and the distinct visitors of the window and of each day)
// over the longest window whose request fits in 64 KiB, 221 days; a longer window
// is asked for in two requests of at most 368 keys.
const maxProjectKeys = 512

// compile checks a parsed script against the supported subset and resolves its
// bindings. An error is a *scriptError, or a *limitError when the plan would bind
// more than maxPlanParameters values or a project() has over maxProjectKeys keys.
func compile(src string, root *traversal, bindings map[string]any) (*plan, error) {
	// The start query always binds its LIMIT.
	c := compiler{src: src, bindings: bindings, params: 1}
	source := root.calls[0]
	switch {
	case source.name != "V":
		return nil, c.errorf(source.pos, "g.%s() is not supported: the only traversal source step is g.V()", source.name)
	case len(source.args) > 0:
		return nil, c.errorf(source.pos, "g.V() with element ids is not supported: use g.V() followed by has()")
	}
	steps, err := c.steps(root.calls[1:])
	if err != nil {
		return nil, err
	}
	return &plan{src: src, steps: steps}, nil
}

type compiler struct {
	src      string
	bindings map[string]any
	params   int // the SQL parameters the steps compiled so far may bind
}

func (c *compiler) errorf(pos int, format string, args ...any) error {
	return errAt(c.src, pos, format, args...)
}

// bind counts n more values the plan may bind as SQL parameters and refuses the
// script once they pass maxPlanParameters. withinValues calls it before it copies
// a list into the plan, so a list used many times is refused before it costs.
func (c *compiler) bind(n int) error {
	c.params += n
	if c.params > maxPlanParameters {
		return &limitError{msg: fmt.Sprintf("the traversal binds %d values or more as SQL parameters, over the limit of %d", c.params, maxPlanParameters)}
	}
	return nil
}

const supportedSteps = "hasLabel, has, or, limit, count, dedup, values, outE, inE, id, label, order/by, project/by, group/by, groupCount/by"

func (c *compiler) steps(calls []*call) ([]step, error) {
	out := make([]step, 0, len(calls))
	for i := 0; i < len(calls); i++ {
		cl := calls[i]
		st := step{name: cl.name, pos: cl.pos}
		var err error
		switch cl.name {
		case "hasLabel":
			st.kind = stepHasLabel
			if len(cl.args) == 0 {
				return nil, c.errorf(cl.pos, "hasLabel() needs at least one label")
			}
			if st.labels, err = c.strings(cl); err == nil {
				err = c.bind(len(st.labels))
			}
		case "has":
			st.kind = stepHas
			if len(cl.args) != 2 {
				return nil, c.errorf(cl.pos, "has() takes 2 arguments (key, value), got %d", len(cl.args))
			}
			if st.key, err = c.stringArg(cl, cl.args[0]); err != nil {
				return nil, err
			}
			a := cl.args[1]
			switch {
			case isWithin(a):
				st.within, err = c.withinValues(a.trav.calls[0])
			case a.kind == argTraversal && a.trav.bare:
				st.pred, err = c.predicate(cl, a)
			default:
				st.value, err = c.value(cl, a)
				if _, isList := st.value.([]any); isList && err == nil {
					return nil, c.errorf(a.pos, "has() compares with one value: use within(%s) for a list", a.str)
				}
			}
			if err == nil && st.within == nil {
				err = c.bind(2) // one value, which an inE() binds in each half of its union
			}
		case "limit":
			st.kind = stepLimit
			if len(cl.args) != 1 {
				return nil, c.errorf(cl.pos, "limit() takes 1 argument, got %d", len(cl.args))
			}
			var v any
			if v, err = c.value(cl, cl.args[0]); err != nil {
				return nil, err
			}
			n, ok := v.(int64)
			if !ok || n < 0 {
				return nil, c.errorf(cl.args[0].pos, "limit() needs a non-negative integer, got %s", describeValue(v))
			}
			st.n = n
		case "count", "id", "label", "dedup":
			st.kind = stepCount
			switch cl.name {
			case "id":
				st.kind = stepID
			case "label":
				st.kind = stepLabel
			case "dedup":
				st.kind = stepDedup
			}
			if len(cl.args) != 0 {
				return nil, c.errorf(cl.pos, "%s() takes no arguments, got %d", cl.name, len(cl.args))
			}
		case "values":
			st.kind = stepValues
			if len(cl.args) != 1 {
				return nil, c.errorf(cl.pos, "values() takes exactly 1 property key, got %d", len(cl.args))
			}
			st.key, err = c.stringArg(cl, cl.args[0])
		case "outE", "inE":
			st.kind = stepOutE
			if cl.name == "inE" {
				st.kind = stepInE
			}
			if st.labels, err = c.strings(cl); err == nil {
				err = c.bind(2 * (1 + len(st.labels))) // the vertex id and the labels, twice for an inE()
			}
		case "project":
			st.kind = stepProject
			var n int
			st.proj, n, err = c.project(cl, calls[i+1:])
			i += n
		case "order":
			st.kind = stepOrder
			var n int
			st.order, n, err = c.orderBy(cl, calls[i+1:])
			i += n
		case "or":
			st.kind = stepOr
			st.or, err = c.orFilters(cl)
		case "group":
			st.kind = stepGroup
			var keys []string
			if keys, err = c.byKeys(cl, calls[i+1:], 2, "group().by(key).by(key)"); err == nil {
				st.group = [2]string(keys)
				i += 2
			}
		case "groupCount":
			st.kind = stepGroupCount
			var keys []string
			if keys, err = c.byKeys(cl, calls[i+1:], 1, "groupCount().by(key)"); err == nil {
				st.key = keys[0]
				i++
			}
		case "by":
			return nil, c.errorf(cl.pos, "by() must follow project() (one by() per key), order() (one or more), group() (two by()) or groupCount() (one by())")
		case "V":
			return nil, c.errorf(cl.pos, "V() is supported only as the start of a traversal, g.V()")
		default:
			return nil, c.errorf(cl.pos, "step %s() is not supported (supported steps: %s)", cl.name, supportedSteps)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// project compiles project(keys…) and the by() modulators that follow it in rest,
// exactly one per key. It reports how many calls of rest it consumed.
func (c *compiler) project(cl *call, rest []*call) ([]projection, int, error) {
	switch {
	case len(cl.args) == 0:
		return nil, 0, c.errorf(cl.pos, "project() needs at least one key")
	case len(cl.args) > maxProjectKeys:
		return nil, 0, &limitError{msg: fmt.Sprintf("project() has %d keys, over the limit of %d", len(cl.args), maxProjectKeys)}
	}
	keys, err := c.strings(cl)
	if err != nil {
		return nil, 0, err
	}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if seen[k] {
			return nil, 0, c.errorf(cl.args[i].pos, "project() key %q appears twice", k)
		}
		seen[k] = true
	}
	nby := 0
	for nby < len(rest) && rest[nby].name == "by" {
		nby++
	}
	switch {
	case nby < len(keys):
		return nil, 0, c.errorf(cl.pos, "project() has %d keys but %d by() modulators: give exactly one by() per key", len(keys), nby)
	case nby > len(keys):
		return nil, 0, c.errorf(rest[len(keys)].pos, "project() has %d keys but %d by() modulators: give exactly one by() per key", len(keys), nby)
	}
	proj := make([]projection, len(keys))
	for i, k := range keys {
		by := rest[i]
		proj[i].key = k
		if len(by.args) != 1 {
			return nil, 0, c.errorf(by.pos, "by() takes 1 argument (a property key or an anonymous traversal), got %d", len(by.args))
		}
		a := by.args[0]
		if a.kind == argTraversal {
			if proj[i].byTrav, err = c.anonymous(a.trav); err != nil {
				return nil, 0, err
			}
			proj[i].isTrav = true
			continue
		}
		if proj[i].byKey, err = c.stringArg(by, a); err != nil {
			return nil, 0, err
		}
	}
	return proj, nby, nil
}

// isWithin reports whether a is the P predicate within(…), written bare as Gremlin
// Server's static imports allow: the one predicate the subset knows.
func isWithin(a *arg) bool {
	return a.kind == argTraversal && a.trav.bare && len(a.trav.calls) == 1 && a.trav.calls[0].name == "within"
}

// withinValues compiles the arguments of has(key, within(v, …)): literals or bindings;
// a binding holding a list (a JSON array in the request's bindings) contributes each
// of its elements, as TinkerPop's P.within(Collection) does. It returns the values,
// never nil.
func (c *compiler) withinValues(cl *call) ([]any, error) {
	values := []any{}
	for _, x := range cl.args {
		v, err := c.value(cl, x)
		if err != nil {
			return nil, err
		}
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		if err := c.bind(len(list)); err != nil {
			return nil, err
		}
		values = append(values, list...)
	}
	return values, nil
}

func (c *compiler) anonymous(t *traversal) ([]step, error) {
	return c.steps(t.calls)
}

// value resolves a literal or a binding to a string, an int64 or a bool.
func (c *compiler) value(cl *call, a *arg) (any, error) {
	switch a.kind {
	case argString:
		return a.str, nil
	case argInt:
		return a.num, nil
	case argBool:
		return a.b, nil
	case argBinding:
		v, ok := c.bindings[a.str]
		if !ok {
			return nil, c.errorf(a.pos, "unbound variable %s: no binding named %s was supplied", a.str, a.str)
		}
		return v, nil
	}
	return nil, c.errorf(a.pos, "%s() expects a string, integer or boolean here, found an anonymous traversal", cl.name)
}

func (c *compiler) stringArg(cl *call, a *arg) (string, error) {
	v, err := c.value(cl, a)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", c.errorf(a.pos, "%s() expects a string here, got %s", cl.name, describeValue(v))
	}
	return s, nil
}

func (c *compiler) strings(cl *call) ([]string, error) {
	out := make([]string, len(cl.args))
	for i, a := range cl.args {
		s, err := c.stringArg(cl, a)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// describeValue names a value's type and shows it, for error messages.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case []any:
		return fmt.Sprintf("a list of %d values", len(v))
	}
	return typeName(v)
}
