// Package producer is the producer side of the CLI: the management API reached
// with the credentials the signing package picks (shorten, inspect, stats), what
// it requires of an answer before printing it, and the bulk import of a file
// through POST /shorten/batch (Import).
package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/signing"
	"github.com/linoone/linoone/internal/foundation/tty"
)

// API is the management API as a command reaches it.
type API struct {
	Client *management.ClientWithResponses
	Base   string // its base URL, as messages show it
	signer string // whose pair signs the requests, for a message when the API refuses it
}

// Connect is the generated management client at endpoint (empty: the configured
// one), signing as the signing package resolves it, each request bounded by
// timeout. It follows no redirect: the transport signs every request it sends, so
// a redirect to another host would be handed a fresh signature (and the body) to
// replay against this API.
func Connect(ctx context.Context, endpoint string, cfg config.Shorten, timeout time.Duration) (API, error) {
	s, err := signing.Resolve(ctx, signing.Request{Endpoint: endpoint, Config: cfg})
	if err != nil {
		return API{}, err
	}
	hc := &http.Client{Timeout: timeout, Transport: s.Transport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	client, err := management.NewClientWithResponses(s.Base, management.WithHTTPClient(hc))
	if err != nil {
		return API{}, fmt.Errorf("management client: %w", err)
	}
	u, err := url.Parse(s.Base)
	if err != nil {
		return API{}, fmt.Errorf("management client: %w", err)
	}
	return API{Client: client, Base: u.Redacted(), signer: s.Source}, nil
}

// TokenOf is the token of a short URL (its last path segment), or s itself.
func TokenOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return path.Base(u.Path)
	}
	return s
}

// Answer is a management API answer as a command reads it: the request it answers,
// as messages name it ("GET http://…/links/7BTadEDkJ8"), its status and its body.
type Answer struct {
	Call   string
	Status int
	Body   []byte
}

// Print prints a management API answer: its JSON as it came with asJSON, else what
// text writes of ok; without ok (another status) it is the problem the answer
// carries. An ok answer must hold what openapi.yaml requires of schema: a proxy or
// another service at a wrong URL answers 200 {"foo":1} too, which the generated
// client decodes as an empty answer.
func Print[T any](stdout io.Writer, asJSON bool, a Answer, schema string, ok *T, text func(*T) error) error {
	if ok == nil {
		return problemError(a)
	}
	if err := checkShape(schema, a.Body); err != nil {
		return fmt.Errorf("unexpected answer from %s: %d %v: %.200q", a.Call, a.Status, err, a.Body)
	}
	if asJSON {
		_, err := stdout.Write(a.Body)
		return err
	}
	return text(ok)
}

// shape is what openapi.yaml requires of an object: its required members and, for a
// member that is an array of objects, the schema of its items.
type shape struct {
	members []string
	items   map[string]string
}

// shapes are the schemas of the answers the CLI reads, by their names in
// openapi.yaml (TestShapesAreTheSpecs keeps them in step with it).
var shapes = map[string]shape{
	"ShortURL":      {members: []string{"token", "short_url"}},
	"Link":          {members: []string{"token", "short_url", "target_url", "blocked"}},
	"LinkPage":      {members: []string{"items"}, items: map[string]string{"items": "Link"}},
	"LinkStats":     {members: []string{"token", "clicks", "unique_visitors", "by_day"}, items: map[string]string{"by_day": "DayClicks"}},
	"DayClicks":     {members: []string{"date", "clicks", "previews", "unique_visitors"}},
	"BatchResponse": {members: []string{"results"}},
}

// checkShape says what body lacks of what schema requires: a JSON object, its
// required members (null counts as missing), and theirs in the items of an array
// member (by_day[2].date).
func checkShape(schema string, body []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return errors.New("is not a JSON object")
	}
	var missing []string
	s := shapes[schema]
	for _, m := range s.members {
		if v, ok := obj[m]; !ok || string(v) == "null" {
			missing = append(missing, m)
		}
	}
	for m, itemSchema := range s.items {
		var items []json.RawMessage
		_ = json.Unmarshal(obj[m], &items) // the generated client decoded it already
		for i, item := range items {
			if err := checkShape(itemSchema, item); err != nil {
				missing = append(missing, fmt.Sprintf("%s[%d] (%v)", m, i, err))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// problemError turns a problem+json answer into a one-line error.
func problemError(a Answer) error {
	var p management.Problem
	if err := json.Unmarshal(a.Body, &p); err == nil && p.Detail != "" {
		return errors.New(problemText(a.Status, p))
	}
	return fmt.Errorf("unexpected answer from %s: %d: %.200q", a.Call, a.Status, a.Body)
}

// problemText is a problem as a message shows it, each of its strings printable.
func problemText(status int, p management.Problem) string {
	return fmt.Sprintf("%d %s: %s (%s)", status, tty.Printable(p.Title), tty.Printable(p.Detail), tty.Printable(p.Type))
}

// Refused is the error of an answer that is not the one asked for: the problem's
// words when it has some, or what came back.
func Refused(a Answer) error { return problemError(a) }
