package client_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/testutil/syncbuf"
	"github.com/linoone/linoone/internal/testutil/testlayer"
	"github.com/linoone/linoone/internal/testutil/testport"
)

// The `linoone serve` every test and example of this package talks to, started
// once by TestMain: its management API's endpoint, the resolver's and local
// Persist's addresses, its data dir and the credential pair it wrote there.
var (
	endpoint        string
	resolverAddr    string
	persistAddr     string
	dataDir         string
	accessKeyID     string
	secretAccessKey string
)

// blockedDomain is on serve's deny list (a domain rule).
const blockedDomain = "blocked.example"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// Unit tests only: the examples and the tests against serve (needServe)
		// skip, as make test runs them.
		_ = flag.Set("test.skip", "^Example")
		os.Exit(m.Run())
	}
	code, err := runWithServe(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

// runWithServe builds cmd/linoone, starts `linoone serve` on free loopback ports
// with a fresh data dir, runs the tests and stops serve.
func runWithServe(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "linoone-client-test")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	// The examples sign as a producer would, for the region of the AWS default
	// configuration: make that serve's, whatever the environment's ~/.aws says.
	for _, v := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_DEFAULT_REGION"} {
		os.Unsetenv(v)
	}
	for k, v := range map[string]string{"AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": filepath.Join(dir, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-aws-credentials")} {
		if err := os.Setenv(k, v); err != nil {
			return 0, err
		}
	}
	bin := filepath.Join(dir, "linoone")
	if out, err := exec.Command("go", "build", "-race", "-o", bin, "../cmd/linoone").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build linoone: %v\n%s", err, out)
	}
	dataDir = filepath.Join(dir, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dataDir, "denylist.txt"), []byte("*."+blockedDomain+"\n"), 0o600); err != nil {
		return 0, err
	}
	s, err := startServe(bin)
	if err != nil {
		return 0, err
	}
	code := m.Run()
	if err := s.stop(); err != nil {
		return 0, err
	}
	return code, nil
}

// serve is the running `linoone serve`.
type serve struct {
	cmd    *exec.Cmd
	logs   *syncbuf.Buffer
	exited chan struct{}
}

func startServe(bin string) (*serve, error) {
	var addrs [3]string
	for i := range addrs {
		a, err := testport.Addr()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	resolverAddr, persistAddr = addrs[0], addrs[2]
	endpoint = "http://" + addrs[1]
	s := &serve{cmd: exec.Command(bin, "serve"), logs: &syncbuf.Buffer{}, exited: make(chan struct{})}
	s.cmd.Env = append(os.Environ(),
		"LINOONE_DATA_DIR="+dataDir,
		"LINOONE_RESOLVER_ADDR="+addrs[0],
		"LINOONE_MANAGEMENT_ADDR="+addrs[1],
		"LINOONE_PERSIST_ADDR="+addrs[2],
		"LINOONE_REGION=us-east-1", // what the client signs for by default
		"LINOONE_LOG_LEVEL=warn",
		"LINOONE_ACCESS_KEY_ID=", "LINOONE_SECRET_ACCESS_KEY=", "LINOONE_BUS_FAULT=", "LINOONE_DENYLIST_FILE=",
		"LINOONE_PERSIST_ACCESS_KEY_ID=", "LINOONE_PERSIST_SECRET_ACCESS_KEY=", "LINOONE_PERSIST_URL=",
	)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(addrs[:]); err != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		return nil, err
	}
	var creds struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "credentials.json"))
	if err == nil {
		err = json.Unmarshal(b, &creds)
	}
	if err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("serve's credentials: %w", err)
	}
	accessKeyID, secretAccessKey = creds.AccessKeyID, creds.SecretAccessKey
	return s, nil
}

// waitReady waits until every listener answers GET /healthz 200.
func (s *serve) waitReady(addrs []string) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		ready := true
		for _, a := range addrs {
			res, err := http.Get("http://" + a + "/healthz")
			if err != nil {
				ready = false
				break
			}
			res.Body.Close()
			ready = ready && res.StatusCode == http.StatusOK
		}
		if ready {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("linoone serve exited (%v) before it was ready:\n%s", s.cmd.ProcessState, s.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("linoone serve was not ready in 30 s:\n%s", s.logs)
}

// stop interrupts serve and waits for its clean exit.
func (s *serve) stop() error {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
		if !s.cmd.ProcessState.Success() {
			return fmt.Errorf("linoone serve exited with %v:\n%s", s.cmd.ProcessState, s.logs)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("linoone serve did not stop on SIGINT")
	}
}

// needServe skips t under -short, where TestMain starts no serve.
func needServe(t *testing.T) {
	t.Helper()
	testlayer.Skip(t, testlayer.EndToEnd)
}
