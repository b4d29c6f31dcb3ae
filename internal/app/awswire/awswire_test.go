package awswire

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// fakeSSM answers GetParameter from a map and records the names asked for.
type fakeSSM struct {
	values map[string]string
	asked  []string
}

func (f *fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	name := aws.ToString(in.Name)
	f.asked = append(f.asked, name)
	v, ok := f.values[name]
	if !ok {
		return nil, errors.New("ParameterNotFound")
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Value: aws.String(v)}}, nil
}

// TestEscapeRawPath: a path API Gateway handed on decoded is escaped so that the
// adapter's URL holds it whole, as the path the visitor asked for; a path that is
// already one a URL parser takes is left as it is.
func TestEscapeRawPath(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"/7BTadEDkJ8", "/7BTadEDkJ8"},
		{"/%37BTadEDkJ8", "/%37BTadEDkJ8"},
		{"/%", "/%25"},
		{"/a\nb", "/a%0Ab"},
		{"/7BTadEDkJ8#x", "/7BTadEDkJ8%23x"}, // a visitor's /7BTadEDkJ8%23x (found by FuzzResolveEvent)
		{"/7BTadEDkJ8?x", "/7BTadEDkJ8%3Fx"},
	} {
		ev := events.APIGatewayV2HTTPRequest{RawPath: tt.raw}
		EscapeRawPath(&ev)
		if ev.RawPath != tt.want {
			t.Errorf("EscapeRawPath(%q) = %q, want %q", tt.raw, ev.RawPath, tt.want)
		}
		u, err := url.Parse("https://abc123defg.execute-api.us-east-1.amazonaws.com" + ev.RawPath + "?a=b")
		if err != nil || u.Path != tt.raw && tt.raw != tt.want || u.RawQuery != "a=b" {
			t.Errorf("%q: the adapter's URL reads %v (%v)", tt.raw, u, err)
		}
	}
	// A query holding what no URL's query holds raw (found by FuzzResolveEvent).
	for _, tt := range []struct{ raw, want string }{
		{"utm_source=x&b=%20", "utm_source=x&b=%20"},
		{"a=%zz&b", "a=%zz&b"},
		{"a=\x7f&b=\n", "a=%7F&b=%0A"},
		{"a#%", "a%23%"},
	} {
		ev := events.APIGatewayV2HTTPRequest{RawPath: "/7BTadEDkJ8", RawQueryString: tt.raw}
		EscapeRawPath(&ev)
		if ev.RawQueryString != tt.want || ev.RawPath != "/7BTadEDkJ8" {
			t.Errorf("EscapeRawPath of query %q: %q, want %q", tt.raw, ev.RawQueryString, tt.want)
		}
		if _, err := url.Parse("https://abc123defg.execute-api.us-east-1.amazonaws.com/7BTadEDkJ8?" + ev.RawQueryString); err != nil {
			t.Errorf("query %q: the adapter cannot make a request of it: %v", tt.raw, err)
		}
	}
}
