package terraform_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Issue 48: ready for production on AWS. These tests evaluate what the
// configuration computes (with the evaluator of eval_test.go) where it matters.

// TestPersistGrantsNameTheirRoute: resolve may call only POST /persist/gremlin, issue
// gremlin and ingest, and the ARN pattern they derive from must end in /persist/*.
func TestPersistGrantsNameTheirRoute(t *testing.T) {
	stack := mustLoad(t, stackDir)
	const pattern = "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/*"
	ev := newEvaluator(stack, map[string]cty.Value{"persist_api_execution_arn": cty.StringVal(pattern)}, nil)
	for local, want := range map[string]string{
		"persist_gremlin_arn": "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/gremlin",
		"persist_ingest_arn":  "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/ingest",
	} {
		v, err := ev.local(local)
		if err != nil {
			t.Fatal(err)
		}
		if v.AsString() != want {
			t.Errorf("local.%s = %q, want %q", local, v.AsString(), want)
		}
	}
	for arn, ok := range map[string]bool{
		pattern: true,
		"arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/POST/persist/*":   true,
		"arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/*":                   false,
		"arn:aws:execute-api:us-east-1:123456789012:abcdef1234/*/POST/persist/ingest": false,
	} {
		got, err := validationHolds(stack, "persist_api_execution_arn", cty.StringVal(arn))
		if err != nil {
			t.Fatal(err)
		}
		if got != ok {
			t.Errorf("persist_api_execution_arn = %q: accepted %v, want %v", arn, got, ok)
		}
	}
	// The grants themselves are TestLeastPrivilegeStatements'.
}

// TestInvokePermissionsNameTheirRoute: one permission per route, its source ARN
// naming the method and path, never /*/*.
func TestInvokePermissionsNameTheirRoute(t *testing.T) {
	api := mustLoad(t, filepath.Join("modules", "http-api"))
	p := api.resources["aws_lambda_permission.this"]
	if p == nil {
		t.Fatal("modules/http-api: no aws_lambda_permission.this")
	}
	if refs := refsWithLocals(api, exprOf(p.Body.Attributes["for_each"])); !refs["var.routes"] {
		t.Error("aws_lambda_permission.this must have one instance per route (for_each = var.routes)")
	}
	routes := map[string]cty.Value{}
	want := map[string]string{
		"GET /{token}":          "GET/*",
		"HEAD /{token}":         "HEAD/*",
		"POST /shorten":         "POST/shorten",
		"GET /links/{token}/qr": "GET/links/*/qr",
		"GET /a/{id}/b/{name}":  "GET/a/*/b/*",
	}
	for key := range want {
		routes[key] = cty.ObjectVal(map[string]cty.Value{"function_name": cty.StringVal("fn"), "invoke_arn": cty.StringVal("arn"), "authorization_type": cty.StringVal("NONE")})
	}
	ev := newEvaluator(api, map[string]cty.Value{"routes": cty.ObjectVal(routes), "name": cty.StringVal("linoone-prod-resolver")}, nil)
	paths, err := ev.local("route_arn_paths")
	if err != nil {
		t.Fatal(err)
	}
	for key, w := range want {
		if got := paths.GetAttr(key).AsString(); got != w {
			t.Errorf("route %q: ARN path %q, want %q", key, got, w)
		}
	}
	src := exprOf(p.Body.Attributes["source_arn"])
	tmpl, ok := src.(*hclsyntax.TemplateExpr)
	if !ok || len(tmpl.Parts) < 2 {
		t.Fatalf("source_arn must be \"${<execution_arn>}/*/${local.route_arn_paths[each.key]}\"")
	}
	if r := refsWithLocals(api, tmpl.Parts[0]); !r["aws_apigatewayv2_api.this.execution_arn"] {
		t.Error("source_arn must start with the API's execution_arn")
	}
	last := tmpl.Parts[len(tmpl.Parts)-1]
	if r := refsWithLocals(api, last); !r["local.route_arn_paths"] || !r["each.key"] {
		t.Error("source_arn must end with the route's ARN path (local.route_arn_paths[each.key])")
	}
	raw, _ := os.ReadFile(filepath.Join("modules", "http-api", "main.tf"))
	if strings.Contains(string(raw), `execution_arn}/*/*"`) {
		t.Error("modules/http-api: a source_arn ending in /*/* lets every route invoke the function")
	}
}

// TestQueuesRequireTLS: both queues of the DLQ pair deny requests without TLS.
func TestQueuesRequireTLS(t *testing.T) {
	m := mustLoad(t, filepath.Join("modules", "click-dlq"))
	doc := m.data["aws_iam_policy_document.tls_only"]
	if doc == nil {
		t.Fatal("modules/click-dlq: no data.aws_iam_policy_document.tls_only")
	}
	var denies bool
	for _, st := range doc.Body.Blocks {
		if st.Type != "statement" {
			continue
		}
		effect, _ := literalString(exprOf(st.Body.Attributes["effect"]))
		actions, _ := literalStrings(exprOf(st.Body.Attributes["actions"]))
		for _, c := range st.Body.Blocks {
			test, _ := literalString(exprOf(c.Body.Attributes["test"]))
			variable, _ := literalString(exprOf(c.Body.Attributes["variable"]))
			values, _ := literalStrings(exprOf(c.Body.Attributes["values"]))
			if c.Type == "condition" && effect == "Deny" && slices.Equal(actions, []string{"sqs:*"}) &&
				test == "Bool" && variable == "aws:SecureTransport" && slices.Equal(values, []string{"false"}) {
				denies = true
			}
		}
	}
	if !denies {
		t.Error("tls_only must Deny sqs:* when Bool aws:SecureTransport = false")
	}
	keys, ok := objectItems(exprOf(doc.Body.Attributes["for_each"]))
	if !ok {
		t.Fatal("tls_only: for_each must be a literal map of queue ARNs")
	}
	for _, queue := range []string{"this", "deadletter"} {
		if e := keys[queue]; e == nil || !refsWithLocals(m, e)["aws_sqs_queue."+queue+".arn"] {
			t.Errorf("tls_only[%q] must be for aws_sqs_queue.%s", queue, queue)
		}
		pol := m.resources["aws_sqs_queue_policy."+queue]
		if pol == nil {
			t.Errorf("no aws_sqs_queue_policy.%s", queue)
			continue
		}
		refs := refsWithLocals(m, pol.Body)
		if !refs["aws_sqs_queue."+queue+".id"] || !refs[`data.aws_iam_policy_document.tls_only["`+queue+`"].json`] {
			t.Errorf("aws_sqs_queue_policy.%s must attach tls_only[%q] to aws_sqs_queue.%s", queue, queue, queue)
		}
	}
}

// TestClickDLQKeepsClicksForRetention: maxReceiveCount × visibility timeout covers
// the retention for any replay timeout and retention the module accepts, within
// SQS's limits, so an outage shorter than the retention never dead-letters a click.
func TestClickDLQKeepsClicksForRetention(t *testing.T) {
	m := mustLoad(t, filepath.Join("modules", "click-dlq"))
	q := m.resources["aws_sqs_queue.this"]
	if r := refsWithLocals(m, exprOf(q.Body.Attributes["redrive_policy"])); !r["local.max_receive_count"] {
		t.Error("redrive_policy's maxReceiveCount must be local.max_receive_count")
	}
	if r := refsWithLocals(m, exprOf(q.Body.Attributes["visibility_timeout_seconds"])); !r["local.visibility_timeout_seconds"] {
		t.Error("visibility_timeout_seconds must be local.visibility_timeout_seconds")
	}
	for _, timeout := range []float64{1, 10, 30, 60, 300, 900} {
		for _, retention := range []float64{60, 3600, 345600, 1209600} {
			ev := newEvaluator(m, map[string]cty.Value{"replay_timeout_seconds": num(timeout), "message_retention_seconds": num(retention)}, nil)
			vis, err := ev.local("visibility_timeout_seconds")
			if err != nil {
				t.Fatal(err)
			}
			mrc, err := ev.local("max_receive_count")
			if err != nil {
				t.Fatal(err)
			}
			v, n := asFloat(vis), asFloat(mrc)
			if 6*timeout > 43200 {
				continue // the module's validation refuses it already
			}
			if v*n < retention || v < 6*timeout || n > 1000 || n < 1 || v > 43200 {
				t.Errorf("timeout %v s, retention %v s: visibility %v s × %v receives (want ≥ retention, visibility ≥ 6 × timeout and ≤ 43200, 1-1000 receives)", timeout, retention, v, n)
			}
		}
	}
	esm := m.resources["aws_lambda_event_source_mapping.this"]
	var capped bool
	for _, b := range esm.Body.Blocks {
		if b.Type == "scaling_config" && refsWithLocals(m, exprOf(b.Body.Attributes["maximum_concurrency"]))["var.maximum_concurrency"] {
			capped = true
		}
	}
	if !capped {
		t.Error("the replay event source mapping needs scaling_config { maximum_concurrency = var.maximum_concurrency }")
	}
	stack := mustLoad(t, stackDir)
	if r := refsWithLocals(stack, exprOf(stack.calls["click_dlq"].Body.Attributes["maximum_concurrency"])); !r["var.replay_maximum_concurrency"] {
		t.Error("the stack must pass maximum_concurrency = var.replay_maximum_concurrency")
	}
}

// TestConcurrencyAndTimeouts: resolve has a reservation sized by the rule in
// README.md (peak requests per second × p99 in seconds, the p99 of a redirect whose
// click recording hits its whole budget), its own short timeout, and each API's
// integration timeout sits just above its function's timeout.
func TestConcurrencyAndTimeouts(t *testing.T) {
	stack := mustLoad(t, stackDir)
	resolve := stack.calls["resolve"].Body.Attributes
	if r := refsWithLocals(stack, exprOf(resolve["reserved_concurrent_executions"])); !r["var.resolve_reserved_concurrency"] {
		t.Error("resolve: reserved_concurrent_executions must be var.resolve_reserved_concurrency")
	}
	if r := refsWithLocals(stack, exprOf(resolve["timeout_seconds"])); !r["var.resolve_timeout_seconds"] {
		t.Error("resolve: timeout_seconds must be var.resolve_timeout_seconds")
	}
	fn := mustLoad(t, filepath.Join("modules", "function"))
	if r := refsWithLocals(fn, exprOf(fn.resources["aws_lambda_function.this"].Body.Attributes["reserved_concurrent_executions"])); !r["var.reserved_concurrent_executions"] {
		t.Error("modules/function must set reserved_concurrent_executions")
	}
	api := mustLoad(t, filepath.Join("modules", "http-api"))
	if r := refsWithLocals(api, exprOf(api.resources["aws_apigatewayv2_integration.this"].Body.Attributes["timeout_milliseconds"])); !r["var.integration_timeout_milliseconds"] {
		t.Error("modules/http-api: integrations must set timeout_milliseconds = var.integration_timeout_milliseconds")
	}
	for _, c := range []struct {
		call, timeoutVar string
		values           []float64
		ceilingMs        float64
	}{
		{"resolver_api", "resolve_timeout_seconds", []float64{1, 3, 10}, 11000},
		{"management_api", "api_timeout_seconds", []float64{1, 10, 29}, 30000},
	} {
		for _, s := range c.values {
			ev := newEvaluator(stack, map[string]cty.Value{c.timeoutVar: num(s)}, nil)
			v, err := ev.eval(exprOf(stack.calls[c.call].Body.Attributes["integration_timeout_milliseconds"]))
			if err != nil {
				t.Fatalf("%s: %v", c.call, err)
			}
			if ms := asFloat(v); ms <= s*1000 || ms > c.ceilingMs {
				t.Errorf("%s: %s = %v s gives an integration timeout of %v ms, want above the function's and at most %v", c.call, c.timeoutVar, s, ms, c.ceilingMs)
			}
		}
	}
	// The defaults follow the sizing rule: prod reserves at least its stage rate limit
	// × the redirect's worst-case p99 with a degraded bus (clickBudgetSeconds), and
	// resolve's timeout covers a Persist lookup plus that budget.
	const clickBudgetSeconds = 0.3
	prod := mustLoad(t, filepath.Join("envs", "prod"))
	def := func(m *tfModule, name string) float64 {
		v, diags := exprOf(m.variables[name].Body.Attributes["default"]).Value(nil)
		if diags.HasErrors() || v.Type() != cty.Number {
			t.Fatalf("%s: %s has no number default", m.dir, name)
		}
		return asFloat(v)
	}
	if reserved, rate := def(prod, "resolve_reserved_concurrency"), def(prod, "resolver_throttling_rate_limit"); reserved < rate*clickBudgetSeconds {
		t.Errorf("prod: resolve_reserved_concurrency %v < resolver_throttling_rate_limit %v × %v s", reserved, rate, clickBudgetSeconds)
	}
	for _, env := range envNames {
		m := mustLoad(t, filepath.Join("envs", env))
		// The click budget: a redirect waits at most publish_timeout for the bus, then
		// dlq_timeout for the click DLQ.
		var budget time.Duration
		for _, name := range []string{"publish_timeout", "dlq_timeout"} {
			s, _ := literalString(exprOf(m.variables[name].Body.Attributes["default"]))
			d, err := time.ParseDuration(s)
			if err != nil {
				t.Fatalf("%s: %s default %q: %v", env, name, s, err)
			}
			budget += d
		}
		if budget > time.Duration(clickBudgetSeconds*float64(time.Second)) {
			t.Errorf("%s: publish_timeout + dlq_timeout = %v, past the %v s click budget", env, budget, clickBudgetSeconds)
		}
		if s := def(m, "resolve_timeout_seconds"); s > 5 || s < 2 {
			t.Errorf("%s: resolve_timeout_seconds %v, want 2-5 s (a Persist lookup plus the click budget, not API Gateway's 30 s)", env, s)
		}
	}
}

// TestProdRequiresAlarmTopic: prod alarms must notify someone.
func TestProdRequiresAlarmTopic(t *testing.T) {
	prod := mustLoad(t, filepath.Join("envs", "prod"))
	if prod.variables["alarm_sns_topic_arn"].Body.Attributes["default"] != nil {
		t.Error("prod: alarm_sns_topic_arn must have no default")
	}
	for arn, ok := range map[string]bool{"": false, "arn:aws:sns:us-east-1:123456789012:linoone-alarms": true} {
		got, err := validationHolds(prod, "alarm_sns_topic_arn", cty.StringVal(arn))
		if err != nil {
			t.Fatal(err)
		}
		if got != ok {
			t.Errorf("prod: alarm_sns_topic_arn = %q accepted %v, want %v", arn, got, ok)
		}
	}
}

// TestProviderPinned: every module and environment pins the AWS provider to one
// major version with ~>, and README.md documents committing the lock file.
func TestProviderPinned(t *testing.T) {
	forEachModule(t, func(t *testing.T, m *tfModule) {
		found := false
		for _, file := range m.files {
			for _, b := range file.Blocks {
				if b.Type != "terraform" {
					continue
				}
				for _, rp := range b.Body.Blocks {
					if rp.Type != "required_providers" || rp.Body.Attributes["aws"] == nil {
						continue
					}
					found = true
					items, _ := objectItems(rp.Body.Attributes["aws"].Expr)
					var v string
					if e := items["version"]; e != nil {
						v, _ = literalString(e)
					}
					if !strings.HasPrefix(v, "~> "+providerMajor+".") {
						t.Errorf("%s: aws provider version %q, want \"~> %s.x\"", m.dir, v, providerMajor)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: no required_providers aws", m.dir)
		}
	})
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"terraform providers lock", ".terraform.lock.hcl"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("README.md does not mention %q (the lock-file step of the first init)", want)
		}
	}
}

// providerMajor is the AWS provider major version the configuration is written for.
const providerMajor = "5"

// TestEdgeProtection: issue 48 item 8. The cdn option is off by default; when on,
// CloudFront with a per-client-IP WAF rate rule fronts the resolver, nothing is
// cached, and short URLs go through it unless a proven custom domain is used.
func TestEdgeProtection(t *testing.T) {
	for _, env := range envNames {
		m := mustLoad(t, filepath.Join("envs", env))
		if v, ok := literalBool(exprOf(m.variables["cdn_enabled"].Body.Attributes["default"])); !ok || v {
			t.Errorf("%s: cdn_enabled must default to false", env)
		}
	}
	cdn := mustLoad(t, filepath.Join("modules", "cdn"))
	waf := cdn.resources["aws_wafv2_web_acl.this"]
	if waf == nil {
		t.Fatal("modules/cdn: no aws_wafv2_web_acl.this")
	}
	if scope, _ := literalString(exprOf(waf.Body.Attributes["scope"])); scope != "CLOUDFRONT" {
		t.Errorf("web ACL scope %q, want CLOUDFRONT", scope)
	}
	if r := refsWithLocals(cdn, exprOf(waf.Body.Attributes["provider"])); !r["aws.us_east_1"] {
		t.Error("the CloudFront web ACL must be created with the aws.us_east_1 provider")
	}
	perIP := false
	hclsyntax.VisitAll(waf.Body, func(n hclsyntax.Node) hcl.Diagnostics {
		if b, ok := n.(*hclsyntax.Block); ok && b.Type == "rate_based_statement" {
			key, _ := literalString(exprOf(b.Body.Attributes["aggregate_key_type"]))
			perIP = key == "IP" && refsWithLocals(cdn, exprOf(b.Body.Attributes["limit"]))["var.rate_limit_per_5_minutes"]
		}
		return nil
	})
	if !perIP {
		t.Error("the web ACL needs a rate_based_statement with aggregate_key_type = \"IP\" and limit = var.rate_limit_per_5_minutes")
	}
	dist := cdn.resources["aws_cloudfront_distribution.this"]
	if dist == nil {
		t.Fatal("modules/cdn: no aws_cloudfront_distribution.this")
	}
	if r := refsWithLocals(cdn, exprOf(dist.Body.Attributes["web_acl_id"])); !r["aws_wafv2_web_acl.this.arn"] {
		t.Error("the distribution must attach the web ACL (web_acl_id)")
	}
	if p := cdn.data["aws_cloudfront_cache_policy.disabled"]; p == nil {
		t.Error("no cache policy data source")
	} else if name, _ := literalString(exprOf(p.Body.Attributes["name"])); name != "Managed-CachingDisabled" {
		t.Errorf("cache policy %q: every click must reach the resolver (Managed-CachingDisabled)", name)
	}

	stack := mustLoad(t, stackDir)
	call := stack.calls["cdn"]
	if call == nil || !refsWithLocals(stack, exprOf(call.Body.Attributes["count"]))["var.cdn_enabled"] {
		t.Fatal("the stack must call modules/cdn counted on var.cdn_enabled")
	}
	api := cty.ObjectVal(map[string]cty.Value{"api_endpoint": cty.StringVal("https://abc.execute-api.us-east-1.amazonaws.com")})
	for _, c := range []struct {
		cdn, routable bool
		want          string
	}{
		{false, false, "https://abc.execute-api.us-east-1.amazonaws.com"},
		{true, false, "https://d111.cloudfront.net"},
		{true, true, "https://s.example.com"},
		{false, true, "https://s.example.com"},
	} {
		cdnOut := cty.EmptyTupleVal
		if c.cdn {
			cdnOut = cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"url": cty.StringVal("https://d111.cloudfront.net")})})
		}
		ev := newEvaluator(stack, map[string]cty.Value{
			"cdn_enabled": cty.BoolVal(c.cdn), "custom_domain_routable": cty.BoolVal(c.routable), "custom_domain_name": cty.StringVal("s.example.com"),
		}, map[string]cty.Value{"cdn": cdnOut, "resolver_api": api})
		got, err := ev.local("resolver_base_url")
		if err != nil {
			t.Fatal(err)
		}
		if got.AsString() != c.want {
			t.Errorf("cdn %v, routable %v: resolver base URL %q, want %q", c.cdn, c.routable, got.AsString(), c.want)
		}
	}
}
