package serve

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestWarnIfExposed: local Persist beyond loopback is warned of, naming the risk
// and the address.
func TestWarnIfExposed(t *testing.T) {
	tests := []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:8082", false},
		{"127.0.0.2:8082", false},
		{"localhost:8082", false},
		{"[::1]:8082", false},
		{"[::ffff:127.0.0.1]:8082", false},
		{":8082", true},
		{"0.0.0.0:8082", true},
		{"[::]:8082", true},
		{"192.0.2.10:8082", true},
		{"persist.example:8082", true},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			var logs bytes.Buffer
			warnIfExposed(slog.New(slog.NewJSONHandler(&logs, nil)), tc.addr)
			got := logs.String()
			if tc.warn != (got != "") {
				t.Fatalf("logged %q; want a warning: %v", got, tc.warn)
			}
			if tc.warn && (!strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, "IP address") || !strings.Contains(got, tc.addr)) {
				t.Errorf("warning %q does not name the risk and the address", got)
			}
		})
	}
}
