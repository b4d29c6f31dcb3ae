package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/producer"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/tty"
)

const linksUsage = `usage: linoone links [--query Q] [--limit N] [--cursor C] [--json] [--management-url URL]

Lists short URLs, newest first, one page of --limit (1 to 100, default 25): token,
when Persist stored it, whether the deny list blocks it, and its target URL. With
--query, only those whose target URL contains Q (whatever the case) or whose token is
Q. When more follow, the last line gives the --cursor of the next page. Nothing is
visited. With --json it prints the API's answer.

example:
  linoone links --query example.com --limit 50
`

// linksCmd prints GET /links through the generated client.
func linksCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("links")
	managementURLFlag(fs)
	query := fs.String("query", "", "a part of the target URL (any case), or a token")
	limit := fs.Int("limit", shorturl.DefaultListLimit, "short URLs per page, 1 to 100")
	cursor := fs.String("cursor", "", "the next page's cursor, as a previous page printed it")
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *limit < 1 || *limit > shorturl.MaxListLimit {
		return &usageError{fs: fs, err: fmt.Errorf("--limit %d is not between 1 and %d", *limit, shorturl.MaxListLimit)}
	}
	api, err := managementClient(ctx, getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	params := &management.ListLinksParams{Limit: limit}
	if *query != "" {
		params.Q = query
	}
	if *cursor != "" {
		params.Cursor = cursor
	}
	call := fmt.Sprintf("GET %s/links", api.Base)
	res, err := api.Client.ListLinksWithResponse(ctx, params)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return producer.Print(stdout, *asJSON, producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body}, "LinkPage", res.JSON200, func(p *management.LinkPage) error {
		if len(p.Items) == 0 {
			fmt.Fprintln(stdout, "no short URLs")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOKEN\tCREATED_AT\tBLOCKED\tTARGET_URL")
		for i := range p.Items {
			l := &p.Items[i]
			at := "-"
			if l.CreatedAt != nil {
				at = l.CreatedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", tty.Printable(l.Token), at, blockedText(l), tty.Printable(l.TargetURL))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if p.NextCursor != nil {
			fmt.Fprintf(stdout, "next page: linoone links --cursor %s", tty.Printable(*p.NextCursor))
			if *query != "" {
				fmt.Fprintf(stdout, " --query %q", *query)
			}
			fmt.Fprintln(stdout)
		}
		return nil
	})
}
