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

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
)

const (
	gremlinAccept = "application/vnd.gremlin-v3.0+json"
	maxResponse   = 4 << 20

	// The lookup asks for two vertices: a token must name one short URL, and a
	// Persist that holds two with different targets gets no guess.
	lookupQuery = "g.V().hasLabel('short_url').has('short_url_token', %s).limit(2)" +
		".project('short_url_token','short_url_path','target_url')" +
		".by('short_url_token').by('short_url_path').by('target_url')"
)

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
	// Observe, when set, is told the kind (one of Calls) and the duration of every
	// call that reached the network, failed ones included (they are the slow tail).
	Observe func(call string, took time.Duration)
}

// The kinds of Persist call as their durations are reported (Config.Observe): few,
// so that each can be a metric dimension value.
const (
	CallLookup = "lookup" // one token's short URL: a redirect the hot set missed, issuance's checks
	CallIngest = "ingest" // a GraphSON document, one short URL or a batch
	CallQuery  = "query"  // the management API's reads: a link, its visits, a listing, a batch lookup
)

// Calls are every kind of call Config.Observe may be told.
var Calls = []string{CallLookup, CallIngest, CallQuery}

// callOf is the kind of a call of operation op.
func callOf(op string) string {
	switch op {
	case "lookup":
		return CallLookup
	case "ingest":
		return CallIngest
	}
	return CallQuery
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
	observe    func(string, time.Duration)
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
	// A redirect is no answer: followed, it turns an ingest's POST into a GET, whose
	// 200 with any JSON would pass for the ingest's acknowledgement.
	hc := *c.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.HTTPClient = &hc
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	cl := &Client{ingestURL: base + "/persist/ingest", gremlinURL: base + "/persist/gremlin", http: c.HTTPClient, timeout: c.Timeout, inline: c.InlineLiterals, observe: c.Observe}
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
	rows, err := c.tokenQuery(ctx, "lookup", lookupQuery, tok)
	if err != nil {
		return shorturl.ShortURL{}, err
	}
	us, err := shortURLsOf(tok, rows)
	if err != nil {
		return shorturl.ShortURL{}, err
	}
	return us[0], nil
}

// shortURLsOf reads the rows of a token query (at least one): the short URLs stored
// under tok. Each must carry tok and a target, and all the same target: a token
// names one short URL, and a Persist that holds two gets no guess.
func shortURLsOf(tok shorturl.Token, rows []map[string]any) ([]shorturl.ShortURL, error) {
	us := make([]shorturl.ShortURL, len(rows))
	for i, row := range rows {
		u := shorturl.ShortURL{Token: tok}
		u.Path, _ = row["short_url_path"].(string)
		u.Target, _ = row["target_url"].(string)
		if got, _ := row["short_url_token"].(string); got != string(tok) || u.Target == "" {
			// Not "free": the token is held by something issuance did not write.
			return nil, fmt.Errorf("token %s: persist answered a vertex without it or without a target: %w: %w",
				tok, shorturl.ErrNotFound, shorturl.ErrInvalidStored)
		}
		if i > 0 && u.Target != us[0].Target {
			return nil, fmt.Errorf("token %s: persist holds several short_url vertices with different targets: %w: %w",
				tok, shorturl.ErrNotFound, shorturl.ErrInvalidStored)
		}
		us[i] = u
	}
	return us, nil
}

// tokenQuery runs a query whose only input is the token and returns its rows, at
// least one (none is shorturl.ErrNotFound).
func (c *Client) tokenQuery(ctx context.Context, op, query string, tok shorturl.Token) ([]map[string]any, error) {
	if !shorturl.IsToken(string(tok)) { // the whitelist that makes inlining safe
		return nil, shorturl.ErrInvalidToken
	}
	var body []byte
	if c.inline {
		body = gremlinBody(fmt.Sprintf(query, "'"+string(tok)+"'"), "")
	} else {
		body = gremlinBody(fmt.Sprintf(query, "token"), string(tok))
	}
	data, err := c.gremlin(ctx, op, body)
	if err != nil {
		return nil, err
	}
	rows, err := rowsOf(op, data)
	if err != nil {
		return nil, fmt.Errorf("token %s: %w", tok, err)
	}
	if len(rows) == 0 {
		return nil, shorturl.ErrNotFound
	}
	return rows, nil
}

// rowsOf reads the answer of a project() query: a g:List of g:Map rows.
func rowsOf(op string, data any) ([]map[string]any, error) {
	list, ok := data.([]any)
	if !ok {
		return nil, &Error{Op: op, Kind: KindMalformed, Err: fmt.Errorf("result data is %T, want g:List", data)}
	}
	rows := make([]map[string]any, len(list))
	for i, r := range list {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, &Error{Op: op, Kind: KindMalformed, Err: fmt.Errorf("result row is %T, want g:Map", r)}
		}
		rows[i] = m
	}
	return rows, nil
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

func (c *Client) gremlin(ctx context.Context, op string, body []byte) (any, error) {
	resp, err := c.post(ctx, op, c.gremlinURL, body, gremlinAccept)
	if err != nil {
		return nil, err
	}
	return decodeGremlin(op, resp)
}

// decodeGremlin reads a Gremlin Server answer's result data.
func decodeGremlin(op string, resp []byte) (any, error) {
	var gr gremlinResponse
	if err := json.Unmarshal(resp, &gr); err != nil {
		return nil, &Error{Op: op, Kind: KindMalformed, Err: fmt.Errorf("undecodable gremlin response: %v", err)}
	}
	if gr.Status.Code != 200 && gr.Status.Code != 204 {
		return nil, &Error{Op: op, Kind: KindMalformed, Err: fmt.Errorf("gremlin status %d %q", gr.Status.Code, gr.Status.Message)}
	}
	if gr.Status.Code == 204 || len(gr.Result.Data) == 0 {
		return []any{}, nil
	}
	data, err := graphson.DecodeValue(gr.Result.Data)
	if err != nil {
		return nil, &Error{Op: op, Kind: KindMalformed, Err: fmt.Errorf("gremlin result: %v", err)}
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
	ack, err := c.post(ctx, "ingest", c.ingestURL, body, "application/json")
	if err != nil {
		return err
	}
	return checkAck(ack)
}

// checkAck accepts an ingest acknowledgement.
func checkAck(ack []byte) error {
	if !json.Valid(ack) { // a 200 that is not Persist's answer (a proxy's page) is no acknowledgement
		return &Error{Op: "ingest", Status: http.StatusOK, Kind: KindMalformed, Err: fmt.Errorf("acknowledgement is not JSON: %s", snippet(ack))}
	}
	return nil
}

// post sends body and returns the 200 response body; every other outcome is an
// *Error of operation op.
func (c *Client) post(ctx context.Context, op, url string, body []byte, accept string) ([]byte, error) {
	return c.postWithin(ctx, timeoutFor(op, c.timeout), responseLimit(op), op, url, body, accept)
}

// postWithin is post with its own timeout (a batch's calls carry up to 1,000 items).
func (c *Client) postWithin(ctx context.Context, timeout time.Duration, limit int, op, url string, body []byte, accept string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	if c.signer != nil {
		if err := c.sign(ctx, req, body); err != nil {
			return nil, &Error{Op: op, Err: err}
		}
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observed(op, start)
		return nil, &Error{Op: op, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	c.observed(op, start)
	switch {
	case err != nil:
		return nil, &Error{Op: op, Status: resp.StatusCode, Err: fmt.Errorf("read response: %v", err)}
	case len(b) > limit:
		return nil, &Error{Op: op, Status: resp.StatusCode, Kind: KindMalformed, Err: fmt.Errorf("response larger than %d bytes", limit)}
	case resp.StatusCode != http.StatusOK:
		return nil, &Error{Op: op, Status: resp.StatusCode, Kind: kindOf(resp.StatusCode), Err: fmt.Errorf("%s: %s", req.URL.Path, snippet(b))}
	}
	return b, nil
}

// observed tells Config.Observe that a call of operation op started at start ended.
func (c *Client) observed(op string, start time.Time) {
	if c.observe != nil {
		c.observe(callOf(op), time.Since(start))
	}
}

func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	creds, err := c.sigv4.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("credentials: %v", err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, creds, req, hash, c.sigv4.Service, c.sigv4.Region, time.Now()); err != nil {
		return fmt.Errorf("sign request: %v", err)
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
