package serve

import (
	"bufio"
	"net/netip"
	"os"
	"strings"
)

// hostsFile lists the names this machine resolves itself (Unix; elsewhere it is
// absent and only the hostname counts).
const hostsFile = "/etc/hosts"

// machineNames are the names that reach this machine beyond localhost: its
// hostname and every name hostsFile maps to a loopback address. A short URL to one
// of them, issued by a serve on loopback, would redirect back into it
// (shorturl.IssuerConfig.MachineNames).
func machineNames(hostsFile string) []string {
	var names []string
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
	}
	f, err := os.Open(hostsFile)
	if err != nil {
		return names
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		if ip, err := netip.ParseAddr(fields[0]); err != nil || !ip.Unmap().IsLoopback() {
			continue
		}
		names = append(names, fields[1:]...)
	}
	return names
}
