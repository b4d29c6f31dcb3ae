package mgmtapi

import (
	"context"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"github.com/x-way/crawlerdetect"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// isPreview classifies a click's User-Agent when stats are read, never when a click
// is stored: a link preview or a crawler by crawlerdetect's list.
var isPreview = newVerdictCache(crawlerdetect.IsCrawler).of

// GetLink answers where a token goes without visiting it: no click is recorded.
func (s managementServer) GetLink(ctx context.Context, req management.GetLinkRequestObject) (management.GetLinkResponseObject, error) {
	tok, err := shorturl.ParseToken(req.Token)
	if err != nil {
		return nil, err
	}
	l, err := s.clicker.Link(ctx, tok)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	return management.GetLink200JSONResponse(s.linkOf(l)), nil
}

// GetLinkStats answers a token's clicks, all time and per day of a window.
func (s managementServer) GetLinkStats(ctx context.Context, req management.GetLinkStatsRequestObject) (management.GetLinkStatsResponseObject, error) {
	tok, err := shorturl.ParseToken(req.Token)
	if err != nil {
		return nil, err
	}
	var from, to string
	if req.Params.From != nil {
		from = *req.Params.From
	}
	if req.Params.To != nil {
		to = *req.Params.To
	}
	w, err := shorturl.ParseWindow(from, to, time.Now())
	if err != nil {
		return nil, err
	}
	v, err := s.clicker.Visits(ctx, tok, w)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	days := v.ByDay(w, isPreview)
	res := management.GetLinkStats200JSONResponse{Token: string(tok), Clicks: v.Total, UniqueVisitors: v.Unique, ByDay: make([]management.DayClicks, len(days))}
	for i, d := range days {
		res.ByDay[i] = management.DayClicks{Date: openapi_types.Date{Time: d.Day}, Clicks: d.Clicks, Previews: d.Previews, UniqueVisitors: d.Unique}
	}
	if req.Params.Breakdown != nil {
		res.Breakdown = breakdown(v, *req.Params.Breakdown)
	}
	return res, nil
}

// breakdown counts the window's clicks that are not previews by the dimensions asked
// for (validated against the spec's enum before the handler runs).
func breakdown(v shorturl.Visits, dims []string) *management.ClickBreakdown {
	top := func(class func(uaClass) string) *[]management.ClassCount {
		cs := v.Breakdown(isPreview, func(ua string) string { return class(classes.of(ua)) })
		out := make([]management.ClassCount, len(cs))
		for i, c := range cs {
			out[i] = management.ClassCount{Name: c.Name, Clicks: c.Clicks}
		}
		return &out
	}
	var b management.ClickBreakdown
	for _, d := range dims {
		switch management.GetLinkStatsParamsBreakdown(d) {
		case management.Browser:
			b.Browser = top(func(c uaClass) string { return c.browser })
		case management.Os:
			b.Os = top(func(c uaClass) string { return c.os })
		case management.Device:
			b.Device = top(func(c uaClass) string { return c.device })
		}
	}
	return &b
}
