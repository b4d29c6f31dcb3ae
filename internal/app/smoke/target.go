package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/app/config"
)

// FromTerraform reads the target from `terraform output -json` in dir, an
// environment of terraform/envs after apply.
func FromTerraform(ctx context.Context, dir string) (Target, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Target{}, fmt.Errorf("--from-terraform %s: not a directory", dir)
	}
	cmd := exec.CommandContext(ctx, "terraform", "-chdir="+dir, "output", "-json")
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Target{}, fmt.Errorf("terraform -chdir=%s output -json: %v: %.500s", dir, err, strings.TrimSpace(stderr.String()))
	}
	t, err := ParseOutputs(out)
	if err != nil {
		return Target{}, fmt.Errorf("terraform outputs of %s: %w", filepath.Clean(dir), err)
	}
	return t, nil
}

// ParseOutputs reads resolver_url and management_url from `terraform output -json`
// (terraform/envs/*/outputs.tf).
func ParseOutputs(b []byte) (Target, error) {
	var outs map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &outs); err != nil {
		return Target{}, fmt.Errorf("not the JSON of terraform output -json: %w", err)
	}
	var t Target
	var errs []error
	for name, dst := range map[string]*string{"resolver_url": &t.Resolver, "management_url": &t.Management} {
		o, ok := outs[name]
		if !ok {
			errs = append(errs, fmt.Errorf("no output %s (has the environment been applied?)", name))
			continue
		}
		if err := json.Unmarshal(o.Value, dst); err != nil || *dst == "" {
			errs = append(errs, fmt.Errorf("output %s is not a non-empty string", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Target{}, err
	}
	return t, t.Check()
}

// Check refuses a target whose URLs are not http(s) base URLs.
func (t Target) Check() error {
	var errs []error
	if err := config.CheckServiceURL(t.Resolver); err != nil {
		errs = append(errs, fmt.Errorf("resolver URL %w", err))
	}
	if err := config.CheckServiceURL(t.Management); err != nil {
		errs = append(errs, fmt.Errorf("management URL %w", err))
	}
	return errors.Join(errs...)
}
