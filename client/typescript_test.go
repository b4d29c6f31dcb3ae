package client_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/http/sigv4"
)

// TestTypeScriptClient runs the node:test suite of clients/typescript (@linoone/client)
// against this package's serve, then packs the package as npm would publish it and
// installs the tarball into an empty project, which compiles docs/clients.md's
// TypeScript block with tsc (Node's own module resolution, so a missing exports
// field or a wrong types path fails) and runs it against serve. make tools
// installs the package's pinned dependencies.
func TestTypeScriptClient(t *testing.T) {
	needServe(t)
	t.Parallel() // its time is npm, tsc and node: let it overlap the other tests
	pkg, err := filepath.Abs(filepath.Join("..", "clients", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(pkg, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("clients/typescript has no dependencies installed: run make tools (%v)", err)
	}
	var persist struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, sigv4.PersistCredentialsFile))
	if err == nil {
		err = json.Unmarshal(b, &persist)
	}
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"LINOONE_TEST_ENDPOINT="+endpoint,
		"LINOONE_TEST_RESOLVER_URL=http://"+resolverAddr,
		"LINOONE_TEST_ACCESS_KEY_ID="+accessKeyID,
		"LINOONE_TEST_SECRET_ACCESS_KEY="+secretAccessKey,
		"LINOONE_TEST_BLOCKED_DOMAIN="+blockedDomain,
		"LINOONE_TEST_PERSIST_URL=http://"+persistAddr,
		"LINOONE_TEST_PERSIST_ACCESS_KEY_ID="+persist.AccessKeyID,
		"LINOONE_TEST_PERSIST_SECRET_ACCESS_KEY="+persist.SecretAccessKey,
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
	)
	run := func(t *testing.T, dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Run("npm test", func(t *testing.T) {
		run(t, pkg, "npm", "test")
	})
	t.Run("packed", func(t *testing.T) {
		packs := t.TempDir()
		var packed []struct {
			Filename string `json:"filename"`
			Files    []struct {
				Path string `json:"path"`
			} `json:"files"`
		}
		if err := json.Unmarshal([]byte(run(t, pkg, "npm", "pack", "--silent", "--json", "--pack-destination", packs)), &packed); err != nil || len(packed) != 1 {
			t.Fatalf("npm pack: %v %+v", err, packed)
		}
		checkEntryPoints(t, filepath.Join(pkg, "package.json"), packed[0].Files)
		project := t.TempDir()
		files := map[string]string{
			"package.json": `{"name": "linoone-pack-test", "private": true, "type": "module"}`,
			"tsconfig.json": `{"compilerOptions": {"strict": true, "module": "nodenext", "moduleResolution": "nodenext",
				"target": "es2022", "lib": ["es2022", "dom"], "types": [], "skipDefaultLibCheck": true, "outDir": "out"}, "files": ["example.ts"]}`,
			"example.ts": "const accessKeyId = " + quote(accessKeyID) + ", secretAccessKey = " + quote(secretAccessKey) + ";\n" +
				strings.ReplaceAll(tsBlock(t), "https://abcdef1234.execute-api.us-east-1.amazonaws.com", endpoint),
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(project, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		run(t, project, "npm", "install", "--prefer-offline", filepath.Join(packs, packed[0].Filename))
		run(t, project, tsc, "-p", ".")
		out := run(t, project, "node", "out/example.js")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "http://"+resolverAddr+"/") || !strings.HasPrefix(lines[1], "http://"+resolverAddr+"/") {
			t.Errorf("docs/clients.md's TypeScript printed %q; want two short URLs of %s", out, resolverAddr)
		}
	})
}

// checkEntryPoints fails unless every file package.json names for importers (its
// exports' types and import, and types) is in the tarball: TypeScript would find a
// declaration beside the JavaScript all the same, and say nothing of a wrong path.
func checkEntryPoints(t *testing.T, packageJSON string, files []struct {
	Path string `json:"path"`
}) {
	t.Helper()
	b, err := os.ReadFile(packageJSON)
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Types   string `json:"types"`
		Exports map[string]struct {
			Types  string `json:"types"`
			Import string `json:"import"`
		} `json:"exports"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		t.Fatal(err)
	}
	root, ok := pj.Exports["."]
	if !ok || root.Types == "" || root.Import == "" || pj.Types == "" {
		t.Fatalf("package.json: exports[\".\"] %+v and types %q; want types and import for \".\", and types", root, pj.Types)
	}
	packed := map[string]bool{}
	for _, f := range files {
		packed[f.Path] = true
	}
	for _, p := range []string{root.Types, root.Import, pj.Types} {
		if !packed[strings.TrimPrefix(p, "./")] {
			t.Errorf("package.json names %s, which the tarball lacks", p)
		}
	}
}

// tsBlock is the ```ts block of docs/clients.md.
func tsBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```ts\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/clients.md has no ts block")
	}
	return block
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
