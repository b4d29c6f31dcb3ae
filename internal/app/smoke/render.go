package smoke

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/linoone/linoone/internal/foundation/tty"
)

// WriteJSON writes r for machines (and for linoone capacity --from-smoke).
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for people, in one write.
func WriteText(w io.Writer, r Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "smoke of resolver %s and management API %s\nsigned with %s\n\n", r.Target.Resolver, r.Target.Management, r.Signer)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", mark, c.Name, tty.Printable(c.Detail))
	}
	_ = tw.Flush()
	if t := r.Timings; t.RedirectKeptAlive != nil {
		fmt.Fprintln(&b, "\nlatency as seen from here, network included (ms):")
		fmt.Fprintf(tw, "  \tn\tp50\tp90\tp99\tmax\n")
		for _, row := range []struct {
			name string
			l    *Latency
		}{
			{"redirect, one kept-alive connection", t.RedirectKeptAlive},
			{"redirect, a new connection each", t.RedirectFresh},
			{"  of which TCP connect", t.Connect},
			{"not-a-token 404 (no lookup)", t.NotAToken},
			{"issuance (signed POST /shorten)", t.Issuance},
		} {
			if row.l != nil {
				fmt.Fprintf(tw, "  %s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\n", row.name, row.l.N, row.l.P50, row.l.P90, row.l.P99, row.l.Max)
			}
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(&b, "\n%s\n", r.Verdict)
	if len(r.Created) > 0 {
		plural := "s"
		if len(r.Created) == 1 {
			plural = ""
		}
		fmt.Fprintf(&b, "\ncreated %d short URL%s under example.com (left in place; their redirects count as clicks):\n", len(r.Created), plural)
		for _, l := range r.Created {
			fmt.Fprintf(&b, "  %s -> %s\n", tty.Printable(l.ShortURL), tty.Printable(l.TargetURL))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
