// Package tfvars reads the defaults of a Terraform module's variables from its HCL, so
// that the capacity model's deployment settings come from terraform/envs, not a copy.
package tfvars

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Defaults parses every *.tf file of dir and returns each variable's default that is a
// literal number or string, by variable name (numbers formatted as Terraform writes
// them). Variables without a default are absent.
func Defaults(dir string) (map[string]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no .tf files in %s", dir)
	}
	slices.Sort(paths)
	out := map[string]string{}
	var errs []error
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(src, p, hcl.InitialPos)
		if diags.HasErrors() {
			errs = append(errs, diags)
			continue
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type != "variable" || len(b.Labels) != 1 {
				continue
			}
			a, ok := b.Body.Attributes["default"]
			if !ok {
				continue
			}
			if v, ok := literal(a.Expr); ok {
				out[b.Labels[0]] = v
			}
		}
	}
	return out, errors.Join(errs...)
}

// literal evaluates a constant number or string expression.
func literal(e hclsyntax.Expression) (string, bool) {
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true
	case cty.Number:
		return v.AsBigFloat().Text('g', -1), true
	}
	return "", false
}
