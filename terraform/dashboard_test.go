package terraform_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Issue 45: the dashboard and the saved Logs Insights queries name only metrics and
// log fields that exist. The names the code emits are read from the Go source (never
// copied here), so renaming a metric or a log key fails these tests.

// awsMetrics are the AWS namespace metrics the stack's resources produce, with the
// dimension each is read by and the stack input that dimension's value must be.
var awsMetrics = map[string]struct {
	metrics   []string
	dimension string
	inputs    []string // dashboard/alarms variables whose values name such a resource
}{
	"AWS/ApiGateway": {[]string{"Count", "4xx", "5xx", "Latency", "IntegrationLatency", "DataProcessed"}, "ApiId", []string{"resolver_api_id", "management_api_id"}},
	"AWS/Lambda":     {[]string{"Invocations", "Errors", "Throttles", "Duration", "ConcurrentExecutions"}, "FunctionName", []string{"function_names"}},
	"AWS/SQS": {[]string{"ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible", "ApproximateAgeOfOldestMessage",
		"NumberOfMessagesSent", "NumberOfMessagesReceived", "NumberOfMessagesDeleted"}, "QueueName", []string{"click_dlq_name", "click_deadletter_name"}},
}

// emitted are the EMF metrics the code emits.
type emitted struct {
	counts    map[string]bool          // by Environment alone
	latencies map[string]latencyMetric // by Environment and one dimension more
}

// latencyMetric is a metric of metrics.NewLatency: its second dimension and the
// values the code gives it.
type latencyMetric struct {
	dimension string
	values    []string
}

func (e emitted) names() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for n := range e.counts {
			if !yield(n) {
				return
			}
		}
		for n := range e.latencies {
			if !yield(n) {
				return
			}
		}
	})
}

// emittedMetrics returns the EMF metrics the code emits: the Name of every
// metrics.Metric literal in the service's non-test Go code and the metric of every
// metrics.NewLatency call, constants resolved from packages metrics and persist.
func emittedMetrics(t *testing.T) emitted {
	t.Helper()
	consts := map[string]string{}
	persistConsts := map[string]string{}
	var persistCalls []ast.Expr // the elements of persist.Calls
	var lits []ast.Expr
	var latencyCalls []*ast.CallExpr
	walkGo(t, func(path string, f *ast.File) {
		dir := filepath.ToSlash(filepath.Dir(path))
		inMetrics, inPersist := dir == "../internal/aws/metrics", dir == "../internal/persist"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewLatency" {
					if x, _ := sel.X.(*ast.Ident); x != nil && x.Name == "metrics" {
						latencyCalls = append(latencyCalls, n)
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i >= len(n.Values) {
						continue
					}
					if s, ok := stringLit(n.Values[i]); ok && inMetrics {
						consts[name.Name] = s
					} else if ok && inPersist {
						persistConsts[name.Name] = s
					}
					if cl, ok := n.Values[i].(*ast.CompositeLit); ok && inPersist && name.Name == "Calls" {
						persistCalls = cl.Elts
					}
				}
			case *ast.CompositeLit:
				elems := []ast.Expr{n}
				if arr, ok := n.Type.(*ast.ArrayType); ok && isMetricType(arr.Elt, inMetrics) {
					elems = n.Elts // []Metric{{Name: …}, …}
				} else if !isMetricType(n.Type, inMetrics) {
					return true
				}
				for _, el := range elems {
					cl, ok := el.(*ast.CompositeLit)
					if !ok {
						continue
					}
					for _, field := range cl.Elts {
						if kv, ok := field.(*ast.KeyValueExpr); ok {
							if k, _ := kv.Key.(*ast.Ident); k != nil && k.Name == "Name" {
								lits = append(lits, kv.Value)
							}
						}
					}
				}
			}
			return true
		})
	})
	out := map[string]bool{}
	for _, e := range lits {
		switch e := e.(type) {
		case *ast.Ident:
			out[consts[e.Name]] = true
		case *ast.SelectorExpr:
			out[consts[e.Sel.Name]] = true
		default:
			if s, ok := stringLit(e); ok {
				out[s] = true
			}
		}
	}
	delete(out, "")
	if len(out) == 0 {
		t.Fatal("no metrics.Metric literal found in the code")
	}
	return emitted{counts: out, latencies: latencyMetrics(t, latencyCalls, consts, persistConsts, persistCalls)}
}

// latencyMetrics resolves the metric, dimension and values of metrics.NewLatency
// calls: constants of package metrics, and of package persist for the values
// (persist.Calls... is the elements of its literal).
func latencyMetrics(t *testing.T, calls []*ast.CallExpr, consts, persistConsts map[string]string, persistCalls []ast.Expr) map[string]latencyMetric {
	t.Helper()
	lat := map[string]latencyMetric{}
	for _, call := range calls {
		if len(call.Args) < 6 {
			t.Fatalf("metrics.NewLatency call with %d arguments", len(call.Args))
		}
		name, dim := constOf(call.Args[3], consts), constOf(call.Args[4], consts)
		var values []string
		for _, a := range call.Args[5:] {
			if sel, ok := a.(*ast.SelectorExpr); ok && sel.Sel.Name == "Calls" && call.Ellipsis.IsValid() {
				for _, e := range persistCalls {
					values = append(values, constOf(e, persistConsts))
				}
				continue
			}
			values = append(values, constOf(a, persistConsts))
		}
		if name == "" || dim == "" || len(values) == 0 || slices.Contains(values, "") {
			t.Fatalf("metrics.NewLatency call at offset %d: metric %q by %q = %q: not resolved from the source", call.Pos(), name, dim, values)
		}
		lat[name] = latencyMetric{dimension: dim, values: values}
	}
	if len(lat) == 0 {
		t.Fatal("no metrics.NewLatency call found in the code")
	}
	return lat
}

// constOf resolves a string literal, or a constant of consts by its name.
func constOf(e ast.Expr, consts map[string]string) string {
	switch e := e.(type) {
	case *ast.Ident:
		return consts[e.Name]
	case *ast.SelectorExpr:
		return consts[e.Sel.Name]
	}
	s, _ := stringLit(e)
	return s
}

// isMetricType reports whether e is the type metrics.Metric (Metric inside package
// metrics).
func isMetricType(e ast.Expr, inMetrics bool) bool {
	switch typ := e.(type) {
	case *ast.Ident:
		return inMetrics && typ.Name == "Metric"
	case *ast.SelectorExpr:
		x, _ := typ.X.(*ast.Ident)
		return x != nil && x.Name == "metrics" && typ.Sel.Name == "Metric"
	}
	return false
}

// walkGo parses every non-test Go file of the service (internal/, lambdas/).
func walkGo(t *testing.T, fn func(path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	for _, root := range []string{"../internal", "../lambdas"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			fn(path, f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// sentinel is the stand-in value of a module input: checks recognise where a
// value came from.
func sentinel(input string) string { return "<" + input + ">" }

// dashboardInputs are sentinel values for the dashboard and alarms modules' inputs.
func dashboardInputs(m *tfModule) map[string]cty.Value {
	fns := map[string]cty.Value{}
	groups := map[string]cty.Value{}
	for _, label := range []string{"issue", "resolve", "replay"} {
		fns[label] = cty.StringVal(sentinel("function_names") + label)
		groups[label] = cty.StringVal(sentinel("log_group_names") + label)
	}
	all := map[string]cty.Value{
		"function_names":            cty.MapVal(fns),
		"log_group_names":           cty.MapVal(groups),
		"access_log_group_names":    cty.ObjectVal(map[string]cty.Value{"resolver": cty.StringVal("<access:resolver>"), "management": cty.StringVal("<access:management>")}),
		"reserved_concurrency":      cty.MapVal(map[string]cty.Value{"resolve": num(300)}),
		"duration_p99_threshold_ms": cty.MapVal(map[string]cty.Value{"resolve": num(1000), "issue": num(3000)}),
		"alarm_arns":                cty.ListVal([]cty.Value{cty.StringVal("arn:aws:cloudwatch:us-east-1:123456789012:alarm:x")}),
		"concurrency_alarm_ratio":   num(0.8),
	}
	vars := map[string]cty.Value{}
	for name := range m.variables {
		if v, ok := all[name]; ok {
			vars[name] = v
			continue
		}
		vars[name] = cty.StringVal(sentinel(name))
	}
	return vars
}

// checkMetric reports a metric row [namespace, metric, dim, value, …] that names a
// metric neither an AWS resource of the stack nor the code produces.
func checkMetric(where string, row []any, emf emitted) error {
	var strs []string
	for _, c := range row {
		if s, ok := c.(string); ok {
			strs = append(strs, s)
		}
	}
	if len(strs) < 4 || len(strs)%2 != 0 {
		return fmt.Errorf("%s: metric %v: want namespace, name and dimension pairs (no \".\" shorthand)", where, row)
	}
	ns, name, dims := strs[0], strs[1], strs[2:]
	if ns == sentinel("metrics_namespace") {
		if len(dims) < 2 || dims[0] != "Environment" || dims[1] != sentinel("environment") {
			return fmt.Errorf("%s: %s must be read by Environment = var.environment, got %v", where, name, dims)
		}
		if lat, ok := emf.latencies[name]; ok {
			if len(dims) != 4 || dims[2] != lat.dimension || !slices.Contains(lat.values, dims[3]) {
				return fmt.Errorf("%s: %s must be read by Environment and %s = one of %v, got %v", where, name, lat.dimension, lat.values, dims)
			}
			return nil
		}
		if !emf.counts[name] {
			return fmt.Errorf("%s: %s is not a metric the code emits (emitted: %v)", where, name, emf.names())
		}
		if len(dims) != 2 {
			return fmt.Errorf("%s: %s must be read by Environment = var.environment alone, got %v", where, name, dims)
		}
		return nil
	}
	known, ok := awsMetrics[ns]
	if !ok {
		return fmt.Errorf("%s: namespace %q is neither var.metrics_namespace nor one of the stack's AWS namespaces", where, ns)
	}
	if !slices.Contains(known.metrics, name) {
		return fmt.Errorf("%s: %s has no metric %q", where, ns, name)
	}
	if len(dims) != 2 || dims[0] != known.dimension || !slices.ContainsFunc(known.inputs, func(in string) bool { return strings.HasPrefix(dims[1], sentinel(in)) }) {
		return fmt.Errorf("%s: %s %s must be read by %s = one of %v, got %v", where, ns, name, known.dimension, known.inputs, dims)
	}
	return nil
}

// dashWidget is a widget of the dashboard body.
type dashWidget struct {
	Type       string `json:"type"`
	Properties struct {
		Title   string  `json:"title"`
		Stat    string  `json:"stat"`
		Metrics [][]any `json:"metrics"`
	} `json:"properties"`
}

// expressionOf is the options of a metric math row ([{expression = …}]), else nil.
func expressionOf(row []any) map[string]any {
	if len(row) != 1 {
		return nil
	}
	if m, ok := row[0].(map[string]any); ok && m["expression"] != nil {
		return m
	}
	return nil
}

// statOf is a metric row's statistic: its options' stat, else the widget's.
func statOf(w dashWidget, row []any) string {
	if opts, ok := row[len(row)-1].(map[string]any); ok && opts["stat"] != nil {
		return opts["stat"].(string)
	}
	return w.Properties.Stat
}

// checkExpressions reports a metric math expression of a widget that reads an id
// no metric row of the widget has.
func checkExpressions(where string, rows [][]any) error {
	ids := map[string]bool{}
	for _, row := range rows {
		if opts, ok := row[len(row)-1].(map[string]any); ok && opts["id"] != nil {
			ids[opts["id"].(string)] = true
		}
	}
	for _, row := range rows {
		e := expressionOf(row)
		if e == nil {
			continue
		}
		expr, _ := e["expression"].(string)
		for _, w := range insightsWord.FindAllString(expr, -1) {
			if !ids[w] || w == e["id"] {
				return fmt.Errorf("%s: expression %q reads %q, which is no other metric's id of the widget", where, expr, w)
			}
		}
	}
	return nil
}

// checkHotSetAndPersistWidgets: the hot set's hit rate is a metric math expression
// of its hits and misses, and Persist call latency has p50 and p99 for every kind of
// call the code reports.
func checkHotSetAndPersistWidgets(t *testing.T, widgets []dashWidget, seen map[string]bool, emf emitted) {
	t.Helper()
	if !seen["<metrics_namespace> HotSetHits"] || !seen["<metrics_namespace> HotSetMisses"] {
		t.Error("the dashboard does not read HotSetHits and HotSetMisses")
	}
	if !slices.ContainsFunc(widgets, func(w dashWidget) bool {
		return slices.ContainsFunc(w.Properties.Metrics, func(row []any) bool {
			e := expressionOf(row)
			return e != nil && regexp.MustCompile(`\bhits\s*/\s*\(\s*hits\s*\+\s*misses\s*\)`).MatchString(e["expression"].(string))
		})
	}) {
		t.Error("no widget draws the hot set's hit rate as hits / (hits + misses)")
	}
	for _, op := range emf.latencies["PersistLatency"].values {
		for _, stat := range []string{"p50", "p99"} {
			if !slices.ContainsFunc(widgets, func(w dashWidget) bool {
				return slices.ContainsFunc(w.Properties.Metrics, func(row []any) bool {
					return len(row) == 7 && row[1] == "PersistLatency" && row[5] == op && statOf(w, row) == stat
				})
			}) {
				t.Errorf("the dashboard shows no PersistLatency %s of %s calls", stat, op)
			}
		}
	}
}

func TestDashboardMetricsExist(t *testing.T) {
	emf := emittedMetrics(t)
	m := mustLoad(t, filepath.Join("modules", "dashboard"))
	ev := newEvaluator(m, dashboardInputs(m), nil)
	ev.data = map[string]cty.Value{"aws_region": cty.ObjectVal(map[string]cty.Value{"current": cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("us-east-1")})})}
	body := m.resources["aws_cloudwatch_dashboard.this"]
	if body == nil {
		t.Fatal("modules/dashboard: no aws_cloudwatch_dashboard.this")
	}
	v, err := ev.eval(exprOf(body.Body.Attributes["dashboard_body"]))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Widgets []dashWidget `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(v.AsString()), &dash); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, w := range dash.Widgets {
		if w.Type == "metric" && len(w.Properties.Metrics) == 0 {
			t.Errorf("widget %q shows no metric", w.Properties.Title)
		}
		where := "widget " + strconv.Quote(w.Properties.Title)
		if err := checkExpressions(where, w.Properties.Metrics); err != nil {
			t.Error(err)
		}
		for _, row := range w.Properties.Metrics {
			if expressionOf(row) != nil {
				continue
			}
			if err := checkMetric(where, row, emf); err != nil {
				t.Error(err)
			}
			if len(row) > 1 {
				seen[fmt.Sprint(row[0], " ", row[1])] = true
			}
		}
	}
	checkHotSetAndPersistWidgets(t, dash.Widgets, seen, emf)
	// What issue 45 asks the dashboard to show.
	for _, want := range []string{
		"AWS/ApiGateway Count", "AWS/ApiGateway 4xx", "AWS/ApiGateway 5xx", "AWS/ApiGateway Latency",
		"AWS/Lambda Duration", "AWS/Lambda Errors", "AWS/Lambda Throttles", "AWS/Lambda ConcurrentExecutions",
		"<metrics_namespace> FactsPublished", "<metrics_namespace> FactsDeadLettered", "<metrics_namespace> FactsBuffered", "<metrics_namespace> FactsDropped",
		"AWS/SQS ApproximateNumberOfMessagesVisible", "AWS/SQS ApproximateAgeOfOldestMessage",
		"<metrics_namespace> FactsReplayed", "<metrics_namespace> FactsReplayFailed",
	} {
		if !seen[want] {
			t.Errorf("the dashboard shows no %s", want)
		}
	}
	// The stack feeds each input from the resource it names.
	stack := mustLoad(t, stackDir)
	call := stack.calls["dashboard"]
	if call == nil {
		t.Fatal("the stack does not call the dashboard module")
	}
	for input, ref := range map[string]string{
		"resolver_api_id": "module.resolver_api.api_id", "management_api_id": "module.management_api.api_id",
		"click_dlq_name": "module.click_dlq.queue_name", "click_deadletter_name": "module.click_dlq.deadletter_name",
		"metrics_namespace": "var.metrics_namespace", "environment": "var.environment",
	} {
		if !refsWithLocals(stack, exprOf(call.Body.Attributes[input]))[ref] {
			t.Errorf("module \"dashboard\": %s must be %s", input, ref)
		}
	}
	if out := stack.outputs["dashboard_url"]; out == nil || !refsWithLocals(stack, exprOf(out.Body.Attributes["value"]))["module.dashboard.dashboard_url"] {
		t.Error("the stack must output dashboard_url = module.dashboard.dashboard_url")
	}
}

// TestAlarmsPeopleCanActOn: issue 48 item 6. The alarms the issue lists exist, name
// real metrics, fire only on sustained breaches (datapoints_to_alarm) except where
// one breach is already a loss, and README.md says what each means and what to do.
func TestAlarmsPeopleCanActOn(t *testing.T) {
	emf := emittedMetrics(t)
	m := mustLoad(t, filepath.Join("modules", "alarms"))
	ev := newEvaluator(m, dashboardInputs(m), nil)
	v, err := ev.local("alarms")
	if err != nil {
		t.Fatal(err)
	}
	var alarms map[string]struct {
		Namespace  string            `json:"namespace"`
		Metric     string            `json:"metric_name"`
		Dimensions map[string]string `json:"dimensions"`
		Periods    float64           `json:"evaluation_periods"`
		Datapoints float64           `json:"datapoints_to_alarm"`
		Period     float64           `json:"period"`
	}
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &alarms); err != nil {
		t.Fatal(err)
	}
	atOnce := map[string]bool{"click-deadletter-depth": true, "facts-buffered": true, "facts-dropped": true, "facts-lost-to-log": true}
	for label, a := range alarms {
		var dims []any
		for _, k := range slices.Sorted(maps.Keys(a.Dimensions)) {
			dims = append(dims, k, a.Dimensions[k])
		}
		if err := checkMetric("alarm "+label, append([]any{a.Namespace, a.Metric}, dims...), emf); err != nil {
			t.Error(err)
		}
		if a.Datapoints < 1 || a.Datapoints > a.Periods {
			t.Errorf("alarm %s: datapoints_to_alarm %v of %v periods", label, a.Datapoints, a.Periods)
		}
		if !atOnce[label] && a.Datapoints < 2 {
			t.Errorf("alarm %s fires on one datapoint: want a sustained breach (datapoints_to_alarm ≥ 2)", label)
		}
	}
	// No deny list at all means takedowns are off: it pages on 2 of 3 one-minute
	// periods, sooner than the sustained alarms.
	if a, ok := alarms["denylist-missing"]; !ok {
		t.Error(`no "denylist-missing" alarm`)
	} else if a.Metric != "DenyListMissing" || a.Period != 60 || a.Periods != 3 || a.Datapoints != 2 {
		t.Errorf("alarm denylist-missing: %s over %v of %v periods of %v s, want DenyListMissing over 2 of 3 periods of 60 s", a.Metric, a.Datapoints, a.Periods, a.Period)
	}
	labels := slices.Collect(maps.Keys(alarms))
	labels = append(labels, "resolver-4xx-rate") // the metric-math alarm
	for _, want := range []string{"resolve-duration-p99", "issue-duration-p99", "resolve-concurrency", "management-5xx", "resolver-5xx",
		"replay-failures", "click-deadletter-depth", "resolve-throttles"} {
		if !slices.Contains(labels, want) {
			t.Errorf("no %q alarm", want)
		}
	}
	if a := m.resources["aws_cloudwatch_metric_alarm.resolver_4xx_rate"]; a == nil {
		t.Error("no aws_cloudwatch_metric_alarm.resolver_4xx_rate")
	} else if dp := a.Body.Attributes["datapoints_to_alarm"]; dp == nil {
		t.Error("resolver_4xx_rate: no datapoints_to_alarm")
	}
	// The alarm table of README.md: every alarm, its meaning and its first action.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	header, rows, err := markdownTable(string(readme), "### Alarms")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header, []string{"Alarm", "Means", "First action"}) {
		t.Errorf("alarm table header %q, want Alarm | Means | First action", header)
	}
	listed := map[string]bool{}
	for _, row := range rows {
		for _, name := range backticked(row[0]) {
			listed[name] = true
		}
		if len(row) != 3 || len(row[1]) < 20 || len(row[2]) < 20 {
			t.Errorf("alarm table row %q: want the alarm, what it means and the first action", strings.Join(row, " | "))
		}
	}
	for _, label := range labels {
		generic := label
		for _, fn := range []string{"issue", "resolve", "replay"} {
			if rest, ok := strings.CutPrefix(label, fn+"-"); ok {
				generic = "<fn>-" + rest
			}
		}
		if !listed[label] && !listed[generic] {
			t.Errorf("README.md's alarm table does not explain %s", label)
		}
	}
}

// logKeys returns the keys the code's slog calls write, and the messages they log.
func logKeys(t *testing.T) (keys, messages map[string]bool) {
	t.Helper()
	keys = map[string]bool{"time": true, "level": true, "msg": true} // slog's JSON handler
	messages = map[string]bool{}
	walkCalls(t, func(call *ast.CallExpr, sel *ast.SelectorExpr) {
		if msgAt, ok := logFuncs[sel.Sel.Name]; ok && len(call.Args) > msgAt {
			if s, ok := stringLit(call.Args[msgAt]); ok {
				messages[s] = true
			}
			for i := msgAt + 1; i < len(call.Args); i += 2 {
				if s, ok := stringLit(call.Args[i]); ok {
					keys[s] = true
				}
			}
		}
		if x, _ := sel.X.(*ast.Ident); x != nil && x.Name == "slog" && len(call.Args) > 0 {
			if s, ok := stringLit(call.Args[0]); ok {
				keys[s] = true
			}
		}
	})
	return keys, messages
}

// logFuncs are slog's logging methods, each with the index of its message argument.
var logFuncs = map[string]int{"Debug": 0, "Info": 0, "Warn": 0, "Error": 0, "DebugContext": 1, "InfoContext": 1, "WarnContext": 1, "ErrorContext": 1}

// walkCalls calls f with every method or package-qualified call in the module's Go code.
func walkCalls(t *testing.T, f func(*ast.CallExpr, *ast.SelectorExpr)) {
	walkGo(t, func(_ string, file *ast.File) {
		ast.Inspect(file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					f(call, sel)
				}
			}
			return true
		})
	})
}

// accessLogKeys returns the keys of the http-api module's access log format.
func accessLogKeys(t *testing.T) map[string]bool {
	t.Helper()
	api := mustLoad(t, filepath.Join("modules", "http-api"))
	for _, b := range api.resources["aws_apigatewayv2_stage.this"].Body.Blocks {
		if b.Type != "access_log_settings" {
			continue
		}
		v, err := newEvaluator(api, nil, nil).eval(exprOf(b.Body.Attributes["format"]))
		if err != nil {
			t.Fatal(err)
		}
		var format map[string]string
		if err := json.Unmarshal([]byte(v.AsString()), &format); err != nil {
			t.Fatal(err)
		}
		return map[string]bool(maps.Collect(func(yield func(string, bool) bool) {
			for k := range format {
				if !yield(k, true) {
					return
				}
			}
		}))
	}
	t.Fatal("modules/http-api: no access_log_settings")
	return nil
}

var (
	insightsLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|/(?:[^/\\]|\\.)+/`)
	insightsWord    = regexp.MustCompile(`@?[A-Za-z_][A-Za-z0-9_.]*`)
	insightsMsgEq   = regexp.MustCompile(`\bmsg\s*=\s*"((?:[^"\\]|\\.)*)"`)
	insightsAlias   = regexp.MustCompile(`\bas\s+([A-Za-z_][A-Za-z0-9_]*)`)
	// Logs Insights commands, operators and functions, and the fields it adds.
	insightsReserved = map[string]bool{
		"fields": true, "filter": true, "stats": true, "sort": true, "limit": true, "by": true, "asc": true, "desc": true,
		"and": true, "or": true, "not": true, "like": true, "in": true, "as": true, "display": true, "parse": true, "dedup": true,
		"ispresent": true, "isempty": true, "count": true, "count_distinct": true, "max": true, "min": true, "avg": true, "sum": true,
		"pct": true, "bin": true, "earliest": true, "latest": true,
		"@timestamp": true, "@message": true, "@log": true, "@logStream": true, "@duration": true, "@requestId": true, "@ingestionTime": true,
	}
)

// TestLogQueriesNameRealFields: every field a saved query reads is a key the code
// logs or a key of the access log format, and every message it filters on is one
// the code logs.
func TestLogQueriesNameRealFields(t *testing.T) {
	keys, messages := logKeys(t)
	maps.Copy(keys, accessLogKeys(t))
	m := mustLoad(t, filepath.Join("modules", "dashboard"))
	if m.resources["aws_cloudwatch_query_definition.this"] == nil {
		t.Fatal("modules/dashboard: no aws_cloudwatch_query_definition.this")
	}
	ev := newEvaluator(m, dashboardInputs(m), nil)
	v, err := ev.local("queries")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clicks-dead-lettered", "failed-redirects", "slowest-persist-bound-requests", "token-history"}
	var got []string
	for it := v.ElementIterator(); it.Next(); {
		k, q := it.Element()
		name := k.AsString()
		got = append(got, name)
		query := q.GetAttr("query").AsString()
		for _, mm := range insightsMsgEq.FindAllStringSubmatch(query, -1) {
			if !messages[mm[1]] {
				t.Errorf("query %s filters on msg %q, which the code never logs", name, mm[1])
			}
		}
		aliases := map[string]bool{}
		for _, a := range insightsAlias.FindAllStringSubmatch(query, -1) {
			aliases[a[1]] = true
		}
		for _, w := range insightsWord.FindAllString(insightsLiteral.ReplaceAllString(query, " "), -1) {
			if !insightsReserved[w] && !aliases[w] && !keys[w] {
				t.Errorf("query %s reads field %q, which no log line of the code or the access log has", name, w)
			}
		}
		if q.GetAttr("log_groups").LengthInt() == 0 {
			t.Errorf("query %s reads no log group", name)
		}
	}
	if diff := slices.Compare(want, slices.Sorted(slices.Values(got))); diff != 0 {
		t.Errorf("saved queries %v, want %v", got, want)
	}
}

// logCallKeys returns, for each message the code's slog calls log, the keys of the
// calls that log it.
func logCallKeys(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	walkCalls(t, func(call *ast.CallExpr, sel *ast.SelectorExpr) {
		msgAt, ok := logFuncs[sel.Sel.Name]
		if !ok || len(call.Args) <= msgAt {
			return
		}
		msg, ok := stringLit(call.Args[msgAt])
		if !ok {
			return
		}
		if out[msg] == nil {
			out[msg] = map[string]bool{}
		}
		for i := msgAt + 1; i < len(call.Args); i += 2 {
			if s, ok := stringLit(call.Args[i]); ok {
				out[msg][s] = true
			}
		}
	})
	return out
}

// TestTokenHistoryFollowsAClick: "what happened to token X" (issue 45) finds a
// click past the redirect. Every line the code logs about one click in the DLQ and
// replay paths carries short_url_token, the field issuance and the resolver log it
// under; the saved query filters on that field and reads the log groups where those
// lines land: resolve's (the click DLQ path runs in the resolver), replay's, issue's
// and both access logs.
func TestTokenHistoryFollowsAClick(t *testing.T) {
	calls := logCallKeys(t)
	for _, msg := range []string{
		"short url issued",         // issuance (management API)
		"click fact dead-lettered", // the click DLQ took it
		"click facts buffered in memory: publish and dead-letter both failed", // the DLQ send failed too
		"click fact replayed", // replay (Lambda)
		"click fact replay failed: left to redrive",
		"dlq replay failed; message kept",                         // replay (local DLQ)
		"persist refused a click fact; kept whole, not delivered", // the local bus consumer
	} {
		keys, ok := calls[msg]
		if !ok {
			t.Errorf("the code no longer logs %q: update this list", msg)
			continue
		}
		if !keys["short_url_token"] {
			t.Errorf("the line %q does not carry short_url_token", msg)
		}
	}

	m := mustLoad(t, filepath.Join("modules", "dashboard"))
	v, err := newEvaluator(m, dashboardInputs(m), nil).local("queries")
	if err != nil {
		t.Fatal(err)
	}
	q := v.GetAttr("token-history")
	query := q.GetAttr("query").AsString()
	if !regexp.MustCompile(`(?m)^\s*\|\s*filter\s+short_url_token\s*=\s*"XXXXXXXXXX"`).MatchString(query) {
		t.Errorf("token-history does not filter on short_url_token = \"XXXXXXXXXX\":\n%s", query)
	}
	if !regexp.MustCompile(`(?m)^\s*fields\b.*\bshort_url_token\b`).MatchString(query) {
		t.Errorf("token-history does not show short_url_token:\n%s", query)
	}
	var groups []string
	for it := q.GetAttr("log_groups").ElementIterator(); it.Next(); {
		_, g := it.Element()
		groups = append(groups, g.AsString())
	}
	for _, want := range []string{sentinel("log_group_names") + "resolve", sentinel("log_group_names") + "replay",
		sentinel("log_group_names") + "issue", "<access:resolver>", "<access:management>"} {
		if !slices.Contains(groups, want) {
			t.Errorf("token-history does not read %s (reads %v)", want, groups)
		}
	}
}
