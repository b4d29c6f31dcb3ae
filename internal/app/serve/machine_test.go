package serve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMachineNames: the hostname and the names /etc/hosts maps to a loopback
// address, and no others.
func TestMachineNames(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte(`# comment
127.0.0.1	localhost
127.0.1.1	box.lan box   # Debian's own name
::1	ip6-localhost ip6-loopback
192.0.2.7	printer.lan
fe00::0	ip6-localnet
bogus line
`), 0o600); err != nil {
		t.Fatal(err)
	}
	got := machineNames(hosts)
	h, _ := os.Hostname()
	want := []string{h, "localhost", "box.lan", "box", "ip6-localhost", "ip6-loopback"}
	if !slices.Equal(got, want) {
		t.Errorf("machineNames = %q, want %q", got, want)
	}
	if got := machineNames(filepath.Join(t.TempDir(), "absent")); !slices.Equal(got, []string{h}) {
		t.Errorf("without a hosts file: %q, want the hostname alone", got)
	}
}
