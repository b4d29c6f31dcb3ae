package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		ResolverAddr: "127.0.0.1:8080", ManagementAddr: "127.0.0.1:8081", PersistAddr: "127.0.0.1:8082",
		DataDir: "./.linoone", Consumer: "inline", BusSync: "each", Region: "us-east-1", Environment: "local", LogLevel: slog.LevelInfo,
		ResolverBaseURL: "http://127.0.0.1:8080", PersistURL: "http://127.0.0.1:8082", LocalPersist: true,
		PersistTimeout: 2 * time.Second, PublishTimeout: 500 * time.Millisecond, MetricsNamespace: "Linoone", CacheSize: 100000,
	}
	if c != want {
		t.Fatalf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

func TestOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"LINOONE_RESOLVER_ADDR":     "127.0.0.1:9000",
		"LINOONE_PERSIST_URL":       "https://persist.example/prod",
		"LINOONE_PERSIST_SIGV4":     "true",
		"AWS_REGION":                "eu-west-1",
		"LINOONE_EVENT_BUS":         "arn:aws:events:eu-west-1:123456789012:event-bus/engagement",
		"LINOONE_CLICK_DLQ_URL":     "https://sqs.eu-west-1.amazonaws.com/123456789012/click-dlq",
		"LINOONE_PUBLISH_TIMEOUT":   "250ms",
		"LINOONE_LOG_LEVEL":         "DEBUG",
		"LINOONE_BUS_FAULT":         "always",
		"LINOONE_RESOLVER_BASE_URL": "https://go.example.com",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ResolverBaseURL != "https://go.example.com" || c.LocalPersist || !c.PersistSigV4 || c.Region != "eu-west-1" ||
		c.PublishTimeout != 250*time.Millisecond || c.LogLevel != slog.LevelDebug || c.BusFault != "always" {
		t.Fatalf("%+v", c)
	}
	if err := c.Require("LINOONE_EVENT_BUS", "LINOONE_CLICK_DLQ_URL", "LINOONE_PERSIST_URL"); err != nil {
		t.Fatal(err)
	}
}

func TestReportsEveryBadVariable(t *testing.T) {
	bad := map[string]string{
		"LINOONE_RESOLVER_ADDR":           "nonsense",
		"LINOONE_MANAGEMENT_ADDR":         "127.0.0.1:99999",
		"LINOONE_RESOLVER_BASE_URL":       "ftp://x",
		"LINOONE_PERSIST_URL":             "persist:8082",
		"LINOONE_PERSIST_SIGV4":           "maybe",
		"LINOONE_PERSIST_TIMEOUT":         "2 hours",
		"LINOONE_PUBLISH_TIMEOUT":         "-1s",
		"LINOONE_REGION":                  "moon-1",
		"LINOONE_ENVIRONMENT":             "Prod!",
		"LINOONE_BUS_FAULT":               "sometimes",
		"LINOONE_CONSUMER":                "elsewhere",
		"LINOONE_BUS_SYNC":                "never",
		"LINOONE_EVENT_BUS":               "bus name with spaces",
		"LINOONE_CLICK_DLQ_URL":           "sqs://queue",
		"LINOONE_LOG_LEVEL":               "loud",
		"LINOONE_RESOLVER_CACHE_SIZE":     "lots",
		"LINOONE_PERSIST_URL_PARAM":       "bad name!",
		"LINOONE_RESOLVER_BASE_URL_PARAM": "/" + strings.Repeat("a", 2048),
	}
	_, err := Load(env(bad))
	if err == nil {
		t.Fatal("no error")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestRequire(t *testing.T) {
	c, _ := Load(env(nil))
	err := c.Require("LINOONE_EVENT_BUS", "LINOONE_CLICK_DLQ_URL", "LINOONE_PERSIST_URL")
	for _, n := range []string{"LINOONE_EVENT_BUS", "LINOONE_CLICK_DLQ_URL", "LINOONE_PERSIST_URL"} {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("Require does not report %s: %v", n, err)
		}
	}
	c, _ = Load(env(map[string]string{"LINOONE_PERSIST_URL_PARAM": "/linoone/prod/persist-url"}))
	if err := c.Require("LINOONE_PERSIST_URL"); err != nil {
		t.Errorf("an SSM parameter satisfies the persist requirement: %v", err)
	}
}
