package config

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localbus"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// localDefaultPersist is where the local commands reach Persist by default.
var localDefaultPersist = LocalPersist{Addr: "127.0.0.1:8082", URL: "http://127.0.0.1:8082", Start: true, Timeout: 2 * time.Second}

func TestDefaults(t *testing.T) {
	info := Logging{LogLevel: slog.LevelInfo}
	fn := Function{Logging: info, Region: "us-east-1", Environment: "local"}
	tests := []struct {
		name string
		load func(func(string) string) (any, error)
		want any
	}{
		{"serve", loader(LoadServe), Serve{
			Logging: info, ResolverAddr: "127.0.0.1:8080", ManagementAddr: "127.0.0.1:8081", DataDir: "./.linoone",
			Region: "us-east-1", Environment: "local", ResolverBaseURL: "http://127.0.0.1:8080", Persist: localDefaultPersist,
			BusSync: localbus.SyncEach, Consumer: localbus.ConsumerInline,
			PublishTimeout: 500 * time.Millisecond, CacheSize: 100000, MetricsNamespace: "Linoone",
			ClickBufferBytes: 64 << 20, DenyListFile: filepath.Join(".linoone", "denylist.txt"), Bounds: defaultBounds,
		}},
		{"consume", loader(LoadConsume), Consume{Logging: info, DataDir: "./.linoone", Region: "us-east-1", Persist: localDefaultPersist, Bounds: defaultBounds}},
		{"dlq", loader(LoadDLQ), DLQ{DataDir: "./.linoone"}},
		{"replay", loader(LoadReplay), Replay{DataDir: "./.linoone", Region: "us-east-1"}},
		{"shorten", loader(LoadShorten), Shorten{ManagementURL: "http://127.0.0.1:8081", DataDir: "./.linoone", Region: "us-east-1"}},
		// A function has no defaults for what it requires: see TestFunctionRequirements.
		{"issue function", loader(LoadIssueFunction), IssueFunction{
			Function: fn, ResolverBaseURL: "https://go.example",
			Persist: Persist{URL: "http://persist", Timeout: 2 * time.Second}, MetricsNamespace: "Linoone",
			DenyListRefresh: time.Minute,
		}},
		{"resolve function", loader(LoadResolveFunction), ResolveFunction{
			Function: fn, Persist: Persist{URL: "http://persist", Timeout: 2 * time.Second},
			EventBus: "bus", ClickDLQURL: "https://queue", PublishTimeout: 150 * time.Millisecond, DLQTimeout: 100 * time.Millisecond,
			CacheSize: 100000, MetricsNamespace: "Linoone", DenyListRefresh: time.Minute,
		}},
		{"replay function", loader(LoadReplayFunction), ReplayFunction{Function: fn, EventBus: "bus", MetricsNamespace: "Linoone"}},
	}
	required := map[string]string{
		"LINOONE_PERSIST_URL": "http://persist", "LINOONE_EVENT_BUS": "bus", "LINOONE_CLICK_DLQ_URL": "https://queue",
		"LINOONE_RESOLVER_BASE_URL": "https://go.example",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := env(nil)
			if strings.HasSuffix(tt.name, "function") {
				getenv = env(required)
			}
			got, err := tt.load(getenv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

// loader makes a Load function's result comparable in a table.
func loader[C any](load func(func(string) string) (C, error)) func(func(string) string) (any, error) {
	return func(getenv func(string) string) (any, error) { return load(getenv) }
}

func TestOverrides(t *testing.T) {
	c, err := LoadServe(env(map[string]string{
		"LINOONE_RESOLVER_ADDR":         "127.0.0.1:9000",
		"LINOONE_PERSIST_URL":           "https://persist.example/prod",
		"AWS_REGION":                    "eu-west-1",
		"LINOONE_PUBLISH_TIMEOUT":       "250ms",
		"LINOONE_LOG_LEVEL":             "DEBUG",
		"LINOONE_BUS_FAULT":             "always",
		"LINOONE_BUS_SYNC":              "interval",
		"LINOONE_CONSUMER":              "external",
		"LINOONE_RESOLVER_BASE_URL":     "https://go.example.com",
		sigv4.EnvAccessKeyID:            "AKIDEXAMPLE",
		sigv4.EnvSecretAccessKey:        "shh",
		sigv4.EnvPersistAccessKeyID:     "AKIDPERSIST",
		sigv4.EnvPersistSecretAccessKey: "psst",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ResolverBaseURL != "https://go.example.com" || c.Persist.Start || c.Persist.URL != "https://persist.example/prod" ||
		c.Region != "eu-west-1" || c.PublishTimeout != 250*time.Millisecond || c.LogLevel != slog.LevelDebug || c.BusFault != "always" ||
		c.BusSync != localbus.SyncInterval || c.Consumer != localbus.ConsumerExternal ||
		c.Credentials != (sigv4.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "shh"}) ||
		c.Persist.Credentials != (sigv4.Credentials{AccessKeyID: "AKIDPERSIST", SecretAccessKey: "psst"}) {
		t.Fatalf("%+v", c)
	}
	if c, err := LoadConsume(env(map[string]string{sigv4.EnvPersistAccessKeyID: "AKIDPERSIST", sigv4.EnvPersistSecretAccessKey: "psst", "LINOONE_REGION": "eu-west-1"})); err != nil ||
		c.Persist.Credentials != (sigv4.Credentials{AccessKeyID: "AKIDPERSIST", SecretAccessKey: "psst"}) || c.Region != "eu-west-1" {
		t.Errorf("consume reads local Persist's pair and the region: %+v, %v", c, err)
	}
	if c, err := LoadServe(env(map[string]string{"LINOONE_RESOLVER_ADDR": "127.0.0.1:9000"})); err != nil || c.ResolverBaseURL != "http://127.0.0.1:9000" {
		t.Errorf("the resolver base URL defaults to the resolver address: %q, %v", c.ResolverBaseURL, err)
	}
	s, err := LoadShorten(env(map[string]string{"LINOONE_MANAGEMENT_ADDR": "127.0.0.1:9001"}))
	if err != nil || s.ManagementURL != "http://127.0.0.1:9001" {
		t.Errorf("shorten's URL defaults to the management address: %q, %v", s.ManagementURL, err)
	}
	s, err = LoadShorten(env(map[string]string{"LINOONE_MANAGEMENT_URL": "https://mgmt.example"}))
	if err != nil || s.ManagementURL != "https://mgmt.example" {
		t.Errorf("LINOONE_MANAGEMENT_URL: %q, %v", s.ManagementURL, err)
	}
	f, err := LoadResolveFunction(env(map[string]string{
		"LINOONE_PERSIST_URL": "https://persist.example/prod", "LINOONE_PERSIST_SIGV4": "true", "AWS_REGION": "eu-west-1",
		"LINOONE_EVENT_BUS":     "arn:aws:events:eu-west-1:123456789012:event-bus/engagement",
		"LINOONE_CLICK_DLQ_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/click-dlq",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Persist.SigV4 || f.Persist.URL != "https://persist.example/prod" || f.Region != "eu-west-1" {
		t.Fatalf("%+v", f)
	}
}
