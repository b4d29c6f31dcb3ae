//go:build unix

// Command soak is make soak: it starts a default `linoone serve` on a fresh data
// dir with loopback ports, issues one short URL, and drives N redirects on it over
// kept-alive connections, bounded by -max-time. Every -every clicks, and at the
// end, it prints the data dir by part (as linoone status sizes it) and the RSS of
// serve and of each process it started, so that an operator sees what grows; then
// whether issue 47's targets held: the data dir but Persist's database under 512 MB
// at the end, and each process's RSS within 10 % of its value at -rss-from clicks,
// while sending and once idle for -settle after the drain (the consumer's catch-up
// buffers are released once it has been idle a while; the value right after the
// drain is printed too, not judged).
//
// Usage:
//
//	soak [-bin bin/linoone] [-clicks 2000000] [-every 250000] [-rss-from 500000] [-c 32] [-max-time 30m] [-settle 30s]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type options struct {
	bin            string
	clicks, every  int64
	rssFrom        int64
	conns          int
	maxTime, drain time.Duration
	settle         time.Duration
	keep           bool
	serveLog       string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.bin, "bin", "bin/linoone", "the linoone binary")
	fs.Int64Var(&o.clicks, "clicks", 2_000_000, "redirects to send")
	fs.Int64Var(&o.every, "every", 250_000, "print the data dir and RSS every this many clicks")
	fs.Int64Var(&o.rssFrom, "rss-from", 500_000, "judge each process's RSS against its value at the report at this many clicks")
	fs.IntVar(&o.conns, "c", 32, "kept-alive connections")
	fs.DurationVar(&o.maxTime, "max-time", 30*time.Minute, "stop sending after this long whatever the count")
	fs.DurationVar(&o.drain, "drain", 30*time.Second, "at most this long for the consumer to deliver the journal at the end")
	fs.DurationVar(&o.settle, "settle", 30*time.Second, "after the drain, how long serve stays idle before the RSS that is judged is read")
	fs.BoolVar(&o.keep, "keep", false, "keep the data dir")
	fs.StringVar(&o.serveLog, "serve-log", "", "write serve's stderr (and its children's) to this file, not to soak's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.clicks <= 0 || o.every <= 0 || o.conns <= 0 || o.conns > 1024 || o.maxTime <= 0 || o.settle < 0 {
		return errors.New("-clicks, -every, -max-time must be positive, -settle not negative and -c in 1..1024")
	}
	dataDir, err := os.MkdirTemp("", "linoone-soak-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dataDir)
	}
	serveErr := io.Writer(os.Stderr)
	if o.serveLog != "" {
		f, err := os.Create(o.serveLog)
		if err != nil {
			return err
		}
		defer f.Close()
		serveErr = f
	}
	srv, err := startServe(ctx, o.bin, dataDir, serveErr)
	if err != nil {
		return err
	}
	defer srv.stop()
	token, err := shorten(ctx, o.bin, srv.env)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "soak: serve pid %d on %s, %d clicks on /%s over %d connections, at most %s\n",
		srv.cmd.Process.Pid, dataDir, o.clicks, token, o.conns, o.maxTime)
	return drive(ctx, o, srv, "http://"+srv.resolver+"/"+token, dataDir, out)
}

// server is the serve soak started.
type server struct {
	cmd      *exec.Cmd
	env      []string
	resolver string
}

// startServe runs serve with free loopback ports and waits for its resolver.
func startServe(ctx context.Context, bin, dataDir string, stderr io.Writer) (*server, error) {
	addrs := make([]string, 3)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addrs[i] = l.Addr().String()
		l.Close()
	}
	env := append(os.Environ(), "LINOONE_DATA_DIR="+dataDir, "LINOONE_RESOLVER_ADDR="+addrs[0],
		"LINOONE_MANAGEMENT_ADDR="+addrs[1], "LINOONE_PERSIST_ADDR="+addrs[2],
		"LINOONE_MANAGEMENT_URL=http://"+addrs[1], "LINOONE_LOG_LEVEL=warn")
	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, env: env, resolver: addrs[0]}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get("http://" + addrs[0] + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, fmt.Errorf("serve did not answer on %s: %v", addrs[0], err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop sends serve SIGTERM and waits for it (SIGKILL after 30 s).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// shorten issues the short URL the clicks go to, with linoone shorten --json.
func shorten(ctx context.Context, bin string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "shorten", "--json", "https://example.com/soak")
	cmd.Env, cmd.Stderr = env, os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("linoone shorten: %w", err)
	}
	var r struct{ Token string }
	if err := json.Unmarshal(b, &r); err != nil || r.Token == "" {
		return "", fmt.Errorf("linoone shorten printed %q", b)
	}
	return r.Token, nil
}
