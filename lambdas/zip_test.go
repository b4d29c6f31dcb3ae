package lambdas_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/testutil/testlayer"
)

// makeLambdaFlags is LAMBDA_FLAGS as the Makefile spells it; lambdaFlags are the same
// flags as go build arguments. The test fails when the Makefile changes without it.
const makeLambdaFlags = `-tags lambda.norpc -trimpath -buildvcs=false -ldflags='-s -w -buildid='`

var lambdaFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}

// TestReproducibleZips runs the Makefile's dist/%.zip recipe (arm64 build, then
// scripts/zip-bootstrap.sh) for every function into temporary directories, once more
// for one function, and requires identical zip bytes. The sizes are logged; the 5 MB
// target is judged by make bench (scripts/bench-lambda-init.sh), as every target is.
func TestReproducibleZips(t *testing.T) {
	testlayer.Skip(t, testlayer.Build)
	root := moduleRoot(t)
	checkMakefileFlags(t, root)
	first, second := t.TempDir(), t.TempDir()
	for _, fn := range []string{"issue", "resolve", "replay"} {
		zipped, bootstrap := distZip(t, root, first, fn)
		t.Logf("%s: bootstrap %d bytes (%.2f MB), zip %d bytes (%.2f MB)", fn,
			len(bootstrap), float64(len(bootstrap))/1e6, len(zipped), float64(len(zipped))/1e6)
	}
	again, _ := distZip(t, root, second, "resolve")
	before, err := os.ReadFile(filepath.Join(first, "resolve.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, again) {
		t.Errorf("two builds of resolve gave different zips (%d and %d bytes)", len(before), len(again))
	}
}

// checkMakefileFlags requires the Makefile's LAMBDA_FLAGS to be the ones this test
// builds with.
func checkMakefileFlags(t *testing.T, root string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":=")
		if ok && strings.TrimSpace(name) == "LAMBDA_FLAGS" {
			if got := strings.TrimSpace(value); got != makeLambdaFlags {
				t.Fatalf("Makefile LAMBDA_FLAGS is %q; this test builds with %q: update it", got, makeLambdaFlags)
			}
			return
		}
	}
	t.Fatal("no LAMBDA_FLAGS in the Makefile")
}

// distZip runs the dist/<fn>.zip recipe with dir in place of dist and returns the zip
// and the bootstrap. It checks that the bootstrap is a static linux/arm64 executable
// and that the zip holds exactly it.
func distZip(t *testing.T, root, dir, fn string) (zipped, bootstrap []byte) {
	t.Helper()
	bin := filepath.Join(dir, fn, "bootstrap")
	out := filepath.Join(dir, fn+".zip")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", append(append([]string{"build"}, lambdaFlags...), "-o", bin, "./lambdas/"+fn)...)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	run(t, root, build)
	run(t, root, exec.Command(filepath.Join(root, "scripts", "zip-bootstrap.sh"), bin, out))

	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if ef.Machine != elf.EM_AARCH64 || ef.Type != elf.ET_EXEC {
		t.Errorf("%s: bootstrap is %v %v, want an arm64 executable", fn, ef.Machine, ef.Type)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: bootstrap is dynamically linked", fn)
		}
	}

	if bootstrap, err = os.ReadFile(bin); err != nil {
		t.Fatal(err)
	}
	if zipped, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" || zr.File[0].Mode() != 0o755 {
		t.Fatalf("%s: zip entries %v, want one executable bootstrap", fn, zr.File)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	content, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(content, bootstrap) {
		t.Errorf("%s: the zipped bootstrap differs from the built one", fn)
	}
	return zipped, bootstrap
}

// moduleRoot is the repository root (this package is lambdas/).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return root
}

func run(t *testing.T, dir string, cmd *exec.Cmd) {
	t.Helper()
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}
