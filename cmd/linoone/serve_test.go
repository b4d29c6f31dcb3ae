package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

// serveInProcess runs serve in this process with in's environment and extra, until
// it logs that it serves, clicks a new short URL, then stops it and returns its exit
// code and output.
func serveInProcess(t *testing.T, in *instance, extra ...string) (int, string) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range append(append([]string{}, in.env...), extra...) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncbuf.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, &out, &errOut) }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errOut.String(), "linoone serving: "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("serve did not start:\n%s", errOut.String())
		}
	}
	tok := in.shorten("https://example.com/emf")
	if res := in.resolve(tok); res.StatusCode != 302 {
		t.Errorf("resolve: %d", res.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		return code, errOut.String()
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not stop:\n%s", errOut.String())
		return 0, ""
	}
}

// TestServeSaysWhereAndWhenItStops: serve's log says in words where it listens,
// ends with a "stopped" line, is JSON off a terminal (and text when
// LINOONE_LOG_FORMAT asks), and holds no CloudWatch EMF line unless LINOONE_EMF
// asks for them.
func TestServeSaysWhereAndWhenItStops(t *testing.T) {
	in := newInstance(t)
	code, logs := serveInProcess(t, in)
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if code != 0 || !strings.HasPrefix(lines[len(lines)-1], "{") || !strings.Contains(lines[len(lines)-1], `"msg":"linoone serve stopped"`) {
		t.Errorf("exit %d; want 0 and a last JSON line saying serve stopped:\n%s", code, logs)
	}
	want := `"msg":"linoone serving: resolver on http://` + in.resolver + `, management API on http://` + in.management + `"`
	if !strings.Contains(logs, want) {
		t.Errorf("the log does not say %s:\n%s", want, logs)
	}
	if strings.Contains(logs, `"_aws"`) {
		t.Errorf("serve wrote EMF lines off Lambda, unasked:\n%s", logs)
	}

	in = newInstance(t)
	code, logs = serveInProcess(t, in, "LINOONE_LOG_FORMAT=text", "LINOONE_EMF=on")
	lines = strings.Split(strings.TrimSpace(logs), "\n")
	if code != 0 || !strings.Contains(logs, `level=INFO msg="linoone serving: resolver on http://`+in.resolver) ||
		!strings.Contains(lines[len(lines)-1], `msg="linoone serve stopped"`) {
		t.Errorf("LINOONE_LOG_FORMAT=text: exit %d; want text lines ending with the stop:\n%s", code, logs)
	}
	if !strings.Contains(logs, `"_aws"`) {
		t.Errorf("LINOONE_EMF=on: no EMF line in the log:\n%s", logs)
	}
}
