package localbus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/nofollow"
	"github.com/linoone/linoone/internal/foundation/rotlog"
)

const (
	// refusedFile, in the bus directory, keeps the facts Persist refused.
	refusedFile = "refused.jsonl"
	// refusedMsg is the msg of its lines. It is not shorturl.MsgLostToLog, whose
	// lines recover counts as lost when they are cut short: a line here that a crash
	// cut short holds a fact the offset had not passed, which is kept again.
	refusedMsg = "click fact refused by persist"
	// maxRefusedReason bounds a line's reason (Persist's answer), in bytes.
	maxRefusedReason = 1024
	// refusedMaxSize and refusedKeep bound refused.jsonl: the file past which it
	// is moved aside, and how many moved aside are kept (compressed).
	refusedMaxSize = 8 << 20
	refusedKeep    = 4
)

// refusedLine is a line of refused.jsonl: a fact Persist refused, whole, in the shape
// of the serve log's "click fact lost to log" lines (an ERROR line with the fact in
// graph_fact), so that linoone recover --from-log republishes it once Persist takes
// it.
type refusedLine struct {
	Time           string          `json:"time"`
	Level          string          `json:"level"`
	Msg            string          `json:"msg"`
	IdempotencyKey string          `json:"idempotency_key"`
	Reason         string          `json:"reason"`
	Segment        string          `json:"segment"`
	Offset         int64           `json:"offset"`
	GraphFact      json.RawMessage `json:"graph_fact"`
}

// RefusedPath is the file that keeps the facts Persist refused (IsRejected), one JSON
// line each, for linoone recover --from-log.
func (c *Consumer) RefusedPath() string { return c.refusals }

// keepRefused appends the facts of the batch's events that Persist refused to
// refused.jsonl and syncs it, before commit moves the offset past them: skipped, so
// that they do not block the queue, they are kept whole rather than lost. A commit
// retried after they were kept does not keep them twice; a crash before the offset
// moved delivers the batch again, and keeps them again if Persist still refuses them
// (recover republishes a fact once per run).
func (c *Consumer) keepRefused(b *delivery) error {
	if len(b.refused) == 0 || b.kept {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the fact as it was built, byte for byte
	now := clickfact.FormatTime(time.Now())
	keys, tokens := make([]string, len(b.refused)), make([]string, len(b.refused))
	for i, r := range b.refused {
		rec := b.recs[b.events[r.event].rec]
		var ev struct {
			Detail json.RawMessage `json:"detail"`
		}
		var fact struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		// The event was decoded once already (assemble): it is JSON with a detail.
		if err := json.Unmarshal(rec.payload, &ev); err != nil {
			return fmt.Errorf("refused event at offset %d: %w", rec.pos, err)
		}
		if err := json.Unmarshal(ev.Detail, &fact); err != nil {
			return fmt.Errorf("refused event at offset %d: detail: %w", rec.pos, err)
		}
		reason := r.reason
		if len(reason) > maxRefusedReason {
			reason = strings.ToValidUTF8(reason[:maxRefusedReason], "")
		}
		keys[i], tokens[i] = fact.IdempotencyKey, tokenOf(ev.Detail)
		if err := enc.Encode(refusedLine{Time: now, Level: "ERROR", Msg: refusedMsg, IdempotencyKey: fact.IdempotencyKey,
			Reason: reason, Segment: segmentName(b.seg), Offset: rec.pos, GraphFact: ev.Detail}); err != nil {
			return fmt.Errorf("encode refused fact: %w", err)
		}
	}
	if err := boundKept(c.refusals, refusedMaxSize, refusedKeep, time.Now()); err != nil {
		// The facts are kept all the same, in a file that grows past its bound.
		c.log.Warn("cannot rotate refused.jsonl", "err", err, "refused_path", c.refusals)
	}
	if err := appendKept(c.refusals, buf.Bytes()); err != nil {
		return err
	}
	b.kept = true
	c.invalid.Add(int64(len(b.refused)))
	c.refused.Add(int64(len(b.refused)))
	for i, r := range b.refused {
		c.log.Error("persist refused a click fact; kept whole, not delivered", "err", r.reason,
			"short_url_token", tokens[i], "idempotency_key", keys[i], "segment", segmentName(b.seg), "offset", b.recs[b.events[r.event].rec].pos,
			"refused_path", c.refusals, "redrive", "linoone recover --from-log "+c.refusals)
	}
	return nil
}

// boundKept moves the file at path aside once it holds maxSize bytes or more, and
// keeps the newest keep of those moved aside, gzip-compressed: Persist refusing
// every fact must not fill the disk. The move is a rename and the compression is
// rotlog's, so every fact kept stays in a whole file across a crash. Refusals are
// rare, so the compression runs here rather than in the background.
func boundKept(path string, maxSize int64, keep int, now time.Time) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Size() >= maxSize {
		if _, err := rotlog.Rotate(path, now); err != nil {
			return err
		}
	}
	return rotlog.Tidy(path, keep, nil)
}

// appendKept appends lines to the file at path, creating it, and syncs it and its
// directory. It opens the file anew each time, so that it may be moved aside at any
// moment: the next facts go to a new one. A last line that a crash cut short is ended
// first, so that it spoils none of the lines after it.
func appendKept(path string, lines []byte) error {
	f, err := nofollow.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() > 0 {
		var last [1]byte
		if _, err = f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
			lines = append([]byte{'\n'}, lines...)
		}
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("read the end of %s: %w", path, err)
	}
	if err := writeSyncClose(f, lines); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// tokenOf is the token of a fact's short_url vertex, for "what happened to token X";
// "" when the detail has none (Persist may have refused it for that).
func tokenOf(detail []byte) string {
	var d struct {
		GraphSON graphson.Document `json:"graphson"`
	}
	if json.Unmarshal(detail, &d) != nil || len(d.GraphSON.Vertices) == 0 {
		return ""
	}
	tok, _ := d.GraphSON.Vertices[0].Properties[shorturl.PropToken].(string)
	return tok
}
