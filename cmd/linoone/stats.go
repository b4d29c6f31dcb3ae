package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/app/producer"
)

const statsUsage = `usage: linoone stats [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json] [--management-url URL] TOKEN|SHORT_URL

Prints a short URL's clicks per UTC day of a window (default the last 30 days, at
most 366) as a table and a bar chart, with how many came from link previews and
crawlers and how many distinct visitors (by address) there were, its clicks of all
time, and the window's clicks by browser, operating system and device. The request
is signed like shorten's; with --json it prints the API's answer.

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
	api, err := managementClient(ctx, getenv, fs, 30*time.Second)
	if err != nil {
		return err
	}
	// The breakdown is always asked for: the table prints it.
	params := management.GetLinkStatsParams{Breakdown: &management.Breakdown{"browser", "os", "device"}}
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
		return printStats(stdout, s)
	})
}

// barWidth is the longest bar of a chart, in terminal cells.
const barWidth = 30

// printStats writes the stats as a table with a bar per day, then the breakdown.
func printStats(w io.Writer, s *management.LinkStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "date\tclicks\tpreviews\tvisitors\t")
	var clicks, previews, most int64
	for _, d := range s.ByDay {
		most = max(most, d.Clicks)
	}
	for _, d := range s.ByDay {
		chart := bar(d.Clicks, most)
		if chart != "" {
			chart = "  " + chart
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", d.Date.Format("2006-01-02"), d.Clicks, d.Previews, d.UniqueVisitors, chart)
		clicks += d.Clicks
		previews += d.Previews
	}
	fmt.Fprintf(tw, "window\t%d\t%d\t%d\t\n", clicks, previews, s.UniqueVisitors)
	fmt.Fprintf(tw, "all time\t%d\t\n", s.Clicks)
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Breakdown == nil {
		return nil
	}
	for _, dim := range []struct {
		name    string
		classes *[]management.ClassCount
	}{{"browser", s.Breakdown.Browser}, {"os", s.Breakdown.Os}, {"device", s.Breakdown.Device}} {
		if dim.classes == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s (clicks that are not previews)\n", dim.name)
		if len(*dim.classes) == 0 {
			fmt.Fprintln(w, "  none")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		top := (*dim.classes)[0].Clicks // most clicks first
		for _, c := range *dim.classes {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", printable(c.Name), c.Clicks, bar(c.Clicks, top))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// eighths are the partial blocks of a bar, one eighth of a cell more each.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar draws n of most as up to barWidth cells of block characters, in eighths of a
// cell; any n above zero shows at least an eighth.
func bar(n, most int64) string {
	if n <= 0 || most <= 0 {
		return ""
	}
	e := max(int(n*barWidth*8/most), 1)
	return strings.Repeat("█", e/8) + eighths[e%8]
}

// printable keeps a class name, which comes from a visitor's User-Agent, from
// writing control characters to the terminal.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}
