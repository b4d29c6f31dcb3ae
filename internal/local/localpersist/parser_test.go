package localpersist

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLexStrings(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`'plain'`, "plain"},
		{`''`, ""},
		{`""`, ""},
		{`'it\'s'`, "it's"},
		{`"say \"hi\""`, `say "hi"`},
		{`'"'`, `"`},
		{`"'"`, `'`},
		{`'back\\slash'`, `back\slash`},
		{`'\b\t\n\f\r'`, "\b\t\n\f\r"},
		{`'\u00e9\u00C9'`, "éÉ"},
		{`'\uD83D\uDE00'`, "😀"},
		{`'😀 é'`, "😀 é"},
		{`'$x'`, "$x"},
		{`"\$x"`, "$x"},
		{`'\$'`, "$"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			toks, err := lex(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(toks) != 2 || toks[0].kind != tokString || toks[0].text != tt.want {
				t.Fatalf("got %+v, want one string %q", toks, tt.want)
			}
		})
	}
}

func TestLexIntegers(t *testing.T) {
	tests := []struct {
		src  string
		want int64
	}{
		{"0", 0}, {"42", 42}, {"-42", -42}, {"7L", 7}, {"7l", 7},
		{"9223372036854775807", 9223372036854775807}, {"-9223372036854775808", -9223372036854775808},
	}
	for _, tt := range tests {
		toks, err := lex(tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if toks[0].kind != tokInt || toks[0].num != tt.want {
			t.Errorf("%s: got %+v, want %d", tt.src, toks[0], tt.want)
		}
	}
}

// acceptedScripts parse and compile (with a binding named token).
var acceptedScripts = []string{
	lookupQuery,
	clicksQuery,
	countQuery,
	inline(lookupQuery, "'", "7BTadEDkJ8"),
	inline(clicksQuery, `"`, "7BTadEDkJ8"),
	"g.V()",
	"g.V();",
	"g.V().hasLabel('a', 'b').hasLabel(token).count()",
	"g.V().has('k', 1).has('k', -1L).has('k', true).has('k', false).has('k', token)",
	"g.V().limit(0).limit(10)",
	"g.V().values('k')",
	"g.V().outE().inE('a', 'b').id()",
	"g.V().label()",
	"g.V().project('a').by(outE('x').count())",
	"g.V().project('a', 'b').by(__.values('k')).by(__.project('c').by('d'))",
	"g.V().project('a').by(token)",
	"  g  .  V ( ) \n . count ( ) ",
}

func TestParseAccepts(t *testing.T) {
	for _, src := range acceptedScripts {
		t.Run(src, func(t *testing.T) {
			root, err := parse(src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := compile(src, root, map[string]any{"token": "x"}); err != nil {
				t.Fatal(err)
			}
			// The printed tree parses back to itself.
			printed := root.String()
			again, err := parse(printed)
			if err != nil {
				t.Fatalf("reparse %s: %v", printed, err)
			}
			if again.String() != printed {
				t.Errorf("round trip:\n%s\n%s", printed, again.String())
			}
		})
	}
	root, err := parse(lookupQuery)
	if err != nil {
		t.Fatal(err)
	}
	want := `g.V().hasLabel('short_url').has('short_url_token',token).limit(1).project('short_url_token','short_url_path','target_url').by('short_url_token').by('short_url_path').by('target_url')`
	if diff := cmp.Diff(want, root.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// rejectedScripts are answered with 597 and a message naming the problem.
var rejectedScripts = []struct {
	name, src, want string
}{
	{"drop", "g.V().drop()", "step drop() is not supported"},
	{"drop after has", "g.V().has('short_url_token', token).drop()", "step drop() is not supported"},
	{"addV", "g.addV('short_url')", "g.addV() is not supported"},
	{"E", "g.E()", "g.E() is not supported"},
	{"V with ids", "g.V('x')", "g.V() with element ids is not supported"},
	{"V mid-traversal", "g.V().V()", "V() is supported only as the start"},
	{"property", "g.V().property('k', 'v')", "step property() is not supported"},
	{"not g", "x.V()", "must start with the traversal source g"},
	{"empty after g", "g.", "expected identifier (a step name), found end of script"},
	{"only g", "g", "expected '.' after g, found end of script"},
	{"unclosed paren", "g.V().hasLabel('a'", "expected ',' or ')' in the arguments of hasLabel(), found end of script at line 1, column 19"},
	{"missing paren", "g.V().count", "expected '(' after count, found end of script"},
	{"extra paren", "g.V().count())", "unexpected ')' after the end of the traversal at line 1, column 14"},
	{"trailing garbage", "g.V().count() x", "unexpected identifier x after the end of the traversal"},
	{"two statements", "g.V().count(); g.V()", "unexpected identifier g after the end of the traversal"},
	{"trailing dot", "g.V().", "expected identifier (a step name), found end of script"},
	{"empty argument", "g.V().has('a',)", "expected an argument, found ')'"},
	{"unbound", "g.V().has('short_url_token', tok)", "unbound variable tok: no binding named tok was supplied"},
	{"unbound in project", "g.V().project(k).by('x')", "unbound variable k"},
	{"has one argument", "g.V().has('k')", "has() takes 2 arguments (key, value), got 1"},
	{"has three arguments", "g.V().has('short_url', 'k', 'v')", "has() takes 2 arguments (key, value), got 3"},
	{"has integer key", "g.V().has(1, 'v')", "has() expects a string here, got integer 1"},
	{"has predicate", "g.V().has('k', P.eq('x'))", "P.… is not supported"},
	{"has unsupported predicate", "g.V().has('k', between('a', 'b'))", "has() takes a value or one of the predicates eq, neq, gt, gte, lt, lte, regex, within here, found between('a','b')"},
	{"has predicate of a traversal", "g.V().has('k', __.gte('x'))", "has() expects a string, integer or boolean here, found an anonymous traversal"},
	{"has predicate, two arguments", "g.V().has('k', gte('x', 'y'))", "gte() takes 1 argument, got 2"},
	{"has predicate, unbound", "g.V().has('k', lt(until))", "unbound variable until"},
	{"group with a side-effect key", "g.V().group('m').by('a').by('b')", "group() with a side-effect key is not supported"},
	{"group with one by", "g.V().group().by('a')", "exactly two by() modulators"},
	{"group with three by", "g.V().group().by('a').by('b').by('c')", "exactly two by() modulators"},
	{"group by a traversal", "g.V().group().by('a').by(__.count())", "group()'s by() takes 1 property key here"},
	{"group by an integer key", "g.V().hasLabel('sample').group().by('count').by('name')", "only string keys are supported, found an integer"},
	{"hasLabel none", "g.V().hasLabel()", "hasLabel() needs at least one label"},
	{"hasLabel integer", "g.V().hasLabel(1)", "hasLabel() expects a string here, got integer 1"},
	{"limit negative", "g.V().limit(-1)", "limit() needs a non-negative integer, got integer -1"},
	{"limit string", "g.V().limit('1')", `limit() needs a non-negative integer, got string "1"`},
	{"limit two args", "g.V().limit(1, 2)", "limit() takes 1 argument, got 2"},
	{"count argument", "g.V().count(local)", "count() takes no arguments, got 1"},
	{"values none", "g.V().values()", "values() takes exactly 1 property key, got 0"},
	{"values two", "g.V().values('a', 'b')", "values() takes exactly 1 property key, got 2"},
	{"project too few by", "g.V().project('a', 'b').by('a')", "project() has 2 keys but 1 by() modulators"},
	{"project no by", "g.V().project('a').count()", "project() has 1 keys but 0 by() modulators"},
	{"project too many by", "g.V().project('a').by('a').by('b')", "project() has 1 keys but 2 by() modulators"},
	{"project no keys", "g.V().project()", "project() needs at least one key"},
	{"project duplicate key", "g.V().project('a', 'a').by('x').by('y')", `project() key "a" appears twice`},
	{"by alone", "g.V().by('a')", "by() must follow project()"},
	{"by empty", "g.V().project('a').by()", "by() takes 1 argument"},
	{"by integer", "g.V().project('a').by(1)", "by() expects a string here, got integer 1"},
	{"anonymous drop", "g.V().project('a').by(__.drop())", "step drop() is not supported"},
	{"anonymous without step", "g.V().project('a').by(__)", "expected '.' after __"},
	{"float", "g.V().has('k', 1.5)", "floating-point literals are not supported"},
	{"octal", "g.V().has('k', 010)", "octal integer literal 010 is not supported"},
	{"hex", "g.V().has('k', 0x10)", "malformed number literal 0x"},
	{"out of range", "g.V().has('k', 9223372036854775808)", "integer literal 9223372036854775808 is out of range"},
	{"null", "g.V().has('k', null)", "null is not supported"},
	{"gstring", `g.V().has('k', "a$b")`, "GString interpolation is not supported"},
	{"bad escape", `g.V().has('k', 'a\qb')`, `invalid escape sequence \q`},
	{"short unicode escape", `g.V().has('k', '\u12')`, "\\u needs four hexadecimal digits"},
	{"lone surrogate", `g.V().has('k', '\uD83D')`, "unpaired surrogate"},
	{"unterminated", "g.V().has('k', 'abc", "unterminated string literal at line 1, column 16"},
	{"newline in string", "g.V().has('k', 'a\nb')", "unterminated string literal"},
	{"triple quotes", "g.V().has('k', '''x''')", "triple-quoted strings are not supported"},
	{"comment", "g.V() // all", "comments are not supported"},
	{"unexpected character", "g.V().has('k', @x)", "unexpected character '@'"},
	{"position on a later line", "g.V()\n  .hasLabel('a')\n  .drop()", "step drop() is not supported (supported steps: hasLabel, has, or, limit, count, dedup, values, outE, inE, id, label, order/by, project/by, group/by, groupCount/by) at line 3, column 4"},
	{"outE on an integer", "g.V().count().outE('x')", "outE() applies to vertices, found an integer"},
	{"values on an integer", "g.V().count().values('k')", "values() applies to vertices and edges, found an integer"},
	{"project on an integer", "g.V().count().project('a').by('k')", "project() applies to vertices and edges, found an integer"},
	{"has on a string", "g.V().hasLabel('short_url').values('short_url_token').has('k', 'v')", "has() applies to vertices and edges, found a string"},
	{"too deep", "g.V().project('a').by(" + strings.Repeat("__.project('a').by(", 40) + "'x'" + strings.Repeat(")", 41), "anonymous traversals nested more than 32 deep"},
}

func TestScriptErrors(t *testing.T) {
	e := newEnv(t, Options{})
	seedGraph(t, e)
	for _, tt := range rejectedScripts {
		t.Run(tt.name, func(t *testing.T) {
			status, r := e.gremlin(t, tt.src, map[string]any{"token": "7BTadEDkJ8"})
			if status != http.StatusInternalServerError || r.Status.Code != codeScriptEvaluationError {
				t.Fatalf("HTTP %d, code %d (%s); want 500 and 597", status, r.Status.Code, r.Status.Message)
			}
			if !strings.Contains(r.Status.Message, tt.want) {
				t.Errorf("message %q does not contain %q", r.Status.Message, tt.want)
			}
			if string(r.Result.Data) != "null" {
				t.Errorf("error result data %s, want null", r.Result.Data)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range acceptedScripts {
		f.Add(s)
	}
	for _, s := range rejectedScripts {
		f.Add(s.src)
	}
	f.Add(`g.V().has('k', "\u0041\$")`)
	f.Add("g.V().has('k', '\\uD83D\\uDE00')")
	f.Fuzz(func(t *testing.T, src string) {
		root, err := parse(src)
		if err != nil {
			var serr *scriptError
			if !errors.As(err, &serr) {
				t.Fatalf("parse error %v is not a script error", err)
			}
			return
		}
		printed := root.String()
		again, err := parse(printed)
		if err != nil {
			t.Fatalf("printed form %q of %q does not parse: %v", printed, src, err)
		}
		if again.String() != printed {
			t.Fatalf("round trip changed the tree:\n%s\n%s", printed, again.String())
		}
		if _, err := compile(src, root, map[string]any{"token": "x", "n": int64(1)}); err != nil {
			var serr *scriptError
			if !errors.As(err, &serr) {
				t.Fatalf("compile error %v is not a script error", err)
			}
		}
	})
}
