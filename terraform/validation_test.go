package terraform_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/linoone/linoone/internal/app/config"
)

// TestPublishTimeoutValidation evaluates the stack's publish_timeout validation with
// the terraform CLI (a module holding that variable alone needs no provider) and
// holds it to what the functions accept: a value Terraform lets through and the
// functions refuse would stop every resolve function at its start.
func TestPublishTimeoutValidation(t *testing.T) {
	checkDurationValidation(t, "publish_timeout", "LINOONE_PUBLISH_TIMEOUT", []string{"500ms", "1.5s", "1m", "60s", "30s500ms", "1ns", "2µs",
		"61s", "1m30s", "2m", "1h", "0", "0ms", "-1s", "abc", "5", "1d"}) // "" (the function's default) Terraform refuses
}

// TestDenyListRefreshValidation holds the stack's denylist_refresh validation to the
// bounds the functions enforce on LINOONE_DENYLIST_REFRESH (10 s to 15 min).
func TestDenyListRefreshValidation(t *testing.T) {
	checkDurationValidation(t, "denylist_refresh", "LINOONE_DENYLIST_REFRESH", []string{"10s", "1m", "30s", "15m", "14m59s", "900s", "10000ms",
		"9s", "9999ms", "15m1s", "1h", "0", "-1m", "abc", "60"})
}

// checkDurationValidation runs terraform plan on the stack's variable alone for
// each value and compares its verdict with the resolve function's configuration
// reading env.
func checkDurationValidation(t *testing.T, variable, env string, values []string) {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatalf("this test needs the terraform CLI on PATH (.ci/run requires it): %v", err)
	}
	path := filepath.Join(stackDir, "variables.tf")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var block string
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "variable" && len(b.Labels) == 1 && b.Labels[0] == variable {
			block = string(b.Range().SliceBytes(src))
		}
	}
	if block == "" {
		t.Fatalf("%s declares no %s", path, variable)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(block+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(tf, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE="+filepath.Join(dir, "none.tfrc"), "CHECKPOINT_DISABLE=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("init", "-input=false", "-backend=false"); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	for _, v := range values {
		_, cfgErr := config.LoadResolveFunction(func(name string) string {
			return map[string]string{env: v, "LINOONE_PERSIST_URL": "https://persist.example.com",
				"LINOONE_EVENT_BUS": "bus", "LINOONE_CLICK_DLQ_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
				"AWS_REGION": "us-east-1", "LINOONE_ENVIRONMENT": "test"}[name]
		})
		functionTakes := cfgErr == nil || !strings.Contains(cfgErr.Error(), env)
		out, err := run("plan", "-input=false", "-lock=false", "-no-color", "-var", variable+"="+v)
		terraformTakes := err == nil
		if !terraformTakes && !strings.Contains(out, variable+" must be") {
			t.Fatalf("%s=%q: terraform plan failed otherwise than by the validation:\n%s", variable, v, out)
		}
		if terraformTakes != functionTakes {
			t.Errorf("%s=%q: Terraform takes it %v, the resolve function %v (%v)", variable, v, terraformTakes, functionTakes, cfgErr)
		}
	}
}
