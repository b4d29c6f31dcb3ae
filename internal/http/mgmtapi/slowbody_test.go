package mgmtapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/http/sigv4"
)

// TestSlowUnverifiedBodiesDoNotStallSignedWrites is issue 44's finding 3, over real
// HTTP: ten raw TCP connections name the real access key id with a zero signature
// and no body hash, claim a large body and trickle a byte every 0.5 s; meanwhile a
// POST /shorten signed by curl --aws-sigv4 (which declares no body hash either)
// from another address is answered 201 within 1 s, and every attacker is cut off
// with 408 long before the server's 15 s read timeout.
func TestSlowUnverifiedBodiesDoNotStallSignedWrites(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not on PATH")
	}
	if c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).Dial("tcp", "127.0.0.1:1"); err != nil &&
		strings.Contains(err.Error(), "assign requested address") {
		t.Skip("127.0.0.2 is not a local address here")
	} else if c != nil {
		_ = c.Close()
	}
	srv := httptest.NewUnstartedServer(newEnv(t).h)
	srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout = 5*time.Second, 15*time.Second // as serve
	srv.Start()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	const attackers = 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	cut := make([]time.Duration, attackers)
	status := make([]string, attackers)
	for i := range attackers {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		now := time.Now().UTC()
		fmt.Fprintf(conn, "POST /shorten/batch HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n"+
			"X-Amz-Date: %s\r\nAuthorization: AWS4-HMAC-SHA256 Credential=%s/%s/us-east-1/execute-api/aws4_request, "+
			"SignedHeaders=host;x-amz-date, Signature=%s\r\n\r\n{",
			addr, now.Format("20060102T150405Z"), creds.AccessKeyID, now.Format("20060102"), strings.Repeat("0", 64))
		start := time.Now()
		wg.Go(func() { // trickle until cut off
			for ctx.Err() == nil {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
		wg.Go(func() { // the answer, and when it came
			line, _ := bufio.NewReader(conn).ReadString('\n')
			cut[i], status[i] = time.Since(start), strings.TrimSpace(line)
		})
	}
	time.Sleep(300 * time.Millisecond) // every attacker holds what it can

	start := time.Now()
	out, err := exec.Command(curl, "-sS", "--max-time", "20", "--interface", "127.0.0.2", "-o", "/dev/null", "-w", "%{http_code}",
		"--aws-sigv4", "aws:amz:us-east-1:execute-api", "--user", creds.AccessKeyID+":"+creds.SecretAccessKey,
		"-H", "Content-Type: application/json", "--data-binary", `{"target_url":"https://example.com/signed"}`,
		"http://"+addr+"/shorten").CombinedOutput()
	took := time.Since(start)
	t.Logf("signed request under attack: %s in %v", out, took)
	if err != nil || string(out) != "201" || took > time.Second {
		t.Errorf("signed curl --aws-sigv4 under attack: %v %q after %v; want 201 within 1s", err, out, took)
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cancel()
		<-done
		t.Fatal("attackers still connected after 10s")
	}
	// One address's attackers take their turns a few at a time, each cut after
	// the grace: well under the 15 s they held before.
	bound := time.Duration(attackers/sigv4.MaxUnverifiedPerAddress)*sigv4.UnverifiedGrace + 2*time.Second
	for i := range attackers {
		if !strings.Contains(status[i], " 408 ") || cut[i] > bound {
			t.Errorf("attacker %d: %q after %v; want 408 within %v", i, status[i], cut[i], bound)
		}
	}
	t.Logf("attackers cut after %v … %v", cut[0], cut[attackers-1])
}
