package sqstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MoveTasks stands in for SQS's message move tasks (StartMessageMoveTask,
// ListMessageMoveTasks), which goaws does not implement, in front of a goaws Server:
// it answers those two operations in the SQS JSON protocol and passes every other
// request to goaws. A task moves the source queue's messages to the destination
// with goaws's own ReceiveMessage, SendMessage and DeleteMessage (bodies and message
// attributes unchanged), in the background, as SQS does.
type MoveTasks struct {
	// Endpoint is the stand-in's base endpoint (http://127.0.0.1:port).
	Endpoint string
	// Sources maps a dead-letter queue's name to the queue whose redrive policy
	// names it: where a task without a destination moves messages back to.
	Sources map[string]string

	goaws *Server
	api   *sqs.Client
	srv   *httptest.Server
	proxy http.Handler

	mu    sync.Mutex
	tasks []*moveTask // newest last
	wg    sync.WaitGroup
}

type moveTask struct {
	handle, source, dest string
	rate                 int32
	started              time.Time
	status               string
	moved                int64
	toMove               int64
	failure              string
}

// StartMoveTasks serves the stand-in in front of s on a loopback port.
func StartMoveTasks(s *Server, sources map[string]string) *MoveTasks {
	target, _ := url.Parse(s.Endpoint)
	m := &MoveTasks{Sources: sources, goaws: s, proxy: httputil.NewSingleHostReverseProxy(target),
		api: sqs.NewFromConfig(s.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.Endpoint) })}
	m.srv = httptest.NewServer(m)
	m.Endpoint = m.srv.URL
	return m
}

// Close waits for the running tasks and stops the stand-in.
func (m *MoveTasks) Close() {
	m.wg.Wait()
	m.srv.Close()
}

func (m *MoveTasks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.StartMessageMoveTask":
		m.start(w, r)
	case "AmazonSQS.ListMessageMoveTasks":
		m.list(w, r)
	default:
		m.proxy.ServeHTTP(w, r)
	}
}

func fail(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + typ, "message": msg})
}

// queueName is the last part of an ARN, if goaws holds such a queue.
func (m *MoveTasks) queueName(arn string) (string, bool) {
	name := arn[strings.LastIndexByte(arn, ':')+1:]
	if !strings.HasPrefix(arn, "arn:aws:sqs:") || name == "" {
		return "", false
	}
	n, _ := m.goaws.Held(name)
	_, known := m.Sources[name]
	return name, n > 0 || known || m.isSource(name)
}

func (m *MoveTasks) isSource(name string) bool {
	for _, s := range m.Sources {
		if s == name {
			return true
		}
	}
	return false
}

func (m *MoveTasks) start(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SourceArn, DestinationArn    string
		MaxNumberOfMessagesPerSecond int32
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", err.Error())
		return
	}
	src, ok := m.queueName(in.SourceArn)
	if !ok {
		fail(w, http.StatusBadRequest, "ResourceNotFoundException", "no queue "+in.SourceArn)
		return
	}
	dest := m.Sources[src]
	if in.DestinationArn != "" {
		if dest, ok = m.queueName(in.DestinationArn); !ok {
			fail(w, http.StatusBadRequest, "ResourceNotFoundException", "no queue "+in.DestinationArn)
			return
		}
	}
	if dest == "" {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", "the source queue is no queue's dead-letter queue")
		return
	}
	held, _ := m.goaws.Held(src)
	m.mu.Lock()
	for _, t := range m.tasks {
		if t.source == src && t.status == "RUNNING" {
			m.mu.Unlock()
			fail(w, http.StatusBadRequest, "UnsupportedOperation", "a message move task is already running on "+src)
			return
		}
	}
	t := &moveTask{handle: fmt.Sprintf("task-%d-%s", len(m.tasks)+1, src), source: src, dest: dest, rate: in.MaxNumberOfMessagesPerSecond,
		started: time.Now(), status: "RUNNING", toMove: int64(held)}
	m.tasks = append(m.tasks, t)
	m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.move(t)
	}()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(map[string]string{"TaskHandle": t.handle})
}

// move moves t's messages one by one until the source is empty.
func (m *MoveTasks) move(t *moveTask) {
	ctx := context.Background()
	src, dst := aws.String(m.goaws.QueueURL(t.source)), aws.String(m.goaws.QueueURL(t.dest))
	finish := func(status, failure string) {
		m.mu.Lock()
		t.status, t.failure = status, failure
		m.mu.Unlock()
	}
	for {
		out, err := m.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 30,
			MessageAttributeNames: []string{"All"}})
		if err != nil {
			finish("FAILED", err.Error())
			return
		}
		if len(out.Messages) == 0 {
			finish("COMPLETED", "")
			return
		}
		for _, msg := range out.Messages {
			if _, err := m.api.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: dst, MessageBody: msg.Body, MessageAttributes: msg.MessageAttributes}); err != nil {
				finish("FAILED", err.Error())
				return
			}
			if _, err := m.api.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: src, ReceiptHandle: msg.ReceiptHandle}); err != nil {
				finish("FAILED", err.Error())
				return
			}
			m.mu.Lock()
			t.moved++
			m.mu.Unlock()
			if t.rate > 0 {
				time.Sleep(time.Second / time.Duration(t.rate))
			}
		}
	}
}

func (m *MoveTasks) list(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SourceArn  string
		MaxResults int
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, "InvalidParameterValue", err.Error())
		return
	}
	src, ok := m.queueName(in.SourceArn)
	if !ok {
		fail(w, http.StatusBadRequest, "ResourceNotFoundException", "no queue "+in.SourceArn)
		return
	}
	if in.MaxResults <= 0 {
		in.MaxResults = 1
	}
	type entry struct {
		TaskHandle, Status, SourceArn, DestinationArn string
		FailureReason                                 string `json:",omitempty"`
		ApproximateNumberOfMessagesMoved              int64
		ApproximateNumberOfMessagesToMove             int64
		MaxNumberOfMessagesPerSecond                  int32 `json:",omitempty"`
		StartedTimestamp                              int64
	}
	results := []entry{}
	m.mu.Lock()
	for i := len(m.tasks) - 1; i >= 0 && len(results) < in.MaxResults; i-- {
		t := m.tasks[i]
		if t.source != src {
			continue
		}
		results = append(results, entry{TaskHandle: t.handle, Status: t.status, SourceArn: in.SourceArn,
			DestinationArn: "arn:aws:sqs:us-east-1:" + AccountID + ":" + t.dest, FailureReason: t.failure,
			ApproximateNumberOfMessagesMoved: t.moved, ApproximateNumberOfMessagesToMove: t.toMove,
			MaxNumberOfMessagesPerSecond: t.rate, StartedTimestamp: t.started.UnixMilli()})
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(map[string]any{"Results": results})
}
