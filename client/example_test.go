package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/linoone/linoone/client"
)

// A producer's whole use: make one client, issue short URLs with it. Locally
// `linoone serve` writes its credential pair to credentials.json in its data dir;
// on AWS, leave WithCredentials out and the AWS default credential chain signs.
func Example() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	u, err := c.Shorten(context.Background(), "https://example.com/landing?message_id=msg_123")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.ShortURL == "http://"+resolverAddr+"/"+u.Token, len(u.Token))
	// Output: true 10
}

// An Idempotency-Key that names the thing the short URL is for (an order, a
// message) makes the call safe to make again, from any process: the second call
// returns the first's short URL and writes nothing.
func ExampleWithIdempotencyKey() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	key := fmt.Sprintf("order-%d", time.Now().UnixNano()) // the order's own id
	first, err := c.Shorten(ctx, "https://example.com/orders/4711", client.WithIdempotencyKey(key))
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Shorten(ctx, "https://example.com/orders/4711", client.WithIdempotencyKey(key))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.Token == first.Token, first.Replayed, again.Replayed)
	// Output: true false true
}

// A refusal is a *client.Problem, which errors.Is matches against the sentinels.
func ExampleProblem() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, target := range []string{"ftp://example.com/file", "https://www." + blockedDomain + "/"} {
		_, err := c.Shorten(ctx, target)
		var p *client.Problem
		switch {
		case errors.Is(err, client.ErrTargetInvalid) && errors.As(err, &p):
			fmt.Println("invalid:", p.Status, p.Type)
		case errors.Is(err, client.ErrTargetBlocked) && errors.As(err, &p):
			fmt.Println("blocked:", p.Status, p.Type)
		default:
			log.Fatalf("%s: %v", target, err)
		}
	}
	// Output:
	// invalid: 400 urn:linoone:problem:target-url-scheme
	// blocked: 422 urn:linoone:problem:target-url-blocked
}

// ShortenBatch takes any number of URLs and answers one result per URL, in input
// order; a URL the API refuses fails alone.
func ExampleClient_ShortenBatch() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	targets := []string{"https://example.com/a", "javascript:alert(1)", "https://example.com/c"}
	results, err := c.ShortenBatch(context.Background(), targets)
	if err != nil {
		log.Fatal(err) // a request failed whole, after its retries
	}
	for _, r := range results {
		var p *client.Problem
		if errors.As(r.Err, &p) {
			fmt.Println(r.TargetURL, "refused:", p.Code())
			continue
		}
		fmt.Println(r.TargetURL, "issued:", strings.HasSuffix(r.ShortURL, "/"+r.Token))
	}
	// Output:
	// https://example.com/a issued: true
	// javascript:alert(1) refused: target-url-scheme
	// https://example.com/c issued: true
}

// Inspect reads where a token goes without visiting it; an unknown token is
// ErrNotFound.
func ExampleClient_Inspect() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	u, err := c.Shorten(ctx, "https://example.com/landing?message_id=msg_124")
	if err != nil {
		log.Fatal(err)
	}
	link, err := c.Inspect(ctx, u.Token)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(link.TargetURL, link.ShortURL == u.ShortURL)
	_, err = c.Inspect(ctx, "AAAAAAAAAA")
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// https://example.com/landing?message_id=msg_124 true
	// true
}

// Stats counts a short URL's clicks, all time and per UTC day of a window.
func ExampleClient_Stats() {
	c, err := client.New(endpoint, client.WithCredentials(accessKeyID, secretAccessKey))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	u, err := c.Shorten(ctx, "https://example.com/never-clicked")
	if err != nil {
		log.Fatal(err)
	}
	month, err := c.Stats(ctx, u.Token) // the last 30 days
	if err != nil {
		log.Fatal(err)
	}
	to := time.Now().UTC()
	week, err := c.Stats(ctx, u.Token, client.WithWindow(to.AddDate(0, 0, -6), to))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(month.Clicks, len(month.ByDay), len(week.ByDay))
	// Output: 0 30 7
}
