package localpersist

import (
	"regexp"
	"slices"
	"strings"
)

// predicate is a comparison of TinkerPop's P, as has(key, gte(x)) writes it (the
// Groovy script engine imports P's static methods, so gte(x) is P.gte(x)).
type predicate struct {
	op    string         // eq, neq, gt, gte, lt, lte, regex
	value any            // string, int64 or bool
	re    *regexp.Regexp // regex: TextP.regex(x), Go's syntax, a string property only
}

// compareOps are the predicates of P local Persist evaluates.
var compareOps = map[string]bool{"eq": true, "neq": true, "gt": true, "gte": true, "lt": true, "lte": true, "regex": true}

// predicate compiles the bare call gte(x) (or eq, neq, gt, lt, lte) given as a has()
// value.
func (c *compiler) predicate(cl *call, a *arg) (*predicate, error) {
	t := a.trav
	if len(t.calls) != 1 || !compareOps[t.calls[0].name] {
		return nil, c.errorf(a.pos, "%s() takes a value or one of the predicates eq, neq, gt, gte, lt, lte, regex, within here, found %s", cl.name, t.String())
	}
	p := t.calls[0]
	if len(p.args) != 1 {
		return nil, c.errorf(p.pos, "%s() takes 1 argument, got %d", p.name, len(p.args))
	}
	v, err := c.value(p, p.args[0])
	if err != nil {
		return nil, err
	}
	pr := &predicate{op: p.name, value: v}
	if p.name == "regex" {
		s, ok := v.(string)
		if !ok {
			return nil, c.errorf(p.args[0].pos, "regex() takes a string, got %s", describeValue(v))
		}
		if pr.re, err = regexp.Compile(s); err != nil {
			return nil, c.errorf(p.args[0].pos, "regex(): %v", err)
		}
	}
	return pr, nil
}

// test reports whether v satisfies the predicate. Values of different types never
// compare (TinkerPop 3.6+ comparability: such a comparison is false, and neq true);
// booleans order false before true, strings by their bytes (UTF-8 order).
func (p *predicate) test(v any) bool {
	if p.re != nil {
		s, ok := v.(string)
		return ok && p.re.MatchString(s)
	}
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

// byKeys compiles the forms of group() and groupCount() local Persist evaluates:
// the step cl followed by exactly n by(key) modulators (form, e.g.
// "group().by(key).by(key)"). group() maps each value of its first key to the list
// of its second key's values, groupCount() each value of its key to a count. It
// returns the keys; the caller steps over the n by() calls of rest.
func (c *compiler) byKeys(cl *call, rest []*call, n int, form string) ([]string, error) {
	if len(cl.args) != 0 {
		return nil, c.errorf(cl.pos, "%s() with a side-effect key is not supported: use %s", cl.name, form)
	}
	modulators := "one by() modulator"
	if n == 2 {
		modulators = "two by() modulators"
	}
	if len(rest) < n || (len(rest) > n && rest[n].name == "by") || slices.ContainsFunc(rest[:n], func(b *call) bool { return b.name != "by" }) {
		return nil, c.errorf(cl.pos, "%s() is supported as %s, with exactly %s", cl.name, form, modulators)
	}
	keys := make([]string, n)
	for i, by := range rest[:n] {
		if len(by.args) != 1 || by.args[0].kind == argTraversal {
			return nil, c.errorf(by.pos, "%s()'s by() takes 1 property key here", cl.name)
		}
		k, err := c.stringArg(by, by.args[0])
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}
