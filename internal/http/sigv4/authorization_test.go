package sigv4

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAuthorization(t *testing.T) {
	const sig = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	tests := []struct {
		name  string
		value string
		want  authorization
	}{
		{
			name:  "sdk form",
			value: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/execute-api/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=" + sig,
			want:  authorization{AccessKeyID: "AKIDEXAMPLE", Date: "20150830", Region: "us-east-1", Service: "execute-api", SignedHeaders: []string{"content-type", "host", "x-amz-date"}, Signature: sig},
		},
		{
			name:  "no spaces after commas, other order",
			value: "AWS4-HMAC-SHA256 Signature=" + sig + ",SignedHeaders=host;x-amz-date,Credential=AKIDEXAMPLE/20150830/us-east-1/execute-api/aws4_request",
			want:  authorization{AccessKeyID: "AKIDEXAMPLE", Date: "20150830", Region: "us-east-1", Service: "execute-api", SignedHeaders: []string{"host", "x-amz-date"}, Signature: sig},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAuthorization(tc.value)
			if err != nil {
				t.Fatalf("parseAuthorization: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseAuthorization(f *testing.F) {
	const sig = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
	for _, seed := range []string{
		"",
		"AWS4-HMAC-SHA256",
		"AWS4-HMAC-SHA256 ",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=/////, SignedHeaders=;, Signature=",
		"AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f, SignedHeaders=host, Signature=" + sig + ", Signature=" + sig,
		"AWS4-HMAC-SHA256 ,,,===,",
		"Bearer x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		a, err := parseAuthorization(value)
		if err != nil {
			if !errors.Is(err, ErrMalformedAuthorization) {
				t.Fatalf("error %v does not wrap ErrMalformedAuthorization", err)
			}
			if len(value) > len(algorithm)+1 && strings.Contains(err.Error(), value) {
				t.Fatalf("error %q quotes the header", err)
			}
			return
		}
		// What parsed must survive a round trip through the canonical form.
		canonical := algorithm + " Credential=" + a.AccessKeyID + "/" + a.Date + "/" + a.Region + "/" + a.Service + "/" + scopeTerminator +
			", SignedHeaders=" + a.signedHeadersString() + ", Signature=" + a.Signature
		again, err := parseAuthorization(canonical)
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", canonical, err)
		}
		if diff := cmp.Diff(a, again); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}
