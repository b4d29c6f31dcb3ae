package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/app/serve"
	"github.com/linoone/linoone/internal/app/status"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/local/denyfile"
	"github.com/linoone/linoone/internal/local/localbus"
)

// Local is a local serve's files, which the console edits and reads as the CLI's
// block, unblock, blocked, status and replay do.
type Local struct {
	DenyList config.DenyList
	Status   config.Status
	Replay   config.Replay
}

// rules are the deny list's rules in force, and the lines it ignores.
func (l *Local) rules() (*denylist.List, []*denylist.LineError, error) {
	lines, err := denyfile.Lines(l.DenyList.File)
	if err != nil {
		return nil, nil, err
	}
	list, bad := denylist.ParseString(strings.Join(lines, "\n"))
	return list, bad, nil
}

// blockedBy is the rule of the deny list that matches target.
func (l *Local) blockedBy(target string) (string, bool, error) {
	list, _, err := l.rules()
	if err != nil {
		return "", false, err
	}
	r, ok := list.Match(target)
	return r.Text, ok, nil
}

// edit adds (block) or removes a rule and says when a serve applies it, as
// linoone block does.
func (l *Local) edit(block bool, rule string) (string, error) {
	rule = denylist.LineText(rule)
	parsed, bad := denylist.ParseString(rule)
	if len(bad) > 0 || parsed.Len() != 1 {
		return "", fmt.Errorf("%q is not a rule: a host, *.domain or an http(s) URL prefix", rule)
	}
	kind := parsed.Rules()[0].Kind
	if !l.DenyList.FileSet {
		if err := datadir.CheckServed(l.DenyList.DataDir); err != nil {
			return "", err
		}
	}
	changed, err := denyfile.Add(l.DenyList.File, rule)
	verb, nothing := "Blocked", "is already blocked"
	if !block {
		changed, err = denyfile.Remove(l.DenyList.File, rule)
		verb, nothing = "Unblocked", "is not in the deny list: nothing removed"
	}
	if err != nil {
		return "", err
	}
	if !changed {
		return fmt.Sprintf("%s %s.", rule, nothing), nil
	}
	return fmt.Sprintf("%s %s (%s rule) in %s; %s", verb, rule, kind, l.DenyList.File, l.inForce()), nil
}

// inForce says when the serve on the data dir applies an edit of the list.
func (l *Local) inForce() string {
	rec, state, err := datadir.Serving(l.DenyList.DataDir)
	file, _ := filepath.Abs(l.DenyList.File)
	switch {
	case err != nil:
		return "whether a serve applies it is unknown: " + err.Error()
	case state == "running" && rec.DenyList == file:
		return fmt.Sprintf("the serve (pid %d) applies it within %v.", rec.PID, serve.DenyListPoll)
	case state == "stopped":
		return "no serve runs: the next serve start applies it."
	case rec.DenyList != "" && rec.DenyList != file:
		return fmt.Sprintf("NOT in force: the serve (pid %d) reads another deny list, %s.", rec.PID, rec.DenyList)
	default:
		return fmt.Sprintf("a serve reading %s applies it within %v.", file, serve.DenyListPoll)
	}
}

// errNoLocal is the refusal of a local-only action under --endpoint.
var errNoLocal = errors.New("the deny list, bus and DLQ are a local serve's files: this console signs for a deployed endpoint, where they are managed in AWS")

// blockLink adds the rule that blocks a link's target, after a confirmation.
func (s *Server) blockLink(w http.ResponseWriter, r *http.Request, sess *session) {
	s.editLink(w, r, sess, true)
}

// unblockLink removes the rule that blocks a link's target, after a confirmation.
func (s *Server) unblockLink(w http.ResponseWriter, r *http.Request, sess *session) {
	s.editLink(w, r, sess, false)
}

func (s *Server) editLink(w http.ResponseWriter, r *http.Request, sess *session, block bool) {
	token := r.PathValue("token")
	var d pageData
	if s.cfg.Local == nil {
		d.Error = errNoLocal.Error()
		s.showLink(w, r, sess, token, "", d)
		return
	}
	rule := r.PostFormValue("rule")
	msg, err := s.cfg.Local.edit(block, rule)
	action := map[bool]string{true: "block", false: "unblock"}[block]
	if err != nil {
		d.Error = err.Error()
	} else {
		d.Message = msg
		s.audit(sess, action, "token", token, "rule", rule)
	}
	s.showLink(w, r, sess, token, "", d)
}

// denyListView is what the Deny list page shows.
type denyListView struct {
	File    string
	Rules   []denylist.Rule
	Ignored []string
	Check   string
	Verdict string
}

func (s *Server) denyListPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.showDenyList(w, r, sess, pageData{}, r.URL.Query().Get("check"))
}

func (s *Server) showDenyList(w http.ResponseWriter, r *http.Request, sess *session, d pageData, check string) {
	d.Title, d.Nav = "Deny list", "denylist"
	if s.cfg.Local == nil {
		d.Error = errNoLocal.Error()
		s.render(w, r, http.StatusOK, "denylist", sess, d)
		return
	}
	list, bad, err := s.cfg.Local.rules()
	if err != nil {
		d.Error = "The deny list could not be read: " + err.Error()
		s.render(w, r, http.StatusInternalServerError, "denylist", sess, d)
		return
	}
	v := denyListView{File: s.cfg.Local.DenyList.File, Rules: list.Rules(), Check: check}
	for _, e := range bad {
		v.Ignored = append(v.Ignored, e.Error())
	}
	if check = strings.TrimSpace(check); check != "" {
		if rule, ok := list.Match(check); ok {
			v.Verdict = fmt.Sprintf("Blocked by the %s rule %s (line %d).", rule.Kind, rule.Text, rule.Line)
		} else {
			v.Verdict = "Not blocked: no rule matches."
		}
	}
	d.Data = v
	s.render(w, r, http.StatusOK, "denylist", sess, d)
}

func (s *Server) denyListAdd(w http.ResponseWriter, r *http.Request, sess *session) {
	s.denyListEdit(w, r, sess, true)
}

func (s *Server) denyListRemove(w http.ResponseWriter, r *http.Request, sess *session) {
	s.denyListEdit(w, r, sess, false)
}

func (s *Server) denyListEdit(w http.ResponseWriter, r *http.Request, sess *session, block bool) {
	var d pageData
	if s.cfg.Local == nil {
		s.showDenyList(w, r, sess, d, "")
		return
	}
	rule := r.PostFormValue("rule")
	msg, err := s.cfg.Local.edit(block, rule)
	if err != nil {
		d.Error = err.Error()
	} else {
		d.Message = msg
		s.audit(sess, map[bool]string{true: "block", false: "unblock"}[block], "rule", rule)
	}
	s.showDenyList(w, r, sess, d, "")
}

// healthView is what the Health page shows.
type healthView struct {
	API     string // the management API's answer to a signed call
	APIUp   bool
	Report  *status.Report
	Entries []localbus.Entry
}

// healthPage says whether the management API answers a signed call and, locally,
// what linoone status and linoone dlq say.
func (s *Server) healthPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.showHealth(w, r, sess, pageData{})
}

func (s *Server) showHealth(w http.ResponseWriter, r *http.Request, sess *session, d pageData) {
	d.Title, d.Nav = "Health", "health"
	ctx, cancel := callContext(r)
	defer cancel()
	var v healthView
	// An unknown token answers 404 only once the signature was accepted.
	_, err := s.cfg.API.Inspect(ctx, "0000000000")
	if v.APIUp = inWords(err) == "No short URL has this token."; v.APIUp {
		v.API = "answers, and accepts the console's signature"
	} else {
		v.API = inWords(err)
	}
	if s.cfg.Local != nil {
		rep, err := status.Check(ctx, s.cfg.Local.Status)
		if err != nil && !errors.Is(err, status.ErrNotAllUp) {
			d.Error = err.Error()
		} else {
			v.Report = &rep
		}
		if entries, err := s.cfg.Local.dlq(ctx); err != nil {
			d.Error = "The click DLQ could not be read: " + err.Error()
		} else {
			v.Entries = entries
		}
	}
	d.Data = v
	s.render(w, r, http.StatusOK, "health", sess, d)
}

// dlq lists the local click DLQ.
func (l *Local) dlq(ctx context.Context) ([]localbus.Entry, error) {
	q, err := localbus.OpenDLQ(filepath.Join(l.Replay.DataDir, datadir.DLQ), localbus.DLQOptions{})
	if err != nil {
		return nil, err
	}
	return q.List(ctx)
}

// replay republishes the local click DLQ onto the local bus, as linoone replay.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, sess *session) {
	var d pageData
	if s.cfg.Local == nil {
		d.Error = errNoLocal.Error()
		s.showHealth(w, r, sess, d)
		return
	}
	res, err := s.cfg.Local.replay(r.Context())
	if err != nil {
		d.Error = "Replay failed: " + err.Error()
	} else {
		d.Message = fmt.Sprintf("Replayed %d, failed %d (they stay in the DLQ), invalid %d (set aside).", res.Replayed, res.Failed, res.Invalid)
		s.audit(sess, "replay", "replayed", res.Replayed, "failed", res.Failed, "invalid", res.Invalid)
	}
	s.showHealth(w, r, sess, d)
}

func (l *Local) replay(ctx context.Context) (localbus.ReplayResult, error) {
	c := l.Replay
	if err := datadir.CheckServed(c.DataDir); err != nil {
		return localbus.ReplayResult{}, err
	}
	bus, err := localbus.OpenBus(filepath.Join(c.DataDir, datadir.Bus), localbus.BusOptions{Fault: c.BusFault, Region: c.Region})
	if err != nil {
		return localbus.ReplayResult{}, err
	}
	defer bus.Close()
	q, err := localbus.OpenDLQ(filepath.Join(c.DataDir, datadir.DLQ), localbus.DLQOptions{})
	if err != nil {
		return localbus.ReplayResult{}, err
	}
	return q.Replay(ctx, bus, nil)
}
