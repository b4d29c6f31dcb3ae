package shorturl

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
)

// Screener is the operator's deny list as the use cases see it: whether a target is
// blocked, and the kind of the rule that blocks it (host, domain, prefix) — never the
// rule's text, which is the operator's.
type Screener interface {
	Screen(target string) (kind string, blocked bool)
}

// Errors of a blocked target; *BlockedError matches one of them.
var (
	ErrTargetBlocked = errors.New("target url is blocked") // at issuance
	ErrLinkBlocked   = errors.New("short url is blocked")  // at resolution
)

// BlockedError is a target the deny list blocks: at issuance (Token empty) or at
// resolution of the short URL Token.
type BlockedError struct {
	Token Token
	Kind  string // the matching rule's kind
}

func (e *BlockedError) Error() string {
	if e.Token == "" {
		return fmt.Sprintf("target url is blocked by a %s rule of the deny list", e.Kind)
	}
	return fmt.Sprintf("short url %s is blocked: its target matches a %s rule of the deny list", e.Token, e.Kind)
}

// Is makes errors.Is(err, ErrTargetBlocked) true at issuance and
// errors.Is(err, ErrLinkBlocked) at resolution.
func (e *BlockedError) Is(target error) bool {
	return target == ErrTargetBlocked && e.Token == "" || target == ErrLinkBlocked && e.Token != ""
}

// ScreenCounters count blocked targets; the metrics emitter reads them.
type ScreenCounters struct {
	TargetsBlocked     atomic.Int64 // issuance refused
	LinksBlockedServed atomic.Int64 // resolutions answered as blocked (GET and HEAD)
	DenyListUnreadable atomic.Int64 // the list's source could not be read; the previous list stayed
	DenyListMissing    atomic.Int64 // requests served with no list loaded yet (a function whose first read failed)
	DenyListStale      atomic.Int64 // requests served under a list not refreshed for several intervals
}

// Screening is the deny list and what reports its matches. The zero Screening
// blocks nothing.
type Screening struct {
	Screen   Screener
	Counters *ScreenCounters // nil: not counted
	Logger   *slog.Logger    // nil: not logged
}

// check returns a *BlockedError when the deny list blocks target. It logs the token
// and the rule kind, never the target: a blocked target is often a phishing URL
// carrying a victim's data.
func (s Screening) check(tok Token, target string) error {
	if s.Screen == nil {
		return nil
	}
	kind, blocked := s.Screen.Screen(target)
	if !blocked {
		return nil
	}
	if s.Counters != nil {
		if tok == "" {
			s.Counters.TargetsBlocked.Add(1)
		} else {
			s.Counters.LinksBlockedServed.Add(1)
		}
	}
	switch {
	case s.Logger == nil:
	case tok == "":
		s.Logger.Info("target blocked at issuance", "rule_kind", kind)
	default:
		s.Logger.Info("blocked link served", "short_url_token", string(tok), "rule_kind", kind)
	}
	return &BlockedError{Token: tok, Kind: kind}
}
