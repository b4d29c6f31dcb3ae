package client_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// producerMain is the external module's program: through the public package
// alone, it shortens its first argument, inspects the short URL and reads its
// stats, signing with the AWS default credential chain, then runs the Go blocks
// of docs/clients.md and the README (readme.go, docs.go).
const producerMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/linoone/linoone/client"
)

func main() {
	if err := run(context.Background(), os.Getenv("LINOONE_ENDPOINT"), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, endpoint, target string) error {
	c, err := client.New(endpoint) // the AWS default credential chain
	if err != nil {
		return err
	}
	u, err := c.Shorten(ctx, target)
	if err != nil {
		return err
	}
	link, err := c.Inspect(ctx, u.Token)
	if err != nil {
		return err
	}
	stats, err := c.Stats(ctx, u.Token)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string]any{
		"token": u.Token, "short_url": u.ShortURL, "target_url": link.TargetURL,
		"clicks": stats.Clicks, "days": len(stats.ByDay),
	}); err != nil {
		return err
	}
	if err := readme(ctx, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")); err != nil {
		return fmt.Errorf("README's block: %w", err)
	}
	if err := docs(ctx); err != nil {
		return fmt.Errorf("docs/clients.md's block: %w", err)
	}
	return nil
}
`

// snippetFile wraps a documented Go block into a function of the program. The
// imports a block may use are all there, each kept used.
const snippetFile = `package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/linoone/linoone/client"
)

var _, _, _ = errors.Is, fmt.Println, client.New

func %s {
%s
	return nil
}
`

// TestExternalModule is issue 46's "done when": a module outside this repository
// that requires github.com/linoone/linoone through a replace to this checkout
// shortens, inspects and reads stats from serve through the public client
// package, and the Go blocks that docs/clients.md and the README show compile
// and run in it. `go mod tidy` resolves the module from the module cache (this
// checkout's go.sum holds every checksum it needs), so it works offline once
// `go mod download` has run.
func TestExternalModule(t *testing.T) {
	needServe(t)
	t.Parallel() // its time is go mod tidy and go build: let it overlap the other tests
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	replace := strings.NewReplacer("http://127.0.0.1:8081", endpoint, "https://abcdef1234.execute-api.us-east-1.amazonaws.com", endpoint)
	files := map[string]string{
		"go.mod": "module example.com/producer\n\n" + string(goLine) + "\n\nrequire github.com/linoone/linoone v0.0.0-00010101000000-000000000000\n\n" +
			"replace github.com/linoone/linoone => " + root + "\n",
		"go.sum":    string(sum),
		"main.go":   producerMain,
		"readme.go": fmt.Sprintf(snippetFile, "readme(ctx context.Context, ak, sk string) error", replace.Replace(goBlock(t, "README.md", "In Go, "))),
		"docs.go":   fmt.Sprintf(snippetFile, "docs(ctx context.Context) error", replace.Replace(goBlock(t, "docs/clients.md", "## Go"))),
	}
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	env := append(os.Environ(),
		"GOFLAGS=-mod=mod", "GOWORK=off",
		// The default credential chain finds serve's pair in the environment, and
		// nothing else: no shared files, no instance metadata.
		"AWS_ACCESS_KEY_ID="+accessKeyID, "AWS_SECRET_ACCESS_KEY="+secretAccessKey, "AWS_SESSION_TOKEN=",
		"AWS_REGION=us-east-1", "AWS_PROFILE=", "AWS_CONFIG_FILE="+filepath.Join(home, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "no-credentials"), "AWS_EC2_METADATA_DISABLED=true",
		"LINOONE_ENDPOINT="+endpoint,
	)
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("go", "mod", "tidy")
	run("go", "build", "-o", "producer", ".")
	target := "https://example.com/external?module=producer"
	out := run(filepath.Join(dir, "producer"), target)

	lines := bufio.NewScanner(strings.NewReader(out))
	lines.Scan()
	var got struct {
		Token     string `json:"token"`
		ShortURL  string `json:"short_url"`
		TargetURL string `json:"target_url"`
		Clicks    int    `json:"clicks"`
		Days      int    `json:"days"`
	}
	if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
		t.Fatalf("the producer printed %q: %v", out, err)
	}
	if got.ShortURL != "http://"+resolverAddr+"/"+got.Token || got.TargetURL != target || got.Clicks != 0 || got.Days != 30 {
		t.Errorf("the producer read %+v; want a short URL of the resolver going to %s, no clicks in 30 days", got, target)
	}
	// The README's block prints a short URL and its token; docs/clients.md's a
	// short URL.
	for _, want := range []string{"http://" + resolverAddr + "/", "http://" + resolverAddr + "/"} {
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), want) {
			t.Errorf("the documented blocks printed %q; want a short URL of %s on each line after the first", out, resolverAddr)
			break
		}
	}
}

// goBlock is the first ```go block after heading in the file at path (from the
// repository's root).
func goBlock(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("%s has no %q", path, heading)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatalf("%s has no go block after %q", path, heading)
	}
	return m[1]
}
