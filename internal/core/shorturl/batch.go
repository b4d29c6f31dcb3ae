package shorturl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// MaxBatchItems bounds one batch.
const MaxBatchItems = 1000

var (
	// ErrNoBatchStore reports an Issuer built without a BatchStore asked for a batch.
	ErrNoBatchStore = errors.New("issuer has no batch store")
	// ErrBatchSize reports a batch of no items or more than MaxBatchItems.
	ErrBatchSize = errors.New("a batch has 1 to 1,000 items")
)

// BatchStore looks many tokens up in one query and writes many short URLs in one
// ingest (Persist). LookupMany returns every short URL whose token is one of toks —
// several for one token when Persist holds several. Both wrap ErrUnavailable when
// the store cannot answer; SaveMany writes all or reports an error.
type BatchStore interface {
	LookupMany(ctx context.Context, toks []Token) ([]ShortURL, error)
	SaveMany(ctx context.Context, us []ShortURL) error
}

// BatchItem is one item of a batch: its target, or Err when the HTTP edge already
// refused the item (a member other than target_url).
type BatchItem struct {
	Target string
	Err    error
}

// BatchResult is one item's outcome: the short URL (Replayed when its idempotency
// key already named it), or Err for this item alone.
type BatchResult struct {
	URL      ShortURL
	Replayed bool
	Err      error
}

// batchEntry is an item on its way to a token.
type batchEntry struct {
	i      int
	target string
	tok    Token
	idem   bool
}

// ShortenBatch issues a short URL for every item that passes the target URL rules
// and the deny list, in input order. Every token is checked in one LookupMany and
// every new short URL written in one SaveMany; only a random token that collides
// (about once in 10^14 batches) costs another lookup, for the items that drew again.
// With id, item i's token is derived from the key id.Key+"#"+i, as
// ShortenIdempotent derives one. An error from the store fails the whole batch:
// nothing is reported as created.
func (s *Issuer) ShortenBatch(ctx context.Context, items []BatchItem, requestHost string, id *Idempotent) ([]BatchResult, error) {
	if s.batch == nil {
		return nil, ErrNoBatchStore
	}
	if len(items) == 0 || len(items) > MaxBatchItems {
		return nil, fmt.Errorf("%w, got %d", ErrBatchSize, len(items))
	}
	if id != nil {
		if err := CheckIdempotencyKey(id.Key); err != nil {
			return nil, err
		}
	}
	hosts := s.hosts.withRequestHost(requestHost)
	results := make([]BatchResult, len(items))
	var todo []batchEntry
	for i, it := range items {
		err := it.Err
		if err == nil {
			err = s.admit(it.Target, hosts)
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		e := batchEntry{i: i, target: it.Target, idem: id != nil}
		if e.idem {
			if e.tok, err = s.idem.token(*id, id.Key+"#"+strconv.Itoa(i)); err != nil {
				return nil, err
			}
		}
		todo = append(todo, e)
	}
	if id != nil && len(todo) > 0 {
		toks := make([]Token, len(todo))
		for j, e := range todo {
			toks[j] = e.tok
		}
		defer s.idem.lock(toks)()
	}
	write, err := s.assignTokens(ctx, todo, results)
	if err != nil {
		return nil, err
	}
	if err := s.saveBatch(ctx, write, results); err != nil {
		return nil, err
	}
	return results, nil
}

// saveBatch writes the short URLs of the entries assignTokens kept, in one SaveMany,
// and puts each in its item's result; nothing when there are none.
func (s *Issuer) saveBatch(ctx context.Context, write []batchEntry, results []BatchResult) error {
	if len(write) == 0 {
		return nil
	}
	us := make([]ShortURL, len(write))
	for j, e := range write {
		us[j] = s.shortURL(e.tok, e.target)
	}
	if err := s.confirmWrite(ctx, us, s.batch.SaveMany(ctx, us)); err != nil {
		return fmt.Errorf("save %d short urls: %w", len(us), err)
	}
	for j, e := range write {
		results[e.i].URL = us[j]
	}
	return nil
}

// assignTokens gives every entry a token no short URL has (drawing random ones,
// checking derived ones) and returns the entries to write. Replays and reused keys
// are settled in results.
func (s *Issuer) assignTokens(ctx context.Context, todo []batchEntry, results []BatchResult) ([]batchEntry, error) {
	taken := make(map[Token]bool, len(todo))
	var write []batchEntry
	for draw := 0; len(todo) > 0; draw++ {
		if draw == s.maxDraws {
			for _, e := range todo {
				results[e.i].Err = fmt.Errorf("%w after %d draws", ErrTokenSpaceBusy, s.maxDraws)
			}
			break
		}
		toks := make([]Token, len(todo))
		for j := range todo {
			if !todo[j].idem {
				tok, err := NewToken(s.rand)
				if err != nil {
					return nil, err
				}
				todo[j].tok = tok
			}
			toks[j] = todo[j].tok
		}
		found, err := s.batch.LookupMany(ctx, toks)
		if err != nil {
			return nil, fmt.Errorf("check %d tokens: %w", len(toks), err)
		}
		stored := make(map[Token][]ShortURL, len(found))
		for _, u := range found {
			stored[u.Token] = append(stored[u.Token], u)
		}
		var again []batchEntry
		for _, e := range todo {
			us, exists := stored[e.tok]
			switch {
			case e.idem && exists:
				results[e.i] = replayOf(e, us)
			case e.idem && taken[e.tok]: // two keys of this batch derived one token
				results[e.i].Err = fmt.Errorf("token %s: %w", e.tok, ErrTokenSpaceBusy)
			case exists || taken[e.tok]:
				again = append(again, e) // a random token collided: draw again
			default:
				taken[e.tok] = true
				write = append(write, e)
			}
		}
		todo = again
	}
	return write, nil
}

// replayOf is the result of an idempotent item whose token Persist already holds.
func replayOf(e batchEntry, us []ShortURL) BatchResult {
	for _, u := range us {
		if u.Target != e.target {
			return BatchResult{Err: fmt.Errorf("token %s: %w", e.tok, ErrIdempotencyKeyReused)}
		}
	}
	return BatchResult{URL: us[0], Replayed: true}
}

// confirmWrite settles a write of us that failed with err. When the failure came
// after the write was sent (its answer timed out, was lost, or was a 5xx after the
// commit), Persist may have stored the short URLs all the same: issued to no one, and
// a retry without an Idempotency-Key would issue others. So the tokens are read back
// once: if every short URL is stored with its own target, the write is done (nil);
// otherwise, or if the read fails too, err stands. A write that succeeded (err nil),
// one that failed for another reason, and one whose caller has gone, are left as
// they are.
func (s *Issuer) confirmWrite(ctx context.Context, us []ShortURL, err error) error {
	if err == nil || !errors.Is(err, ErrUnavailable) || ctx.Err() != nil || len(us) == 0 {
		return err
	}
	stored := make(map[Token][]string, len(us)) // the targets stored under each token
	if s.batch != nil && len(us) > 1 {
		toks := make([]Token, len(us))
		for i, u := range us {
			toks[i] = u.Token
		}
		found, lerr := s.batch.LookupMany(ctx, toks)
		if lerr != nil {
			return err
		}
		for _, u := range found {
			stored[u.Token] = append(stored[u.Token], u.Target)
		}
	} else {
		for _, u := range us {
			found, lerr := s.store.Lookup(ctx, u.Token)
			if lerr != nil {
				return err
			}
			stored[u.Token] = append(stored[u.Token], found.Target)
		}
	}
	for _, u := range us {
		if t := stored[u.Token]; len(t) != 1 || t[0] != u.Target {
			return err
		}
	}
	return nil
}
