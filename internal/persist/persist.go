// Package persist is the HTTP client of Persist, the identity-hashed graph store:
// synchronous GraphSON v3 ingest and Gremlin queries answered in the Gremlin Server
// HTTP shape. It implements the domain's Store port. User input reaches Gremlin only
// as bindings, or — for servers that ignore bindings (Amazon Neptune) — as a quoted
// literal after it passed the token whitelist; target URLs never enter a query.
package persist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/linoone/linoone/internal/graphson"
	"github.com/linoone/linoone/internal/shorturl"
)

const (
	gremlinAccept = "application/vnd.gremlin-v3.0+json"
	maxResponse   = 4 << 20

	lookupQuery = "g.V().hasLabel('short_url').has('short_url_token', %s).limit(1)" +
		".project('short_url_token','short_url_path','target_url')" +
		".by('short_url_token').by('short_url_path').by('target_url')"
	clicksQuery = "g.V().hasLabel('short_url').has('short_url_token', %s).limit(1)" +
		".project('short_url_token','clicks')" +
		".by('short_url_token').by(__.outE('short_url_visited').count())"
)

// ErrRejected reports a request Persist refused (4xx): a bug on our side or a
// Persist that does not speak the contract. It also wraps shorturl.ErrUnavailable,
// since the operation did not happen.
var ErrRejected = errors.New("persist rejected the request")

// ErrInvalidDocument reports a request Persist refused for its content (HTTP 400 or
// 422): sending it again cannot succeed, unlike a refusal for authentication,
// routing or size. It also wraps ErrRejected.
var ErrInvalidDocument = errors.New("persist refused the document as invalid")

// SigV4 signs Persist calls (on AWS, with the Lambda role's credentials).
type SigV4 struct {
	Credentials aws.CredentialsProvider
	Region      string
	Service     string // default "execute-api"
}

// Config configures a Client.
type Config struct {
	BaseURL        string        // e.g. http://127.0.0.1:8082 or https://…/prod
	HTTPClient     *http.Client  // default: a pooled client
	Timeout        time.Duration // per call; default 2s
	SigV4          *SigV4        // nil: unsigned
	InlineLiterals bool          // Neptune mode: tokens inlined as quoted literals
}

// Client talks to one Persist endpoint. It is safe for concurrent use.
type Client struct {
	ingestURL  string
	gremlinURL string
	http       *http.Client
	timeout    time.Duration
	sigv4      *SigV4
	signer     *v4.Signer
	inline     bool
}

var _ shorturl.Store = (*Client)(nil)

// New checks the configuration and builds a Client.
func New(c Config) (*Client, error) {
	base := strings.TrimRight(c.BaseURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("persist base url %q must be an http(s) URL", c.BaseURL)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        512,
			MaxIdleConnsPerHost: 512,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		}}
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	cl := &Client{ingestURL: base + "/persist/ingest", gremlinURL: base + "/persist/gremlin", http: c.HTTPClient, timeout: c.Timeout, inline: c.InlineLiterals}
	if c.SigV4 != nil {
		s := *c.SigV4
		if s.Credentials == nil || s.Region == "" {
			return nil, errors.New("persist sigv4 signing needs credentials and a region")
		}
		if s.Service == "" {
			s.Service = "execute-api"
		}
		cl.sigv4, cl.signer = &s, v4.NewSigner()
	}
	return cl, nil
}

// Lookup finds the short URL of a token. It never returns a short URL whose token is
// not the one asked for.
func (c *Client) Lookup(ctx context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	row, err := c.tokenQuery(ctx, lookupQuery, tok)
	if err != nil {
		return shorturl.ShortURL{}, err
	}
	u := shorturl.ShortURL{Token: tok}
	u.Path, _ = row["short_url_path"].(string)
	u.Target, _ = row["target_url"].(string)
	if got, _ := row["short_url_token"].(string); got != string(tok) || u.Target == "" {
		return shorturl.ShortURL{}, fmt.Errorf("token %s: persist answered a vertex without it or without a target: %w", tok, shorturl.ErrNotFound)
	}
	return u, nil
}

// Clicks counts the short_url_visited edges of a token's short URL.
func (c *Client) Clicks(ctx context.Context, tok shorturl.Token) (int64, error) {
	row, err := c.tokenQuery(ctx, clicksQuery, tok)
	if err != nil {
		return 0, err
	}
	n, ok := row["clicks"].(int64)
	if !ok || n < 0 {
		return 0, fmt.Errorf("token %s: persist answered clicks %v: %w", tok, row["clicks"], ErrRejected)
	}
	return n, nil
}

// tokenQuery runs a query whose only input is the token and returns its first row.
func (c *Client) tokenQuery(ctx context.Context, query string, tok shorturl.Token) (map[string]any, error) {
	if !shorturl.IsToken(string(tok)) { // the whitelist that makes inlining safe
		return nil, shorturl.ErrInvalidToken
	}
	var body []byte
	if c.inline {
		body = gremlinBody(fmt.Sprintf(query, "'"+string(tok)+"'"), "")
	} else {
		body = gremlinBody(fmt.Sprintf(query, "token"), string(tok))
	}
	data, err := c.gremlin(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("token %s: %w", tok, err)
	}
	rows, ok := data.([]any)
	if !ok {
		return nil, fmt.Errorf("token %s: result data is %T, want g:List: %w", tok, data, errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	if len(rows) == 0 {
		return nil, shorturl.ErrNotFound
	}
	row, ok := rows[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("token %s: result row is %T, want g:Map: %w", tok, rows[0], errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	return row, nil
}

func gremlinBody(query, token string) []byte {
	b := make([]byte, 0, len(query)+64)
	b = append(b, `{"gremlin":`...)
	b, _ = appendJSONString(b, query)
	if token != "" {
		b = append(b, `,"bindings":{"token":"`...)
		b = append(b, token...) // a checked token: base62 only
		b = append(b, `"}`...)
	}
	return append(b, '}')
}

func appendJSONString(b []byte, s string) ([]byte, error) {
	q, err := json.Marshal(s)
	return append(b, q...), err
}

type gremlinResponse struct {
	Status struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`
	Result struct {
		Data json.RawMessage `json:"data"`
	} `json:"result"`
}

func (c *Client) gremlin(ctx context.Context, body []byte) (any, error) {
	resp, err := c.post(ctx, c.gremlinURL, body, gremlinAccept)
	if err != nil {
		return nil, err
	}
	var gr gremlinResponse
	if err := json.Unmarshal(resp, &gr); err != nil {
		return nil, fmt.Errorf("persist gremlin: undecodable response: %v: %w", err, errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	if gr.Status.Code != 200 && gr.Status.Code != 204 {
		return nil, fmt.Errorf("persist gremlin: status %d %q: %w", gr.Status.Code, gr.Status.Message, errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	if gr.Status.Code == 204 || len(gr.Result.Data) == 0 {
		return []any{}, nil
	}
	data, err := graphson.DecodeValue(gr.Result.Data)
	if err != nil {
		return nil, fmt.Errorf("persist gremlin: %v: %w", err, errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	return data, nil
}

// Save ingests the short URL's GraphSON artifact and returns once Persist
// acknowledged it.
func (c *Client) Save(ctx context.Context, u shorturl.ShortURL) error {
	doc, err := u.Artifact()
	if err != nil {
		return err
	}
	return c.Ingest(ctx, doc)
}

// Ingest posts a GraphSON v3 document to /persist/ingest synchronously.
func (c *Client) Ingest(ctx context.Context, doc graphson.Document) error {
	body, err := doc.AppendJSON(make([]byte, 0, 1024))
	if err != nil {
		return fmt.Errorf("encode graphson: %w", err)
	}
	return c.IngestRaw(ctx, body)
}

// IngestRaw posts an already encoded GraphSON v3 document.
func (c *Client) IngestRaw(ctx context.Context, body []byte) error {
	ack, err := c.post(ctx, c.ingestURL, body, "application/json")
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if !json.Valid(ack) { // a 200 that is not Persist's answer (a proxy's page) is no acknowledgement
		return fmt.Errorf("ingest: acknowledgement is not JSON: %s: %w", snippet(ack), errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	return nil
}

// post sends body and returns the 200 response body; every other outcome is an error
// wrapping shorturl.ErrUnavailable (and ErrRejected for a 4xx).
func (c *Client) post(ctx context.Context, url string, body []byte, accept string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("persist request: %v: %w", err, shorturl.ErrUnavailable)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.signer != nil {
		if err := c.sign(ctx, req, body); err != nil {
			return nil, err
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("persist %s: %v: %w", req.URL.Path, err, shorturl.ErrUnavailable)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("persist %s: read response: %v: %w", req.URL.Path, err, shorturl.ErrUnavailable)
	}
	if len(b) > maxResponse {
		return nil, fmt.Errorf("persist %s: response larger than %d bytes: %w", req.URL.Path, maxResponse, errors.Join(ErrRejected, shorturl.ErrUnavailable))
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return b, nil
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity:
		return nil, fmt.Errorf("persist %s: HTTP %d: %s: %w", req.URL.Path, resp.StatusCode, snippet(b), errors.Join(ErrInvalidDocument, ErrRejected, shorturl.ErrUnavailable))
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests:
		return nil, fmt.Errorf("persist %s: HTTP %d: %s: %w", req.URL.Path, resp.StatusCode, snippet(b), errors.Join(ErrRejected, shorturl.ErrUnavailable))
	default:
		return nil, fmt.Errorf("persist %s: HTTP %d: %s: %w", req.URL.Path, resp.StatusCode, snippet(b), shorturl.ErrUnavailable)
	}
}

func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	creds, err := c.sigv4.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("persist credentials: %v: %w", err, shorturl.ErrUnavailable)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, creds, req, hash, c.sigv4.Service, c.sigv4.Region, time.Now()); err != nil {
		return fmt.Errorf("sign persist request: %v: %w", err, shorturl.ErrUnavailable)
	}
	return nil
}

func snippet(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
