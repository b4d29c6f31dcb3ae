package sigv4

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCurlSigV4 signs requests with the real curl binary
// (`--aws-sigv4 aws:amz:REGION:SERVICE --user AK:SK`), an implementation
// independent of the AWS SDK, and sends them to a server behind the
// middleware using the real clock.
func TestCurlSigV4(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not on PATH")
	}
	sum := sha256.Sum256(testBody)
	bodyHash := hex.EncodeToString(sum[:])
	tests := []struct {
		name     string
		user     Credentials
		args     []string
		path     string
		wantBody string
		wantErr  error
	}{
		{
			name:     "post json",
			user:     testCreds,
			args:     []string{"-H", "Content-Type: application/json", "--data-binary", string(testBody)},
			path:     "/shorten",
			wantBody: string(testBody),
		},
		{
			name:     "post json with content hash",
			user:     testCreds,
			args:     []string{"-H", "Content-Type: application/json", "-H", "X-Amz-Content-Sha256: " + bodyHash, "--data-binary", string(testBody)},
			path:     "/shorten",
			wantBody: string(testBody),
		},
		{name: "get", user: testCreds, path: "/links/Ab3dE7xY9z/stats"},
		{name: "get with sorted query", user: testCreds, path: "/links/Ab3dE7xY9z/stats?a=1&b=2"},
		{name: "get with custom headers", user: testCreds, args: []string{"-H", "Accept: application/json", "-H", "X-Request-Id: r-1"}, path: "/links/Ab3dE7xY9z/stats"},
		{name: "delete", user: testCreds, args: []string{"-X", "DELETE"}, path: "/links/Ab3dE7xY9z/stats"},
		{
			name:    "wrong secret",
			user:    Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: "not-the-secret"},
			args:    []string{"-H", "Content-Type: application/json", "--data-binary", string(testBody)},
			path:    "/shorten",
			wantErr: ErrSignatureMismatch,
		},
		{
			name:    "content hash header that lies",
			user:    testCreds,
			args:    []string{"-H", "Content-Type: application/json", "-H", "X-Amz-Content-Sha256: " + strings.Repeat("0", 64), "--data-binary", string(testBody)},
			path:    "/shorten",
			wantErr: ErrBodyHashMismatch,
		},
		{name: "wrong access key", user: Credentials{AccessKeyID: "AKIAOTHER", SecretAccessKey: testCreds.SecretAccessKey}, path: "/shorten", wantErr: ErrUnknownAccessKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := newServer(t, mustNew(t, testCreds))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			args := append([]string{
				"-q", "--silent", "--show-error", "--noproxy", "*",
				"--aws-sigv4", "aws:amz:" + testRegion + ":" + testService,
				"--user", tc.user.AccessKeyID + ":" + tc.user.SecretAccessKey,
				"--write-out", "\n%{http_code}",
			}, tc.args...)
			args = append(args, srv.URL+tc.path)
			out, err := exec.CommandContext(ctx, curl, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("curl: %v\n%s", err, out)
			}
			// --write-out appends "\n<status>" after the response body.
			i := strings.LastIndexByte(string(out), '\n')
			if i < 0 {
				t.Fatalf("curl output %q has no status line", out)
			}
			body := string(out[:i])
			status, _ := strconv.Atoi(string(out[i+1:]))

			served, rejected, seen, gotErr := rec.snapshot()
			if tc.wantErr == nil {
				if gotErr != nil || status != 200 || served != 1 {
					t.Fatalf("status %d, served %d, err %v; want 200, served once", status, served, gotErr)
				}
				if string(seen) != tc.wantBody || body != tc.wantBody {
					t.Errorf("handler read %q, answered %q; want %q", seen, body, tc.wantBody)
				}
				return
			}
			t.Logf("rejected: %v", gotErr)
			if !errors.Is(gotErr, tc.wantErr) {
				t.Fatalf("err = %v, want %v", gotErr, tc.wantErr)
			}
			if served != 0 || rejected != 1 || status != 403 {
				t.Errorf("served %d, rejected %d, status %d; want handler never run and one 403", served, rejected, status)
			}
			assertNoLeak(t, gotErr, tc.user.SecretAccessKey)
		})
	}
}
