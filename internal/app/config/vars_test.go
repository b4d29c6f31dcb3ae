package config

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// functionEnv is what every function requires, so that its configuration loads.
var functionEnv = map[string]string{
	"LINOONE_PERSIST_URL":       "https://persist.example",
	"LINOONE_RESOLVER_BASE_URL": "https://s.example",
	"LINOONE_EVENT_BUS":         "linoone-bus",
	"LINOONE_CLICK_DLQ_URL":     "https://sqs.us-east-1.amazonaws.com/123456789012/clicks",
}

// TestDocumentedDefaults: for every binary and every variable it reads whose
// default docs/configuration.md states as a value, setting the variable to that value
// changes nothing the binary loads.
func TestDocumentedDefaults(t *testing.T) {
	vars := map[string]Var{}
	for _, v := range Vars() {
		vars[v.Name] = v
	}
	checked := 0
	for _, b := range Binaries() {
		base := map[string]string{}
		if _, err := b.Load(env(base)); err != nil {
			base = functionEnv
		}
		want, err := b.Load(env(base))
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		for _, name := range b.Reads() {
			v := vars[name]
			def, ok := v.DefaultFor[b.Name]
			if !ok {
				def = v.Default
			}
			if def == "" || base[name] != "" {
				continue
			}
			set := map[string]string{name: def}
			for k, val := range base {
				set[k] = val
			}
			got, err := b.Load(env(set))
			if err != nil {
				t.Errorf("%s with %s=%s (its documented default): %v", b.Name, name, def, err)
			} else if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s with %s=%s, its documented default, loads differently (-unset +set):\n%s", b.Name, name, def, diff)
			}
			checked++
		}
	}
	if checked < 30 {
		t.Errorf("checked %d documented defaults, want at least 30", checked)
	}
}

// TestReads: Reads sees the variables a Load function reads, and only those.
func TestReads(t *testing.T) {
	reads := map[string][]string{}
	for _, b := range Binaries() {
		reads[b.Name] = b.Reads()
	}
	for _, c := range []struct {
		binary, name string
		want         bool
	}{
		{"serve", "LINOONE_BUS_SYNC", true},
		{"serve", "LINOONE_EVENT_BUS", false},
		{"resolve λ", "LINOONE_EVENT_BUS", true},
		{"resolve λ", "LINOONE_DATA_DIR", false},
		{"dlq", "LINOONE_DATA_DIR", true},
		{"issue λ", "LINOONE_IDEMPOTENCY_SECRET_PARAM", true},
		{"replay λ", "LINOONE_PERSIST_URL", false},
	} {
		if got := slices.Contains(reads[c.binary], c.name); got != c.want {
			t.Errorf("%s reads %s: %v, want %v (%v)", c.binary, c.name, got, c.want, reads[c.binary])
		}
	}
}

// TestVarDocsShort: a cell of the generated page stays readable.
func TestVarDocsShort(t *testing.T) {
	for _, v := range Vars() {
		if len(v.Doc) > 320 {
			t.Errorf("%s: its Doc is %d bytes; say it in 320 or link to the page that explains it", v.Name, len(v.Doc))
		}
	}
}
