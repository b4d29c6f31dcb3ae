package terraform_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/linoone/linoone/internal/app/awswire"
	"github.com/linoone/linoone/internal/app/config"
)

// TestCDNVisitorAddress: issue 48. With the cdn option, API Gateway's source IP is a
// CloudFront edge server's, so the resolve function takes the visitor's address from
// CloudFront-Viewer-Address, but only on requests carrying an origin secret that
// CloudFront adds (the execute-api endpoint stays reachable directly). The cdn
// module draws the secret, sends it in the header the function reads, forwards
// CloudFront's headers, and outputs it as sensitive; the stack hands it to resolve
// with LINOONE_VISITOR_IP_FROM=cloudfront only when cdn_enabled.
func TestCDNVisitorAddress(t *testing.T) {
	cdn := mustLoad(t, filepath.Join("modules", "cdn"))
	pw := cdn.resources["random_password.origin_verify"]
	if pw == nil {
		t.Fatal("modules/cdn: no random_password.origin_verify")
	}
	if n, ok := literalNumber(exprOf(pw.Body.Attributes["length"])); !ok || n < config.MinOriginVerifySecret {
		t.Errorf("random_password.origin_verify length %d, want at least %d (LINOONE_ORIGIN_VERIFY_SECRET's minimum)", n, config.MinOriginVerifySecret)
	}
	if special, ok := literalBool(exprOf(pw.Body.Attributes["special"])); !ok || special {
		t.Error("random_password.origin_verify must be special = false: letters and digits are safe in a header")
	}
	const secretRef = "random_password.origin_verify.result"

	dist := cdn.resources["aws_cloudfront_distribution.this"]
	if dist == nil {
		t.Fatal("modules/cdn: no aws_cloudfront_distribution.this")
	}
	var headers []*hclsyntax.Block
	for _, origin := range blocksOf(dist.Body, "origin") {
		headers = append(headers, blocksOf(origin.Body, "custom_header")...)
	}
	if len(headers) != 1 {
		t.Fatalf("the origin has %d custom_header blocks, want 1 (the origin secret)", len(headers))
	}
	if name, _ := literalString(followLocal(cdn, exprOf(headers[0].Body.Attributes["name"]))); name != awswire.OriginVerifyHeader {
		t.Errorf("custom_header name %q, want %q (awswire.OriginVerifyHeader)", name, awswire.OriginVerifyHeader)
	}
	if !refsWithLocals(cdn, exprOf(headers[0].Body.Attributes["value"]))[secretRef] {
		t.Errorf("custom_header value must be %s", secretRef)
	}
	// Managed-AllViewerExceptHostHeader forwards CloudFront's headers,
	// CloudFront-Viewer-Address among them, and not Host.
	policy := cdn.data["aws_cloudfront_origin_request_policy.all_viewer_except_host"]
	if policy == nil {
		t.Fatal("modules/cdn: no data.aws_cloudfront_origin_request_policy.all_viewer_except_host")
	}
	if name, _ := literalString(exprOf(policy.Body.Attributes["name"])); name != "Managed-AllViewerExceptHostHeader" {
		t.Errorf("origin request policy %q, want Managed-AllViewerExceptHostHeader", name)
	}
	for _, b := range blocksOf(dist.Body, "default_cache_behavior") {
		if !refsWithLocals(cdn, exprOf(b.Body.Attributes["origin_request_policy_id"]))["data.aws_cloudfront_origin_request_policy.all_viewer_except_host.id"] {
			t.Error("default_cache_behavior must use the AllViewerExceptHostHeader origin request policy")
		}
	}
	out := cdn.outputs["origin_verify_secret"]
	if out == nil {
		t.Fatal("modules/cdn: no output origin_verify_secret")
	}
	if sensitive, ok := literalBool(exprOf(out.Body.Attributes["sensitive"])); !ok || !sensitive {
		t.Error("output origin_verify_secret must be sensitive = true")
	}
	if !refsWithLocals(cdn, exprOf(out.Body.Attributes["value"]))[secretRef] {
		t.Errorf("output origin_verify_secret must be %s", secretRef)
	}

	checkResolveVisitorEnvironment(t, mustLoad(t, stackDir))
}

// checkResolveVisitorEnvironment: the resolve function's environment gets
// LINOONE_VISITOR_IP_FROM = "cloudfront" and the cdn module's origin secret under
// `var.cdn_enabled ? tomap({…}) : tomap({})`, and no other function gets either.
func checkResolveVisitorEnvironment(t *testing.T, stack *tfModule) {
	t.Helper()
	a := stack.calls["resolve"].Body.Attributes["environment_variables"]
	merge, ok := a.Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || merge.Name != "merge" {
		t.Fatal("resolve's environment_variables must be merge(…)")
	}
	var cond *hclsyntax.ConditionalExpr
	for _, arg := range merge.Args {
		if c, ok := followLocal(stack, arg).(*hclsyntax.ConditionalExpr); ok {
			cond = c
		}
	}
	if cond == nil {
		t.Fatal("resolve's environment_variables merge no `var.cdn_enabled ? tomap({…}) : tomap({})`")
	}
	if !refsWithLocals(stack, cond.Condition)["var.cdn_enabled"] {
		t.Errorf("%s: the condition must be var.cdn_enabled", cond.Condition.Range())
	}
	on, err := mergedObject(stack, cond.TrueResult)
	if err != nil {
		t.Fatal(err)
	}
	if off, err := mergedObject(stack, cond.FalseResult); err != nil || len(off) != 0 {
		t.Errorf("without cdn the function gets %d of these variables (%v), want none", len(off), err)
	}
	if e := on["LINOONE_VISITOR_IP_FROM"]; e == nil {
		t.Error("LINOONE_VISITOR_IP_FROM is not set with cdn")
	} else if v, _ := literalString(e); v != "cloudfront" {
		t.Errorf("LINOONE_VISITOR_IP_FROM = %q with cdn, want \"cloudfront\"", v)
	}
	secret := on["LINOONE_ORIGIN_VERIFY_SECRET"]
	if secret == nil || !refsWithLocals(stack, secret)["module.cdn"] || !strings.Contains(sourceOf(t, secret.Range()), ".origin_verify_secret") {
		t.Error("LINOONE_ORIGIN_VERIFY_SECRET with cdn must be the cdn module's origin_verify_secret")
	}
	for _, fn := range []string{"issue", "replay"} {
		vars, err := functionEnv(stack, fn)
		if err != nil {
			t.Fatal(err)
		}
		if vars["LINOONE_VISITOR_IP_FROM"] != nil || vars["LINOONE_ORIGIN_VERIFY_SECRET"] != nil {
			t.Errorf("%s is given the visitor address settings: only resolve records visitors", fn)
		}
	}
}

// blocksOf returns the nested blocks of type typ.
func blocksOf(body *hclsyntax.Body, typ string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == typ {
			out = append(out, b)
		}
	}
	return out
}

func literalNumber(e hclsyntax.Expression) (int, bool) {
	if e == nil {
		return 0, false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0, false
	}
	n, _ := v.AsBigFloat().Int64()
	return int(n), true
}

// sourceOf is the text of r in its file.
func sourceOf(t *testing.T, r hcl.Range) string {
	t.Helper()
	b, err := os.ReadFile(r.Filename)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[r.Start.Byte:r.End.Byte])
}
