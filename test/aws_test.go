//go:build aws

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/gruntwork-io/terratest/modules/random"
	"github.com/gruntwork-io/terratest/modules/terraform"
	test_structure "github.com/gruntwork-io/terratest/modules/test-structure"

	"github.com/linoone/linoone/api/management"
)

// What the AWS suite needs besides credentials: the Persist API it talks to.
const (
	envPersistURL = "LINOONE_TEST_PERSIST_URL"
	envPersistARN = "LINOONE_TEST_PERSIST_API_EXECUTION_ARN"
)

// TestAWSSandbox deploys terraform/envs/sandbox under a unique environment name with
// its own bus, runs the suite against it and destroys it. It skips (never fails)
// without AWS credentials or without the LINOONE_TEST_* variables.
//
// The whole ../terraform tree is copied, so envs/sandbox finds the stack at
// ../../modules/stack. The copy keeps its state locally: a backend_override.tf
// replaces the environment's S3 backend with the local one.
//
// Stages (terratest test_structure): SKIP_deploy=1, SKIP_validate=1 or
// SKIP_teardown=1 leave a stage out, to keep a stack between runs while working on
// the suite. Terratest then works in ../terraform/envs/sandbox itself instead of a
// temporary copy; the override file stays there until the teardown stage runs.
func TestAWSSandbox(t *testing.T) {
	persistURL, persistARN := os.Getenv(envPersistURL), os.Getenv(envPersistARN)
	if persistURL == "" || persistARN == "" {
		skipOrFail(t, "set %s (https base URL of a Persist API) and %s (execute-api ARN pattern the functions may invoke on it)",
			envPersistURL, envPersistARN)
	}
	cfg := awsConfigOrSkip(t)
	artifacts, err := filepath.Abs("../dist")
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"issue", "resolve", "replay"} {
		if _, err := os.Stat(filepath.Join(artifacts, fn+".zip")); err != nil {
			t.Fatalf("Lambda artifact missing (%v): run `make build` first", err)
		}
	}

	workDir := test_structure.CopyTerraformFolderToTemp(t, "../terraform", "envs/sandbox")
	refuseForeignState(t, workDir)
	useLocalState(t, workDir)

	defer test_structure.RunTestStage(t, "teardown", func() {
		terraform.Destroy(t, test_structure.LoadTerraformOptions(t, workDir))
		// Leave no local-state override behind in a staged run's envs/sandbox.
		if err := os.Remove(filepath.Join(workDir, localBackendFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Error(err)
		}
	})
	test_structure.RunTestStage(t, "deploy", func() {
		env := "t-" + strings.ToLower(random.UniqueId())
		opts := terraform.WithDefaultRetryableErrors(t, &terraform.Options{
			TerraformDir: workDir,
			Vars: map[string]any{
				"environment":               env,
				"aws_region":                cfg.Region,
				"create_bus":                true,
				"event_bus_name":            "linoone-" + env + "-bus",
				"persist_url":               persistURL,
				"persist_api_execution_arn": persistARN,
				"artifacts_dir":             artifacts,
				// A discovery.auto.tfvars.json in the directory must not claim a
				// custom domain for a throw-away stack.
				"custom_domain_name":            "",
				"custom_domain_routable":        false,
				"custom_domain_certificate_arn": "",
			},
			EnvVars: map[string]string{"AWS_REGION": cfg.Region},
			NoColor: true,
		})
		test_structure.SaveTerraformOptions(t, workDir, opts)
		terraform.InitAndApply(t, opts)
	})
	test_structure.RunTestStage(t, "validate", func() {
		opts := test_structure.LoadTerraformOptions(t, workDir)
		// A subtest, so that everything the deployment set up on the stack (the
		// observer rule on the bus, a broken function configuration) is cleaned up
		// before the deferred destroy.
		t.Run("suite", func(t *testing.T) {
			runSuite(t, newAWSDeployment(t, cfg, opts))
		})
	})
}

// awsConfigOrSkip loads the default AWS configuration and skips the test when no
// credentials can be retrieved within a few seconds.
func awsConfigOrSkip(t *testing.T) aws.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		skipOrFail(t, "no AWS configuration (%v); set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		skipOrFail(t, "no AWS credentials (%v); set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return cfg
}

// refuseForeignState stops a staged run (SKIP_*, which works in the real
// envs/sandbox directory) from applying to or destroying a developer's own sandbox:
// local state it did not create, or a directory initialised with a remote backend.
func refuseForeignState(t *testing.T, workDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(workDir, ".test-data")); err == nil {
		return // a staged run of this test
	}
	if _, err := os.Stat(filepath.Join(workDir, "terraform.tfstate")); err == nil {
		t.Fatalf("%s holds a terraform.tfstate this test did not create; refusing to apply or destroy it (unset SKIP_* to work in a temporary copy)", workDir)
	}
	if backend := initialisedBackend(t, workDir); backend != "" && backend != "local" {
		t.Fatalf("%s is initialised with the %q backend (a developer's own sandbox); refusing to switch it to local state (unset SKIP_* to work in a temporary copy)", workDir, backend)
	}
}

// initialisedBackend returns the backend type `terraform init` recorded in
// workDir/.terraform/terraform.tfstate, "" when the directory is not initialised.
func initialisedBackend(t *testing.T, workDir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(workDir, ".terraform", "terraform.tfstate"))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Backend struct {
			Type string `json:"type"`
		} `json:"backend"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatalf("read the backend of %s: %v", workDir, err)
	}
	return state.Backend.Type
}

// localBackendFile is a Terraform override file: its backend replaces the
// environment's S3 backend (whose bucket, key and region the test does not have),
// so a throw-away stack keeps its state in workDir. It is git-ignored.
const localBackendFile = "backend_override.tf"

func useLocalState(t *testing.T, workDir string) {
	t.Helper()
	const override = "# Written by test/aws_test.go: a throw-away stack keeps its state here.\n" +
		"terraform {\n  backend \"local\" {}\n}\n"
	if err := os.WriteFile(filepath.Join(workDir, localBackendFile), []byte(override), 0o644); err != nil {
		t.Fatal(err)
	}
}

// awsDeployment is a sandbox stack. Facts are observed through a temporary
// EventBridge rule on the stack's bus that feeds a temporary SQS queue.
type awsDeployment struct {
	root           *testing.T // owns the cleanups
	region         string
	creds          aws.CredentialsProvider
	lambda         *lambda.Client
	sqs            *sqs.Client
	events         *eventbridge.Client
	managementURL  string
	resolverURL    string
	resolveFn      string
	replayFn       string
	clickDLQURL    string
	busName        string
	observerURL    string // the temporary fact queue
	canary         string // detail marker of the observer's own test event
	canarySeen     bool
	pending        []Fact          // facts received while waiting for the canary
	seen           map[string]bool // EventBridge event ids already returned
	originalBus    string          // the resolve function's LINOONE_EVENT_BUS before BreakBus
	replayMapping  string          // UUID of the replay function's event source mapping
	restoreOnClose bool
}

var _ Deployment = (*awsDeployment)(nil)

func newAWSDeployment(t *testing.T, cfg aws.Config, opts *terraform.Options) *awsDeployment {
	t.Helper()
	env := fmt.Sprint(opts.Vars["environment"])
	a := &awsDeployment{
		root:          t,
		region:        cfg.Region,
		creds:         cfg.Credentials,
		lambda:        lambda.NewFromConfig(cfg),
		sqs:           sqs.NewFromConfig(cfg),
		events:        eventbridge.NewFromConfig(cfg),
		managementURL: terraform.Output(t, opts, "management_url"),
		resolverURL:   terraform.Output(t, opts, "resolver_url"),
		resolveFn:     terraform.Output(t, opts, "resolve_function_name"),
		replayFn:      terraform.Output(t, opts, "replay_function_name"),
		clickDLQURL:   terraform.Output(t, opts, "click_dlq_url"),
		busName:       terraform.Output(t, opts, "event_bus_name"),
		canary:        randomBase62(16),
		seen:          map[string]bool{},
	}
	a.waitReady(t)
	a.observeFacts(t, "linoone-"+env+"-e2e-facts")
	return a
}

func (a *awsDeployment) ManagementURL() string { return a.managementURL }
func (a *awsDeployment) ResolverURL() string   { return a.resolverURL }
func (a *awsDeployment) Signer() Signer        { return Signer{Credentials: a.creds, Region: a.region} }

func (a *awsDeployment) Patience() Patience {
	return Patience{Fact: 5 * time.Minute, Quiet: time.Minute, Poll: 0} // PollFacts long-polls
}

// eventually retries fn every few seconds until it succeeds or within has passed.
func eventually(t *testing.T, what string, within time.Duration, fn func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err := fn(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done within %s (%d attempts): %v", what, within, attempt, err)
		}
		t.Logf("%s: attempt %d: %v", what, attempt, err)
		time.Sleep(5 * time.Second)
	}
}

// waitReady waits until both APIs answer and a signed shorten succeeds: right after
// an apply, IAM and Lambda need a moment.
func (a *awsDeployment) waitReady(t *testing.T) {
	t.Helper()
	for _, base := range []string{a.managementURL, a.resolverURL} {
		eventually(t, "GET "+base+"/healthz", 3*time.Minute, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/healthz", nil)
			if err != nil {
				return err
			}
			res, err := plainClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			return nil
		})
	}
	client, err := management.NewClientWithResponses(strings.TrimRight(a.managementURL, "/"), management.WithHTTPClient(a.Signer().Client()))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "signed POST /shorten (warm-up)", 3*time.Minute, func(ctx context.Context) error {
		res, err := client.ShortenWithResponse(ctx, nil, management.ShortenJSONRequestBody{TargetURL: "https://example.com/linoone-e2e/warm-up"})
		if err != nil {
			return err
		}
		if res.StatusCode() != http.StatusCreated {
			return fmt.Errorf("status %d: %s", res.StatusCode(), res.Body)
		}
		return nil
	})
}

// observeFacts creates a queue and a rule on the stack's bus that sends it every
// GraphFactProduced, both deleted when the test ends, and waits until an event of
// its own has gone through (a new rule takes a moment to apply).
func (a *awsDeployment) observeFacts(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	q, err := a.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
		Attributes: map[string]string{"MessageRetentionPeriod": "3600"}})
	if err != nil {
		t.Fatalf("create fact queue: %v", err)
	}
	a.observerURL = aws.ToString(q.QueueUrl)
	a.root.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := a.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}); err != nil {
			a.root.Errorf("delete fact queue %s: %v", a.observerURL, err)
		}
	})
	queueARN := a.queueARN(t, a.observerURL)

	pattern := `{"source":["shorturl"],"detail-type":["GraphFactProduced"]}`
	rule, err := a.events.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventBusName: aws.String(a.busName),
		EventPattern: aws.String(pattern), State: ebtypes.RuleStateEnabled,
		Description: aws.String("linoone end-to-end test: copy click facts to a test queue")})
	if err != nil {
		t.Fatalf("create fact rule: %v", err)
	}
	a.root.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := a.events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(name), EventBusName: aws.String(a.busName), Ids: []string{"e2e-queue"}})
		if err == nil {
			_, err = a.events.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(name), EventBusName: aws.String(a.busName)})
		}
		if err != nil {
			a.root.Errorf("delete fact rule %s: %v", name, err)
		}
	})

	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid":       "LinooneE2EFactRule",
			"Effect":    "Allow",
			"Principal": map[string]string{"Service": "events.amazonaws.com"},
			"Action":    "sqs:SendMessage",
			"Resource":  queueARN,
			"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": aws.ToString(rule.RuleArn)}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.sqs.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: q.QueueUrl,
		Attributes: map[string]string{"Policy": string(policy)}}); err != nil {
		t.Fatalf("fact queue policy: %v", err)
	}
	out, err := a.events.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), EventBusName: aws.String(a.busName),
		Targets: []ebtypes.Target{{Id: aws.String("e2e-queue"), Arn: aws.String(queueARN)}}})
	if err != nil || out.FailedEntryCount > 0 {
		t.Fatalf("fact rule target: %v %+v", err, out)
	}

	// The canary: an event of the test's own on the test's own bus, ignored by the
	// suite, proving the rule delivers before any click counts on it.
	const within = 3 * time.Minute
	deadline := time.Now().Add(within)
	for !a.canarySeen {
		if time.Now().After(deadline) {
			t.Fatalf("the fact rule on bus %s delivered nothing to %s within %s", a.busName, a.observerURL, within)
		}
		res, err := a.events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			EventBusName: aws.String(a.busName), Source: aws.String("shorturl"), DetailType: aws.String("GraphFactProduced"),
			Detail: aws.String(`{"linoone_e2e_canary":"` + a.canary + `"}`),
		}}})
		if err != nil || res.FailedEntryCount > 0 {
			t.Fatalf("put canary event: %v %+v", err, res)
		}
		for end := time.Now().Add(20 * time.Second); !a.canarySeen && time.Now().Before(end); {
			a.pending = append(a.pending, a.receiveFacts(t)...)
		}
	}
}

func (a *awsDeployment) queueARN(t *testing.T, url string) string {
	t.Helper()
	out, err := a.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("queue ARN of %s: %v", url, err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// PollFacts long-polls the fact queue once and deletes what it received. An event
// SQS delivers twice (same EventBridge id) is returned once: a delivery duplicate is
// not a second publish.
func (a *awsDeployment) PollFacts(t *testing.T) []Fact {
	t.Helper()
	out := a.pending
	a.pending = nil
	return append(out, a.receiveFacts(t)...)
}

func (a *awsDeployment) receiveFacts(t *testing.T) []Fact {
	t.Helper()
	ctx := t.Context()
	res, err := a.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(a.observerURL),
		MaxNumberOfMessages: 10, WaitTimeSeconds: 5, VisibilityTimeout: 30})
	if err != nil {
		t.Fatalf("receive facts: %v", err)
	}
	var facts []Fact
	for _, m := range res.Messages {
		if _, err := a.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(a.observerURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatalf("delete fact message: %v", err)
		}
		var f Fact
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &f); err != nil {
			t.Fatalf("fact queue message is not an EventBridge event: %v: %.300s", err, aws.ToString(m.Body))
		}
		var canary struct {
			Canary string `json:"linoone_e2e_canary"`
		}
		if json.Unmarshal(f.Detail, &canary) == nil && canary.Canary != "" {
			a.canarySeen = a.canarySeen || canary.Canary == a.canary
			continue
		}
		if a.seen[f.ID] {
			continue
		}
		a.seen[f.ID] = true
		facts = append(facts, f)
	}
	return facts
}

// WaitDeadLettered waits for the click DLQ's message count (visible and in flight)
// to be n, then reads the n messages once and makes them visible again. BreakBus has
// stopped the replay function's event source mapping, so nothing else consumes them;
// each read counts against maxReceiveCount, so the DLQ is read only when the count
// is right.
func (a *awsDeployment) WaitDeadLettered(t *testing.T, n int) []string {
	t.Helper()
	const within = 3 * time.Minute
	deadline := time.Now().Add(within)
	for {
		got := a.dlqDepth(t)
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("click DLQ %s holds %d messages after %s, want %d", a.clickDLQURL, got, within, n)
		}
		time.Sleep(5 * time.Second)
	}
	if n == 0 {
		return nil
	}
	ctx := t.Context()
	keys := map[string]bool{}
	var handles []*string
	for attempt := 0; attempt < 2 && len(keys) < n; attempt++ {
		res, err := a.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(a.clickDLQURL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatalf("read click DLQ: %v", err)
		}
		for _, m := range res.Messages {
			handles = append(handles, m.ReceiptHandle)
			validateSchema(t, clickDLQSchema, []byte(aws.ToString(m.Body)))
			var body struct {
				GraphFact struct {
					IdempotencyKey string `json:"idempotency_key"`
				} `json:"graph_fact"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &body); err != nil || body.GraphFact.IdempotencyKey == "" {
				t.Fatalf("click DLQ message is not a dead-lettered fact (%v): %.500s", err, aws.ToString(m.Body))
			}
			keys[body.GraphFact.IdempotencyKey] = true
		}
	}
	for _, h := range handles {
		if _, err := a.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(a.clickDLQURL),
			ReceiptHandle: h, VisibilityTimeout: 0}); err != nil {
			t.Fatalf("release click DLQ message: %v", err)
		}
	}
	if len(keys) != n {
		t.Fatalf("read %d distinct facts from the click DLQ, want %d", len(keys), n)
	}
	out := make([]string, 0, n)
	for k := range keys {
		out = append(out, k)
	}
	return out
}

func (a *awsDeployment) dlqDepth(t *testing.T) int {
	t.Helper()
	out, err := a.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(a.clickDLQURL),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		}})
	if err != nil {
		t.Fatalf("click DLQ attributes: %v", err)
	}
	total := 0
	for _, name := range []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	} {
		v, err := strconv.Atoi(out.Attributes[string(name)])
		if err != nil {
			t.Fatalf("click DLQ attribute %s = %q", name, out.Attributes[string(name)])
		}
		total += v
	}
	return total
}

// BreakBus points the resolve function's LINOONE_EVENT_BUS at a bus that does not
// exist (PutEvents fails: the bus is unknown and outside the function's policy) and
// stops the replay function's event source mapping so that dead letters wait in the
// click DLQ instead of being replayed at once. Both are undone when the test ends.
func (a *awsDeployment) BreakBus(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if a.replayMapping == "" {
		a.replayMapping = a.findReplayMapping(t)
	}
	if a.originalBus == "" {
		env, err := a.functionEnv(ctx, a.resolveFn)
		if err != nil {
			t.Fatal(err)
		}
		a.originalBus = env["LINOONE_EVENT_BUS"]
		if a.originalBus == "" {
			t.Fatalf("function %s has no LINOONE_EVENT_BUS", a.resolveFn)
		}
	}
	if !a.restoreOnClose {
		a.restoreOnClose = true
		a.root.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := a.setFunctionEnv(ctx, a.resolveFn, "LINOONE_EVENT_BUS", a.originalBus); err != nil {
				a.root.Errorf("restore the bus of %s: %v", a.resolveFn, err)
			}
			if err := a.setReplayMapping(ctx, true); err != nil {
				a.root.Errorf("re-enable the replay event source mapping: %v", err)
			}
		})
	}
	if err := a.setReplayMapping(ctx, false); err != nil {
		t.Fatalf("stop the replay event source mapping: %v", err)
	}
	if err := a.setFunctionEnv(ctx, a.resolveFn, "LINOONE_EVENT_BUS", a.originalBus+"-e2e-missing"); err != nil {
		t.Fatalf("break the bus of %s: %v", a.resolveFn, err)
	}
}

// HealBus restores the resolve function's LINOONE_EVENT_BUS.
func (a *awsDeployment) HealBus(t *testing.T) {
	t.Helper()
	if err := a.setFunctionEnv(t.Context(), a.resolveFn, "LINOONE_EVENT_BUS", a.originalBus); err != nil {
		t.Fatalf("heal the bus of %s: %v", a.resolveFn, err)
	}
}

// Replay starts the replay function's event source mapping again: on AWS the
// replay function consumes the click DLQ by itself, so nothing is invoked by hand.
func (a *awsDeployment) Replay(t *testing.T) {
	t.Helper()
	if err := a.setReplayMapping(t.Context(), true); err != nil {
		t.Fatalf("start the replay event source mapping: %v", err)
	}
}

func (a *awsDeployment) findReplayMapping(t *testing.T) string {
	t.Helper()
	dlqARN := a.queueARN(t, a.clickDLQURL)
	out, err := a.lambda.ListEventSourceMappings(t.Context(), &lambda.ListEventSourceMappingsInput{
		FunctionName: aws.String(a.replayFn), EventSourceArn: aws.String(dlqARN)})
	if err != nil {
		t.Fatalf("event source mappings of %s: %v", a.replayFn, err)
	}
	if len(out.EventSourceMappings) != 1 {
		t.Fatalf("%d event source mappings from %s to %s, want 1", len(out.EventSourceMappings), dlqARN, a.replayFn)
	}
	return aws.ToString(out.EventSourceMappings[0].UUID)
}

// setReplayMapping enables or disables the replay event source mapping and waits
// until it is in that state.
func (a *awsDeployment) setReplayMapping(ctx context.Context, enabled bool) error {
	if a.replayMapping == "" {
		return nil
	}
	want := "Disabled"
	if enabled {
		want = "Enabled"
	}
	deadline := time.Now().Add(5 * time.Minute)
	updated := false
	for {
		m, err := a.lambda.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(a.replayMapping)})
		if err != nil {
			return err
		}
		state := aws.ToString(m.State)
		switch {
		case state == want:
			return nil
		case !updated && (state == "Enabled" || state == "Disabled"):
			_, err := a.lambda.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
				UUID: aws.String(a.replayMapping), Enabled: aws.Bool(enabled)})
			var inUse *lambdatypes.ResourceInUseException
			if err != nil && !errors.As(err, &inUse) {
				return err
			}
			updated = err == nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("event source mapping %s is %s, want %s", a.replayMapping, state, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

func (a *awsDeployment) functionEnv(ctx context.Context, fn string) (map[string]string, error) {
	out, err := a.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn)})
	if err != nil {
		return nil, fmt.Errorf("configuration of %s: %w", fn, err)
	}
	env := map[string]string{}
	if out.Environment != nil {
		for k, v := range out.Environment.Variables {
			env[k] = v
		}
	}
	return env, nil
}

// setFunctionEnv sets one environment variable of a function (keeping the others)
// and waits until the update is done (LastUpdateStatus Successful), so that every
// later invocation sees it.
func (a *awsDeployment) setFunctionEnv(ctx context.Context, fn, key, value string) error {
	if value == "" {
		return nil // BreakBus never ran far enough to know the original
	}
	waiter := lambda.NewFunctionUpdatedWaiter(a.lambda)
	in := &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn)}
	if err := waiter.Wait(ctx, in, 5*time.Minute); err != nil {
		return fmt.Errorf("wait for %s to be updatable: %w", fn, err)
	}
	env, err := a.functionEnv(ctx, fn)
	if err != nil {
		return err
	}
	if env[key] == value {
		return nil
	}
	env[key] = value
	for attempt := 1; ; attempt++ {
		_, err = a.lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
			FunctionName: aws.String(fn), Environment: &lambdatypes.Environment{Variables: env}})
		var conflict *lambdatypes.ResourceConflictException
		if err == nil || !errors.As(err, &conflict) || attempt == 10 {
			break
		}
		time.Sleep(5 * time.Second)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", fn, err)
	}
	if err := waiter.Wait(ctx, in, 5*time.Minute); err != nil {
		return fmt.Errorf("wait for the update of %s: %w", fn, err)
	}
	return nil
}

// envRequired is set by make e2e-aws: a run meant to prove a deployment fails,
// rather than skips, when it cannot reach AWS.
const envRequired = "LINOONE_TEST_AWS_REQUIRED"

// skipOrFail skips the suite with the reason, or fails it when envRequired is set.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(envRequired) != "" {
		t.Fatalf("AWS suite cannot run ("+envRequired+" is set, as by make e2e-aws): "+format, args...)
	}
	t.Skipf("AWS suite skipped: "+format, args...)
}
