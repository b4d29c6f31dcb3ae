package awswire

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lambdaEnv is what Lambda puts in a function's environment that the SDK reads, as
// in lambdas/rie_test.go: no shared config or credentials file, no IMDS.
func lambdaEnv(t *testing.T) map[string]string {
	home := t.TempDir()
	return map[string]string{
		"AWS_REGION":                  "eu-west-1",
		"AWS_DEFAULT_REGION":          "eu-west-1",
		"AWS_ACCESS_KEY_ID":           "ASIAEXAMPLEKEY",
		"AWS_SECRET_ACCESS_KEY":       "example-secret",
		"AWS_SESSION_TOKEN":           "example-session-token",
		"AWS_LAMBDA_FUNCTION_NAME":    "linoone-issue",
		"HOME":                        home,
		"AWS_CONFIG_FILE":             filepath.Join(home, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
}

// clientView is what a service client takes from an aws.Config and acts on.
type clientView struct {
	Region, BaseEndpoint, AppID string
	MaxAttempts                 int // of the client's retryer
	RetryMode                   aws.RetryMode
	Retryer                     string // its type
	UseFIPS                     aws.FIPSEndpointState
	UseDualStack                aws.DualStackEndpointState
}

// clients builds the SSM, EventBridge and SQS clients the functions build from cfg.
func clients(cfg aws.Config) map[string]clientView {
	view := func(region string, base *string, appID string, r aws.Retryer, mode aws.RetryMode, fips aws.FIPSEndpointState, dual aws.DualStackEndpointState) clientView {
		return clientView{Region: region, BaseEndpoint: aws.ToString(base), AppID: appID, MaxAttempts: r.MaxAttempts(), RetryMode: mode,
			Retryer: fmt.Sprintf("%T", r), UseFIPS: fips, UseDualStack: dual}
	}
	s := ssm.NewFromConfig(cfg).Options()
	e := eventbridge.NewFromConfig(cfg).Options()
	q := sqs.NewFromConfig(cfg).Options()
	return map[string]clientView{
		"ssm":         view(s.Region, s.BaseEndpoint, s.AppID, s.Retryer, s.RetryMode, s.EndpointOptions.UseFIPSEndpoint, s.EndpointOptions.UseDualStackEndpoint),
		"eventbridge": view(e.Region, e.BaseEndpoint, e.AppID, e.Retryer, e.RetryMode, e.EndpointOptions.UseFIPSEndpoint, e.EndpointOptions.UseDualStackEndpoint),
		"sqs":         view(q.Region, q.BaseEndpoint, q.AppID, q.Retryer, q.RetryMode, q.EndpointOptions.UseFIPSEndpoint, q.EndpointOptions.UseDualStackEndpoint),
	}
}

// TestLambdaAWSIsTheDefaultConfig: in a Lambda function's environment, LambdaAWS
// gives the configuration config.LoadDefaultConfig gave: the same fields, the same
// credentials from the same source, and service clients with the same region,
// endpoint overrides and retries.
func TestLambdaAWSIsTheDefaultConfig(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra map[string]string
	}{
		{"lambda", nil},
		{"endpoint overrides, retries and account", map[string]string{
			"AWS_ENDPOINT_URL_SSM":         "http://127.0.0.1:4001",
			"AWS_ENDPOINT_URL_EVENTBRIDGE": "http://127.0.0.1:4002",
			"AWS_ENDPOINT_URL":             "http://127.0.0.1:4000",
			"AWS_MAX_ATTEMPTS":             "1",
			"AWS_RETRY_MODE":               "adaptive",
			"AWS_ACCOUNT_ID":               "123456789012",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := lambdaEnv(t)
			for k, v := range tt.extra {
				env[k] = v
			}
			// LoadDefaultConfig reads the process environment: only env's AWS_ variables.
			for _, kv := range os.Environ() {
				if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			for k, v := range env {
				t.Setenv(k, v)
			}
			ctx := context.Background()
			want, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := LambdaAWS(func(k string) string { return env[k] }, "us-east-1")
			if err != nil {
				t.Fatal(err)
			}

			// Interceptors: LoadDefaultConfig's empty lists, LambdaAWS's none.
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(aws.Config{}, "Credentials", "Logger", "ConfigSources")); diff != "" {
				t.Errorf("aws.Config (-LoadDefaultConfig +LambdaAWS):\n%s", diff)
			}
			if w, g := fmt.Sprintf("%T", want.Logger), fmt.Sprintf("%T", got.Logger); w != g {
				t.Errorf("Logger %s, want %s", g, w)
			}
			if w, g := fmt.Sprintf("%T", want.Credentials), fmt.Sprintf("%T", got.Credentials); w != g {
				t.Errorf("Credentials provider %s, want %s (cached)", g, w)
			}
			wantCreds, err := want.Credentials.Retrieve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			gotCreds, err := got.Credentials.Retrieve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantCreds, gotCreds); diff != "" {
				t.Errorf("credentials (-LoadDefaultConfig +LambdaAWS):\n%s", diff)
			}
			type sources interface{ ProviderSources() []aws.CredentialSource }
			if diff := cmp.Diff(want.Credentials.(sources).ProviderSources(), got.Credentials.(sources).ProviderSources()); diff != "" {
				t.Errorf("credential sources (-LoadDefaultConfig +LambdaAWS):\n%s", diff)
			}
			if diff := cmp.Diff(clients(want), clients(got)); diff != "" {
				t.Errorf("service clients (-LoadDefaultConfig +LambdaAWS):\n%s", diff)
			}
		})
	}
}

func TestLambdaAWSRefusesAnIncompleteEnvironment(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		wantErr []string
	}{
		{"no keys", map[string]string{"AWS_SESSION_TOKEN": "t"}, []string{"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: required"}},
		{"no secret", map[string]string{"AWS_ACCESS_KEY_ID": "k"}, []string{"AWS_SECRET_ACCESS_KEY: required"}},
		{"bad retries", map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_MAX_ATTEMPTS": "three", "AWS_RETRY_MODE": "eager"},
			[]string{`AWS_MAX_ATTEMPTS "three"`, "AWS_RETRY_MODE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LambdaAWS(func(k string) string { return tt.env[k] }, "us-east-1")
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one naming %q", err, want)
				}
			}
		})
	}
}
