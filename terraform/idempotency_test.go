package terraform_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdempotencySecretParameter: issue 10 item 2. The secret is a SecureString the
// operator fills out of band: Terraform writes a placeholder too short to be taken
// for a secret (shorturl.MinIdempotencySecretBytes is 32), never resets the value,
// and no output, variable or other function mentions it.
func TestIdempotencySecretParameter(t *testing.T) {
	m := mustLoad(t, stackDir)
	r := m.resources["aws_ssm_parameter.idempotency_secret"]
	if r == nil {
		t.Fatal("modules/stack: no aws_ssm_parameter.idempotency_secret")
	}
	if v, ok := literalString(exprOf(r.Body.Attributes["type"])); !ok || v != "SecureString" {
		t.Errorf("type %q, want SecureString", v)
	}
	if v, ok := literalString(exprOf(r.Body.Attributes["value"])); !ok || len(v) >= 32 {
		t.Errorf("value must be a literal placeholder shorter than 32 bytes, got %q", v)
	}
	ignored := false
	for _, b := range r.Body.Blocks {
		if b.Type != "lifecycle" || b.Body.Attributes["ignore_changes"] == nil {
			continue
		}
		for _, tr := range traversals(b.Body.Attributes["ignore_changes"].Expr) {
			ignored = ignored || ref(tr) == "value"
		}
	}
	if !ignored {
		t.Error("aws_ssm_parameter.idempotency_secret must have lifecycle { ignore_changes = [value] }")
	}
	// Only the issue function reads it (TestLeastPrivilegeStatements checks the
	// grant); nothing outputs it, in the stack or in an environment.
	dirs := []string{stackDir}
	for _, env := range envNames {
		dirs = append(dirs, filepath.Join("envs", env))
	}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "outputs.tf"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "idempotency") {
			t.Errorf("%s/outputs.tf mentions the idempotency secret", dir)
		}
	}
	for _, fn := range []string{"resolve", "replay"} {
		vars, err := functionEnv(m, fn)
		if err != nil {
			t.Fatal(err)
		}
		if vars["LINOONE_IDEMPOTENCY_SECRET_PARAM"] != nil {
			t.Errorf("%s must not know the idempotency secret parameter", fn)
		}
	}
}
