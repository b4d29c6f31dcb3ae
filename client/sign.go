package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// service is the SigV4 service of the management API, on AWS (API Gateway's
// AWS_IAM authorization) and locally.
const service = "execute-api"

// signer signs each request the generated client builds, so every attempt of a
// retried call carries a signature of its own time.
type signer struct {
	creds  aws.CredentialsProvider
	region string
	v4     *v4.Signer
}

// sign is a management.RequestEditorFn: it hashes the body into
// X-Amz-Content-Sha256, which API Gateway and `linoone serve` both check, and
// signs every header the request has by now (Idempotency-Key included).
func (s *signer) sign(ctx context.Context, req *http.Request) error {
	body, err := readRequestBody(req)
	if err != nil {
		return fmt.Errorf("sign %s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("sign %s %s: credentials: %w", req.Method, req.URL.Path, err)
	}
	if err := s.v4.SignHTTP(ctx, creds, req, hash, service, s.region, time.Now()); err != nil {
		return fmt.Errorf("sign %s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// readRequestBody returns the body of req and leaves it readable again. The
// generated client's bodies are in memory (GetBody is set), so this reads a copy.
func readRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody == nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		return b, nil
	}
	rc, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
