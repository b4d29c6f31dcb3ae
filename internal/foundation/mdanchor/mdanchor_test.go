package mdanchor_test

import (
	"testing"

	"github.com/linoone/linoone/internal/foundation/mdanchor"
)

// The anchors GitHub gives these headings (as rendered on github.com).
func TestOf(t *testing.T) {
	for title, want := range map[string]string{
		"Quick start":                         "quick-start",
		"`LINOONE_BUS_SYNC`":                  "linoone_bus_sync",
		"Facts log: recovery (after kill -9)": "facts-log-recovery-after-kill--9",
		"What 1.2× means — B's CPU":           "what-12-means--bs-cpu",
		"Déjà vu":                             "déjà-vu",
	} {
		if got := mdanchor.Of(title); got != want {
			t.Errorf("Of(%q) = %q, want %q", title, got, want)
		}
	}
}
