package localpersist

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandsAlone keeps local Persist a separate service: besides the standard
// library it may import only internal/core/graphson, internal/foundation/yield (which lets its long
// work give redirects their turn inside `serve`), internal/foundation/logbudget (which bounds the
// refusals it logs) and the SQLite driver, and nothing it depends on may reach
// Linoone's domain.
func TestStandsAlone(t *testing.T) {
	const module = "github.com/linoone/linoone/"
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	std := map[string]bool{}
	stdOut, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(stdOut)) {
		std[p] = true
	}
	for _, imp := range strings.Fields(string(out)) {
		switch {
		case std[imp], imp == module+"internal/core/graphson", imp == module+"internal/foundation/yield", imp == module+"internal/foundation/logbudget", imp == "modernc.org/sqlite":
		default:
			t.Errorf("imports %s", imp)
		}
	}
	deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range strings.Fields(string(deps)) {
		if strings.HasPrefix(d, module) && d != module+"internal/core/graphson" && d != module+"internal/foundation/yield" && d != module+"internal/foundation/logbudget" && d != module+"internal/local/localpersist" {
			t.Errorf("depends on %s", d)
		}
	}
}
