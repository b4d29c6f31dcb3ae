package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestLogFormat: JSON lines off a terminal unless LINOONE_LOG_FORMAT=text asks for
// text; json forces JSON; anything else is refused.
func TestLogFormat(t *testing.T) {
	for format, wantPrefix := range map[string]string{"": `{"time":`, "json": `{"time":`, "JSON": `{"time":`, "text": "time="} {
		c, err := LoadServe(env(map[string]string{"LINOONE_LOG_FORMAT": format}))
		if err != nil {
			t.Fatalf("%q: %v", format, err)
		}
		var buf bytes.Buffer // not a terminal
		c.Logger(&buf).Info("hello", "k", "v")
		if !strings.HasPrefix(buf.String(), wantPrefix) {
			t.Errorf("LINOONE_LOG_FORMAT=%q logged %q, want it to start with %q", format, &buf, wantPrefix)
		}
	}
	if _, err := LoadServe(env(map[string]string{"LINOONE_LOG_FORMAT": "pretty"})); err == nil || !strings.Contains(err.Error(), "LINOONE_LOG_FORMAT") {
		t.Errorf("LINOONE_LOG_FORMAT=pretty: %v, want it refused by name", err)
	}
}

// TestEMF: serve writes CloudWatch EMF lines on Lambda (AWS_LAMBDA_FUNCTION_NAME
// set) or when LINOONE_EMF=on asks, and LINOONE_EMF=off wins over Lambda.
func TestEMF(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "f"}, true},
		{map[string]string{"LINOONE_EMF": "on"}, true},
		{map[string]string{"LINOONE_EMF": "off", "AWS_LAMBDA_FUNCTION_NAME": "f"}, false},
	} {
		c, err := LoadServe(env(tt.env))
		if err != nil || c.EMF != tt.want {
			t.Errorf("%v: EMF %v, %v; want %v", tt.env, c.EMF, err, tt.want)
		}
	}
	if _, err := LoadServe(env(map[string]string{"LINOONE_EMF": "sometimes"})); err == nil || !strings.Contains(err.Error(), "LINOONE_EMF") {
		t.Errorf("LINOONE_EMF=sometimes: %v, want it refused by name", err)
	}
}
