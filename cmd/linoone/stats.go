package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/producer"
)

const statsUsage = `usage: linoone stats [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json] [--management-url URL] TOKEN|SHORT_URL

Prints a short URL's clicks per UTC day of a window (default the last 30 days, at
most 366), with how many came from link previews and crawlers, and its clicks of
all time. The request is signed like shorten's; with --json it prints the API's
answer.

example:
  linoone stats 7BTadEDkJ8
  linoone stats 7BTadEDkJ8 --from 2026-11-01 --to 2026-11-30
`

// statsCmd prints GET /links/{token}/stats through the generated client as a table.
func statsCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := newFlags("stats")
	managementURLFlag(fs)
	from := fs.String("from", "", "first UTC day, YYYY-MM-DD (default: 29 days before --to)")
	to := fs.String("to", "", "last UTC day, YYYY-MM-DD (default: today)")
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	tok, err := tokenArg(fs, pos[0])
	if err != nil {
		return err
	}
	api, err := managementClient(getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	var params management.GetLinkStatsParams
	if *from != "" {
		params.From = from
	}
	if *to != "" {
		params.To = to
	}
	call := fmt.Sprintf("GET %s/links/%s/stats", api.Base, tok)
	res, err := api.Client.GetLinkStatsWithResponse(ctx, tok, &params)
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	return producer.Print(stdout, *asJSON, producer.Answer{Call: call, Status: res.StatusCode(), Body: res.Body}, "LinkStats", res.JSON200, func(s *management.LinkStats) error {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "date\tclicks\tpreviews\t")
		var clicks, previews int64
		for _, d := range s.ByDay {
			fmt.Fprintf(tw, "%s\t%d\t%d\t\n", d.Date.Format("2006-01-02"), d.Clicks, d.Previews)
			clicks += d.Clicks
			previews += d.Previews
		}
		fmt.Fprintf(tw, "window\t%d\t%d\t\n", clicks, previews)
		fmt.Fprintf(tw, "all time\t%d\t\t\n", s.Clicks)
		return tw.Flush()
	})
}
