package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// tryItBlock is the first sh block after "Try it" in the README.
func tryItBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "Try it")
	if i < 0 {
		t.Fatal(`README has no "Try it"`)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatal(`no sh block after "Try it"`)
	}
	return m[1]
}

// TestReadmeTryIt runs the README's "Try it" block as written against a running
// serve; only the addresses and the data directory are the test instance's, and
// `go run ./cmd/linoone` is the binary the tests built.
func TestReadmeTryIt(t *testing.T) {
	block := tryItBlock(t)
	in := newInstance(t)
	in.start()
	script := strings.NewReplacer(
		"go run ./cmd/linoone", binary,
		"127.0.0.1:8080", in.resolver,
		"127.0.0.1:8081", in.management,
		".linoone/", in.dataDir+"/",
	).Replace(block)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = "../.."
	cmd.Env = in.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Try it block failed: %v\n%s\nscript:\n%s", err, out, script)
	}
	for _, want := range []string{"http://" + in.resolver + "/", "302 Found", "Location: https://example.com/landing?message_id=msg_123", `"short_url":`, `"clicks":`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
