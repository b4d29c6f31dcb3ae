//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestRunPrintsThreePositiveFigures(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-batch", "8192", "-syncs", "5", "-switches", "200", dir}, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	var syncMS, syncCPU, switchCPU float64
	if _, err := fmt.Sscanf(out.String(), "sync_ms=%f sync_cpu_us=%f switch_cpu_us=%f\n", &syncMS, &syncCPU, &switchCPU); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	for name, v := range map[string]float64{"sync_ms": syncMS, "sync_cpu_us": syncCPU, "switch_cpu_us": switchCPU} {
		if v <= 0 {
			t.Errorf("%s = %v, want > 0 (output %q)", name, v, out.String())
		}
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the probe left %d files in its directory, want none", len(left))
	}
}

func TestRunRefusesBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{dir, dir},
		{"-batch", "0", dir},
		{"-syncs", "-1", dir},
		{"-switches", "0", dir},
		{"-batch", "9000000", dir}, // more than the file the batches cycle through
		{dir + "/missing"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out bytes.Buffer
			if err := run(args, &out); err == nil {
				t.Errorf("run(%q) = nil, printed %q; want an error", args, out.String())
			}
			if out.Len() != 0 {
				t.Errorf("run(%q) printed %q, want nothing", args, out.String())
			}
		})
	}
}
