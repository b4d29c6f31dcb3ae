package discovery

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreDependsOnStandardLibraryOnly keeps the decision core free of the
// adapters: everything it depends on, directly or not, is the standard
// library, without net/http. awsfacts, dnscheck and discoverycli import this
// package, never the other way round.
func TestCoreDependsOnStandardLibraryOnly(t *testing.T) {
	const self = "github.com/linoone/linoone/internal/ops/discovery"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", self).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		t.Fatalf("go list -deps listed %q, want the package and its dependencies", out)
	}
	for _, line := range lines {
		path, standard, _ := strings.Cut(line, " ")
		switch {
		case path == self:
		case path == "net/http", strings.HasPrefix(path, "net/http/"),
			strings.HasPrefix(path, "github.com/aws/"),
			standard != "true":
			t.Errorf("the decision core depends on %s", path)
		}
	}
}
