package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDocsListEveryProblemCode: docs/api.md's table of problem types is what
// clients generate their error handling from; every code this package answers with
// (its Code constants) has a row there.
func TestDocsListEveryProblemCode(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for line := range strings.SplitSeq(string(readme), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "problem.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Code") {
					continue
				}
				code, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				codes++
				if !listed(rows, code) {
					t.Errorf("%s (%q) has no row in docs/api.md's table of problem types", name.Name, code)
				}
			}
		}
	}
	if codes < 10 {
		t.Fatalf("found %d Code constants in problem.go, want the whole table", codes)
	}
}

// listed says whether a table row starts with code among its `…` / `…` types.
func listed(rows []string, code string) bool {
	for _, r := range rows {
		first, _, _ := strings.Cut(strings.TrimPrefix(r, "| "), " |")
		for t := range strings.SplitSeq(first, " / ") {
			if t == "`"+code+"`" {
				return true
			}
		}
	}
	return false
}
