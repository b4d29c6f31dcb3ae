package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/linoone/linoone/client"
)

// dayRow is one day of the Link page's table of clicks, the chart's numbers in text.
type dayRow struct {
	Date     string // 2006-01-02
	Visits   int64
	Previews int64
	Today    bool
}

// Chart geometry, in SVG user units: one bar per day.
const (
	chartHeight = 120
	barWidth    = 16
	barGap      = 4
	chartTop    = 14 // room for the tallest bar's figure
	chartBottom = 18 // room for the day labels
)

// chart draws clicks per day as an SVG bar chart, visits solid and previews
// hatched on top, so the two read apart without colour; every bar carries its
// figure in a <title> and the table beside it carries them all in text.
func chart(days []client.DayClicks) ([]dayRow, template.HTML) {
	today := time.Now().UTC().Format(time.DateOnly)
	rows := make([]dayRow, len(days))
	var peak int64 = 1
	for i, d := range days {
		rows[i] = dayRow{Date: d.Date.UTC().Format(time.DateOnly), Visits: d.Clicks - d.Previews, Previews: d.Previews}
		rows[i].Today = rows[i].Date == today
		peak = max(peak, d.Clicks)
	}
	width := len(days)*(barWidth+barGap) + barGap
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">`,
		width, chartTop+chartHeight+chartBottom)
	b.WriteString(`<title id="chart-title">Clicks per day, visits solid and previews hatched</title>`)
	b.WriteString(`<defs><pattern id="hatch" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="4" height="4" fill="#fff"/><line x1="0" y1="0" x2="0" y2="4" stroke="#333" stroke-width="2"/></pattern></defs>`)
	base := chartTop + chartHeight
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#333" stroke-width="1"/>`, base, width, base)
	for i, row := range rows {
		x := barGap + i*(barWidth+barGap)
		vh := int(row.Visits * chartHeight / peak)
		ph := int(row.Previews * chartHeight / peak)
		fmt.Fprintf(&b, `<g data-day="%s" data-visits="%d" data-previews="%d"><title>%s: %d visits, %d previews</title>`,
			row.Date, row.Visits, row.Previews, row.Date, row.Visits, row.Previews)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#1f4e99"/>`, x, base-vh, barWidth, vh)
		if ph > 0 {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="url(#hatch)" stroke="#333" stroke-width="1"/>`, x, base-vh-ph, barWidth, ph)
		}
		if total := row.Visits + row.Previews; total > 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="middle">%d</text>`, x+barWidth/2, base-vh-ph-3, total)
		}
		if i%7 == len(rows)%7 || row.Today {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9" text-anchor="middle">%s</text>`, x+barWidth/2, base+13, row.Date[5:])
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	// Every value written above is a number or a date the server formatted.
	return rows, template.HTML(b.String()) //nolint:gosec
}
