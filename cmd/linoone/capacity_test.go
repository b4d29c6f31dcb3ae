package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCapacityCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"help", []string{"capacity", "-h"}, 0, "linoone capacity --peak 25000", ""},
		{"bad flag", []string{"capacity", "--nope"}, 2, "", "flag provided but not defined"},
		{"bad set", []string{"capacity", "--set", "nope=1"}, 2, "", "want name=value"},
		{"bad env", []string{"capacity", "--env", "staging"}, 2, "", "unknown environment"},
		{"table", []string{"capacity", "--avg", "10", "--peak", "2000", "--links", "1000"}, 0, "resolver route throttle", ""},
		// Inputs no deployment or traffic could have are refused, not modelled.
		{"huge cache", []string{"capacity", "--cache-size", "4611686018427387904", "--links", "9223372036854775807"}, 2, "", "--cache-size"},
		{"NaN average", []string{"capacity", "--avg", "NaN"}, 2, "", "finite"},
		{"infinite issuances", []string{"capacity", "--issue-avg", "Inf"}, 2, "", "finite"},
		{"NaN zipf", []string{"capacity", "--zipf", "NaN"}, 2, "", "finite"},
		{"infinite quota", []string{"capacity", "--set", "lambda_concurrency=Inf"}, 2, "", "finite"},
		{"negative memory", []string{"capacity", "--memory", "-128"}, 2, "", "--memory"},
		{"negative cache", []string{"capacity", "--cache-size", "-5"}, 2, "", "--cache-size"},
		{"negative publish timeout", []string{"capacity", "--publish-timeout", "-1s"}, 2, "", "--publish-timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, func(string) string { return "" }, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
		})
	}
}

func TestCapacityJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"capacity", "--avg", "10", "--links", "1000", "--json", "--set", "putevents_p99_ms=40"}
	if code := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		HotSet struct {
			HitRate *float64 `json:"hit_rate"`
		} `json:"hot_set"`
		Components []map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.HotSet.HitRate == nil || *out.HotSet.HitRate <= 0 {
		t.Errorf("hot_set.hit_rate missing: %s", stdout.String())
	}
	if len(out.Components) == 0 {
		t.Fatal("no components")
	}
	for _, c := range out.Components {
		for _, k := range []string{"name", "load", "limit", "headroom", "p50_ms", "p99_ms", "monthly_usd"} {
			if _, ok := c[k]; !ok {
				t.Errorf("component %s lacks %q", c["name"], k)
			}
		}
	}
}

// TestCapacityTextHasNoNegativeZero: a zero load prints 0.
func TestCapacityTextHasNoNegativeZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"capacity", "--avg", "0", "--issue-avg", "0"}, func(string) string { return "" }, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "-0") {
		t.Errorf("a zero printed as -0:\n%s", stdout.String())
	}
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("no space left on device")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestCapacityReportCutShortFails: a report the writer could not take whole exits
// non-zero, as discover's does.
func TestCapacityReportCutShortFails(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"capacity"}, func(string) string { return "" }, &failAfter{n: 1800}, &stderr); code == 0 {
		t.Fatalf("exit 0 with the report cut short: %s", stderr.String())
	}
}
