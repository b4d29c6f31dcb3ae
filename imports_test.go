package linoone_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/linoone/linoone"

// groups are the role folders of internal/: `ls internal` shows these and nothing
// else, and each has a doc.go saying what lives there and what it may import.
var groups = []string{"app", "aws", "core", "foundation", "http", "local", "ops", "persist", "testutil"}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath   string
	Name         string
	Imports      []string // of the package's own files, tests left out
	Deps         []string // everything it depends on, transitively, tests left out
	TestImports  []string
	XTestImports []string
}

// group is the role folder of an internal package ("core" for
// internal/core/shorturl), "" outside internal/.
func (p pkg) group() string { return groupOf(p.ImportPath) }

func groupOf(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, module+"/internal/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
}

// importRules are the rules the tree promises. Each says, of a package and one
// package it imports (directly, tests left out), whether that import breaks it.
var importRules = []struct {
	name   string
	breaks func(p pkg, imp string) bool
}{
	{"core/ imports only core/, the standard library and the pure libraries it names", func(p pkg, imp string) bool {
		if p.group() != "core" {
			return false
		}
		pure := []string{"github.com/oklog/ulid/v2", "golang.org/x/net/idna", "golang.org/x/sys/unix", "github.com/yeqown/go-qrcode/v2"}
		return strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && groupOf(imp) != "core" && !slices.Contains(pure, imp)
	}},
	{"local/ never imports aws/", func(p pkg, imp string) bool { return p.group() == "local" && groupOf(imp) == "aws" }},
	{"aws/ never imports local/", func(p pkg, imp string) bool { return p.group() == "aws" && groupOf(imp) == "local" }},
	{"http/ never imports local/ or aws/", func(p pkg, imp string) bool {
		return p.group() == "http" && (groupOf(imp) == "local" || groupOf(imp) == "aws")
	}},
	{"persist/ imports only core/ and foundation/ of internal/", func(p pkg, imp string) bool {
		g := groupOf(imp)
		return p.group() == "persist" && g != "" && g != "persist" && g != "core" && g != "foundation"
	}},
	{"foundation/ imports no package of this module", func(p pkg, imp string) bool {
		return p.group() == "foundation" && strings.HasPrefix(imp, module+"/") && groupOf(imp) != "foundation"
	}},
	{"ops/ imports no other group of internal/ (its commands may read app/)", func(p pkg, imp string) bool {
		g := groupOf(imp)
		return p.group() == "ops" && p.Name != "main" && g != "" && g != "ops"
	}},
	{"only main packages and app/ import app/", func(p pkg, imp string) bool {
		return groupOf(imp) == "app" && p.Name != "main" && p.group() != "app"
	}},
	{"testutil/ is imported only by tests", func(p pkg, imp string) bool { return groupOf(imp) == "testutil" }},
	{"only http/, app/, client/ and main packages import the generated api/", func(p pkg, imp string) bool {
		return strings.HasPrefix(imp, module+"/api/") && p.group() != "http" && p.group() != "app" && !isClient(p) && p.Name != "main"
	}},
}

// depRules hold of everything a package depends on, not only what it imports.
var depRules = []struct {
	name   string
	breaks func(p pkg, dep string) bool
}{
	{"core/ never depends on net/http, the AWS SDK or the generated api", func(p pkg, dep string) bool {
		return p.group() == "core" && (dep == "net/http" || strings.HasPrefix(dep, "net/http/") ||
			strings.HasPrefix(dep, "github.com/aws/") || strings.HasPrefix(dep, module+"/api/"))
	}},
	{"client/ depends on no internal/ package: it is public, and other modules cannot import internal/", func(p pkg, dep string) bool {
		return isClient(p) && strings.HasPrefix(dep, module+"/internal/")
	}},
	{"lambdas/ never depends on the SDK's config module: its credential chain links sso, sts and more into every function (awswire.LambdaAWS)", func(p pkg, dep string) bool {
		return strings.HasPrefix(p.ImportPath, module+"/lambdas/") && dep == "github.com/aws/aws-sdk-go-v2/config"
	}},
}

// isClient reports whether p is the public client package (or one under it).
func isClient(p pkg) bool {
	return p.ImportPath == module+"/client" || strings.HasPrefix(p.ImportPath, module+"/client/")
}

// TestImportRules holds the folder tree to the plan it shows: the role groups of
// internal/ and the rules of their imports (each group's doc.go states its own).
// A violation names the rule it breaks.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t, "./...")
	if msgs := checkImportRules(pkgs); len(msgs) > 0 {
		t.Errorf("import rules broken:\n%s", strings.Join(msgs, "\n"))
	}
}

// checkImportRules returns one line for each import that breaks a rule.
func checkImportRules(pkgs []pkg) []string {
	var msgs []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			for _, r := range importRules {
				if r.breaks(p, imp) {
					msgs = append(msgs, fmt.Sprintf("%s imports %s: %s", p.ImportPath, imp, r.name))
				}
			}
		}
		for _, dep := range p.Deps {
			for _, r := range depRules {
				if r.breaks(p, dep) {
					msgs = append(msgs, fmt.Sprintf("%s depends on %s: %s", p.ImportPath, dep, r.name))
				}
			}
		}
	}
	return msgs
}

// TestImportRulesCatchViolations plants one violation of each rule and expects the
// check to name it: a rule that cannot fail protects nothing.
func TestImportRulesCatchViolations(t *testing.T) {
	in := func(group, name string) pkg {
		return pkg{ImportPath: module + "/internal/" + group + "/x", Name: name}
	}
	for _, tt := range []struct {
		p    pkg
		imp  string
		rule string
	}{
		{in("core", "x"), "net/http", "core/ never depends on net/http"},
		{in("core", "x"), module + "/internal/foundation/yield", "core/ imports only core/"},
		{in("core", "x"), "github.com/valyala/fasthttp", "core/ imports only core/"},
		{in("local", "x"), module + "/internal/aws/metrics", "local/ never imports aws/"},
		{in("aws", "x"), module + "/internal/local/localbus", "aws/ never imports local/"},
		{in("http", "x"), module + "/internal/local/localbus", "http/ never imports local/ or aws/"},
		{in("persist", "x"), module + "/internal/http/sigv4", "persist/ imports only core/"},
		{in("foundation", "x"), module + "/internal/core/shorturl", "foundation/ imports no package"},
		{in("ops", "x"), module + "/internal/core/shorturl", "ops/ imports no other group"},
		{in("http", "x"), module + "/internal/app/config", "only main packages and app/ import app/"},
		{in("http", "x"), module + "/internal/testutil/golden", "testutil/ is imported only by tests"},
		{in("aws", "x"), module + "/api/management", "the generated api/"},
		{pkg{ImportPath: module + "/client", Name: "client"}, module + "/internal/http/sigv4", "client/ depends on no internal/ package"},
		{pkg{ImportPath: module + "/lambdas/issue", Name: "main"}, "github.com/aws/aws-sdk-go-v2/config", "lambdas/ never depends on the SDK's config module"},
	} {
		p := tt.p
		p.Imports, p.Deps = []string{tt.imp}, []string{tt.imp}
		msgs := checkImportRules([]pkg{p})
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.rule) }) {
			t.Errorf("%s importing %s: got %q, want the rule %q", p.ImportPath, tt.imp, msgs, tt.rule)
		}
	}
	for _, ok := range []struct {
		p   pkg
		imp string
	}{
		{pkg{ImportPath: module + "/cmd/linoone", Name: "main"}, module + "/internal/app/config"},
		{in("ops", "main"), module + "/internal/app/config"},
		{in("app", "x"), module + "/internal/local/localbus"},
		{in("core", "x"), "golang.org/x/net/idna"},
		{in("http", "x"), module + "/api/resolver"},
		{pkg{ImportPath: module + "/client", Name: "client"}, module + "/api/management"},
		{pkg{ImportPath: module + "/cmd/linoone", Name: "main"}, "github.com/aws/aws-sdk-go-v2/config"},
	} {
		p := ok.p
		p.Imports, p.Deps = []string{ok.imp}, []string{ok.imp}
		if msgs := checkImportRules([]pkg{p}); len(msgs) > 0 {
			t.Errorf("%s importing %s is allowed, got %q", p.ImportPath, ok.imp, msgs)
		}
	}
}

// TestInternalShowsItsGroups: internal/ holds the role folders and nothing else,
// each with the doc.go that says what lives there.
func TestInternalShowsItsGroups(t *testing.T) {
	entries, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if !e.IsDir() {
			t.Errorf("internal/%s is a file: internal/ holds only the role folders", e.Name())
			continue
		}
		if _, err := os.Stat(path.Join("internal", e.Name(), "doc.go")); err != nil {
			t.Errorf("internal/%s has no doc.go saying what lives there and what it may import", e.Name())
		}
	}
	if !slices.Equal(got, groups) {
		t.Errorf("internal/ holds %q, want the groups %q (a new group is added here and in a doc.go)", got, groups)
	}
}

// listPackages is go list's view of the packages matching pattern.
func listPackages(t *testing.T, pattern string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Imports,Deps,TestImports,XTestImports", pattern)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: not the module", len(pkgs))
	}
	return pkgs
}
