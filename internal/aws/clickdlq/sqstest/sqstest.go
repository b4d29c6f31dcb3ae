// Package sqstest runs goaws (github.com/Admiral-Piett/goaws v0.5.4), an SQS server
// speaking the AWS JSON protocol of the SDK, in-process on 127.0.0.1 for tests.
// goaws keeps its queues in package-level state, so Start may be called only once
// per process: call it from TestMain.
package sqstest

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/Admiral-Piett/goaws/app/conf"
	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/models"
	"github.com/Admiral-Piett/goaws/app/router"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/sirupsen/logrus"
)

// AccountID is the account in every queue URL and ARN.
const AccountID = "000000000000"

// Server is goaws serving on a loopback port.
type Server struct {
	// Endpoint is the base endpoint for SDK clients (http://127.0.0.1:port).
	Endpoint string
	srv      *httptest.Server
	dir      string
	quit     chan bool // stops gosqs.PeriodicTasks
}

// Start writes a goaws configuration defining queues into a temporary directory,
// loads it and serves goaws's router on 127.0.0.1. Call it once per process.
func Start(queues ...string) (*Server, error) {
	srv := httptest.NewUnstartedServer(router.New())
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("goaws listener address: %w", err)
	}
	dir, err := os.MkdirTemp("", "goaws")
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("goaws config dir: %w", err)
	}
	s := &Server{Endpoint: "http://127.0.0.1:" + port, srv: srv, dir: dir}

	var y strings.Builder
	fmt.Fprintf(&y, "Local:\n  Host: 127.0.0.1\n  Port: %q\n  AccountId: %q\n  LogToFile: false\n", port, AccountID)
	y.WriteString("  QueueAttributeDefaults:\n    VisibilityTimeout: 30\n    ReceiveMessageWaitTimeSeconds: 0\n  Queues:\n")
	for _, q := range queues {
		fmt.Fprintf(&y, "    - Name: %s\n", strconv.Quote(q))
	}
	file := filepath.Join(dir, "goaws.yaml")
	if err := os.WriteFile(file, []byte(y.String()), 0o600); err != nil {
		s.Close()
		return nil, fmt.Errorf("write goaws config: %w", err)
	}
	logrus.SetLevel(logrus.ErrorLevel) // goaws logs every message body at INFO
	conf.LoadYamlConfig(file, "Local")
	models.SyncQueues.RLock()
	for _, q := range queues {
		if _, ok := models.SyncQueues.Queues[q]; !ok {
			models.SyncQueues.RUnlock()
			s.Close()
			return nil, fmt.Errorf("goaws did not create queue %q from %s", q, file)
		}
	}
	models.SyncQueues.RUnlock()
	// goaws makes a received message visible again, once its visibility timeout has
	// passed, only in this loop, which its own main starts: without it a message
	// received once stays hidden for good, unlike in SQS, and a test whose receive
	// was answered but lost (its retry then finds nothing) waits for it forever.
	s.quit = make(chan bool)
	go gosqs.PeriodicTasks(visibilityTick, s.quit)
	srv.Start()
	return s, nil
}

// visibilityTick is how often goaws looks for messages whose visibility timeout has
// passed (its own main: every second).
const visibilityTick = 200 * time.Millisecond

// QueueURL is the URL of the named queue.
func (s *Server) QueueURL(name string) string {
	return s.Endpoint + "/" + AccountID + "/" + name
}

// Held reports how many messages the named queue holds and how many of them were
// received and are hidden until their visibility timeout passes: what a test that
// waits for messages can say when they do not come.
func (s *Server) Held(queue string) (messages, hidden int) {
	models.SyncQueues.RLock()
	defer models.SyncQueues.RUnlock()
	q, ok := models.SyncQueues.Queues[queue]
	if !ok {
		return 0, 0
	}
	for _, m := range q.Messages {
		if m.ReceiptHandle != "" {
			hidden++
		}
	}
	return len(q.Messages), hidden
}

// Config is an aws.Config for clients of this server: region us-east-1, static
// credentials. Point clients at Endpoint with BaseEndpoint.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDGOAWS", "goaws-secret", ""),
	}
}

// Close stops the server and removes its configuration.
func (s *Server) Close() {
	if s.quit != nil {
		close(s.quit)
	}
	s.srv.Close()
	_ = os.RemoveAll(s.dir)
}
