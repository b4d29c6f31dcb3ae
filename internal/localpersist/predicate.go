package localpersist

import "strings"

// predicate is a comparison of TinkerPop's P, as has(key, gte(x)) writes it (the
// Groovy script engine imports P's static methods, so gte(x) is P.gte(x)).
type predicate struct {
	op    string // eq, neq, gt, gte, lt, lte
	value any    // string, int64 or bool
}

// compareOps are the predicates of P local Persist evaluates.
var compareOps = map[string]bool{"eq": true, "neq": true, "gt": true, "gte": true, "lt": true, "lte": true}

// predicate compiles the bare call gte(x) (or eq, neq, gt, lt, lte) given as a has()
// value.
func (c *compiler) predicate(cl *call, a *arg) (*predicate, error) {
	t := a.trav
	if len(t.calls) != 1 || !compareOps[t.calls[0].name] {
		return nil, c.errorf(a.pos, "%s() takes a value or one of the predicates eq, neq, gt, gte, lt, lte, within here, found %s", cl.name, t.String())
	}
	p := t.calls[0]
	if len(p.args) != 1 {
		return nil, c.errorf(p.pos, "%s() takes 1 argument, got %d", p.name, len(p.args))
	}
	v, err := c.value(p, p.args[0])
	if err != nil {
		return nil, err
	}
	return &predicate{op: p.name, value: v}, nil
}

// test reports whether v satisfies the predicate. Values of different types never
// compare (TinkerPop 3.6+ comparability: such a comparison is false, and neq true);
// booleans order false before true, strings by their bytes (UTF-8 order).
func (p *predicate) test(v any) bool {
	c, ok := compareValues(v, p.value)
	if !ok {
		return p.op == "neq"
	}
	switch p.op {
	case "eq":
		return c == 0
	case "neq":
		return c != 0
	case "gt":
		return c > 0
	case "gte":
		return c >= 0
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	}
	return false
}

func compareValues(a, b any) (int, bool) {
	switch a := a.(type) {
	case string:
		if b, ok := b.(string); ok {
			return strings.Compare(a, b), true
		}
	case int64:
		if b, ok := b.(int64); ok {
			switch {
			case a < b:
				return -1, true
			case a > b:
				return 1, true
			}
			return 0, true
		}
	case bool:
		if b, ok := b.(bool); ok {
			switch {
			case a == b:
				return 0, true
			case b:
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}

// groupBy compiles group().by(key).by(valueKey), the form local Persist evaluates:
// a map from each value of key to the list of valueKey's values of the traversers
// that have it. It reports how many calls of rest (the by() modulators) it consumed.
func (c *compiler) groupBy(cl *call, rest []*call) ([2]string, int, error) {
	var keys [2]string
	if len(cl.args) != 0 {
		return keys, 0, c.errorf(cl.pos, "group() with a side-effect key is not supported: use group().by(key).by(key)")
	}
	if len(rest) < 2 || rest[0].name != "by" || rest[1].name != "by" || (len(rest) > 2 && rest[2].name == "by") {
		return keys, 0, c.errorf(cl.pos, "group() is supported as group().by(key).by(key), with exactly two by() modulators")
	}
	for i := range keys {
		by := rest[i]
		if len(by.args) != 1 || by.args[0].kind == argTraversal {
			return keys, 0, c.errorf(by.pos, "group()'s by() takes 1 property key here")
		}
		k, err := c.stringArg(by, by.args[0])
		if err != nil {
			return keys, 0, err
		}
		keys[i] = k
	}
	return keys, 2, nil
}
