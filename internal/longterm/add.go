package longterm

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Add stores a fact under a key the server chooses (m_…), or consolidates it into a near
// duplicate: the unexpired item of the same namespace whose vector is most similar to the fact's,
// when the similarity is at least Embeddings.ConsolidateAbove, or, without a vector (no
// embeddings, or the provider failing), the item whose text is the same but for case and spaces.
// A consolidated fact with the same text and value changes nothing; one that differs replaces the
// item's value and text (a new version), and the value it replaced is kept (Versions) and
// answered as Supersedes. The write holds the caller's memory (store.LockLongTerm) from the
// search for a duplicate to the commit, so that concurrent adds of near duplicates end as one
// item. EINVALID, EUNAUTHORIZED, EKEYREUSED.
func (s *Service) Add(ctx context.Context, namespace string, in carryon.LongTermAdd) (*carryon.LongTermAdded, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := ValidNamespace(namespace, false); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, carryon.Errorf(carryon.EINVALID, "text is required: the fact to remember")
	}
	if len(in.Value) == 0 {
		in.Value, _ = json.Marshal(in.Text)
	}
	put := carryon.LongTermPut{Value: in.Value, Text: in.Text, TTLSeconds: in.TTLSeconds}
	value, err := checkPut(&put)
	if err != nil {
		return nil, err
	}
	vec, err := s.embedItem(ctx, in.Text)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	requestID := in.RequestID
	in.RequestID = ""
	f := fact{key: carryon.NewID("m_"), text: in.Text, value: value, ttl: in.TTLSeconds, vec: vec}
	var w locked
	out, err := write(ctx, s, own, "memory.add", namespace, requestID, in, now, func(tx store.Tx) (*carryon.LongTermAdded, error) {
		if err := s.lock(ctx, tx, own, &w); err != nil {
			return nil, err
		}
		return s.addOne(ctx, tx, own, namespace, f, now, &w)
	})
	s.committed(own, &w, err)
	return out, err
}

// fact is one fact of a consolidating write, checked and embedded (vec nil: without a vector).
type fact struct {
	key, text string
	value     json.RawMessage
	ttl       int64
	vec       []float32
}

// addOne writes one fact in a transaction that holds the owner's memory (w): into its near
// duplicate, or as a new item under f.key.
func (s *Service) addOne(ctx context.Context, tx store.Tx, own, namespace string, f fact, now time.Time, w *locked) (*carryon.LongTermAdded, error) {
	dupKey, sim, err := s.duplicate(ctx, tx, own, namespace, f.text, f.vec, w, now)
	if err != nil {
		return nil, err
	}
	it := &carryon.LongTermItem{OwnerID: own, Namespace: namespace, Key: f.key, Value: f.value, Text: f.text, CreatedAt: now, UpdatedAt: now, Version: 1}
	if f.ttl > 0 {
		exp := now.Add(time.Duration(f.ttl) * time.Second)
		it.ExpiresAt = &exp
	}
	ans := &carryon.LongTermAdded{}
	if dupKey != "" {
		old, err := tx.GetLongTermItem(ctx, own, namespace, dupKey, now)
		if err != nil {
			return nil, err
		}
		ans.ConsolidatedInto, ans.Similarity = dupKey, sim
		if old.Text == f.text && jsonEqual(old.Value, f.value) {
			ans.LongTermItem = *old // the same fact again: nothing to change
			return ans, s.done(ctx, tx, own, w)
		}
		ans.Supersedes = &carryon.LongTermVersion{Version: old.Version, Value: old.Value, Text: old.Text, SupersededAt: now}
		if err := tx.PutLongTermVersion(ctx, own, namespace, dupKey, ans.Supersedes); err != nil {
			return nil, err
		}
		it.Key, it.CreatedAt, it.Version = dupKey, old.CreatedAt, old.Version+1
	}
	if err := tx.PutLongTermItem(ctx, own, it); err != nil {
		return nil, err
	}
	ans.LongTermItem = *it
	return ans, s.setVector(ctx, tx, own, it, f.vec, w)
}

// AddFacts writes facts of the caller to namespace in one transaction, each consolidated as Add
// does (into an item there was, or one written just before in the same call), and runs also in
// that transaction: the caller's own record of the write (a marker that makes it happen once),
// which refuses it by answering false (then nothing is written, and the error is ECONFLICT).
// Empty texts are skipped. EINVALID, EUNAUTHORIZED, ECONFLICT.
func (s *Service) AddFacts(ctx context.Context, namespace string, texts []string, also func(context.Context, store.Tx) (bool, error)) ([]*carryon.LongTermAdded, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := ValidNamespace(namespace, false); err != nil {
		return nil, err
	}
	var facts []fact
	for _, t := range texts {
		if t = strings.TrimSpace(t); t == "" || len(t) > carryon.MaxLongTermTextBytes || carryon.CheckText("text", t) != nil {
			continue
		}
		v, _ := json.Marshal(t)
		facts = append(facts, fact{key: carryon.NewID("m_"), text: t, value: v})
	}
	if s.emb != nil && len(facts) > 0 {
		in := make([]string, len(facts))
		for i, f := range facts {
			in[i] = f.text
		}
		if vecs, err := s.embed(ctx, in); err == nil {
			for i := range facts {
				facts[i].vec = vecs[i]
			}
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		} else {
			s.log().Warn("facts stored without vectors: the embeddings provider failed; the re-embedding job will make them", "err", err)
		}
	}
	now := s.clock()
	var w locked
	var out []*carryon.LongTermAdded
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out = nil
		if err := s.lock(ctx, tx, own, &w); err != nil {
			return err
		}
		for _, f := range facts {
			a, err := s.addOne(ctx, tx, own, namespace, f, now, &w)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		ok, err := also(ctx, tx)
		if err == nil && !ok {
			err = carryon.Errorf(carryon.ECONFLICT, "the facts were written by another call meanwhile")
		}
		return err
	})
	s.committed(own, &w, err)
	return out, err
}

// duplicate finds the item of namespace that a fact is a near duplicate of: by vector when the
// fact has one, else by the same text (case and spaces aside) among its keyword matches.
func (s *Service) duplicate(ctx context.Context, tx store.Tx, own, namespace, text string, vec []float32, w *locked, now time.Time) (string, float64, error) {
	if vec != nil {
		set, err := s.vectors.get(ctx, tx, own, s.emb.Model, w.before)
		if err != nil {
			return "", 0, err
		}
		key, best := "", float32(-2)
		if h := set.top(vec, 1, namespace, true, now); len(h) == 1 {
			key, best = set.keys[h[0].i], h[0].score
		}
		for _, c := range w.changes { // written earlier in this transaction: not in the set yet
			if c.ns == namespace && c.vec != nil {
				if sc := dot(vec, c.vec); sc > best || c.key == key {
					key, best = c.key, sc
				}
			}
		}
		if key != "" && float64(best) >= s.emb.ConsolidateAbove {
			return key, round3(float64(best)), nil
		}
		return "", 0, nil
	}
	items, err := tx.SearchLongTermItems(ctx, own, store.LongTermSearchQuery{Text: text, Namespace: namespace, Now: now, Limit: 50})
	if err != nil {
		return "", 0, err
	}
	want := sameText(text)
	for _, it := range items {
		if it.Namespace == namespace && it.Score > 0 && sameText(store.EmbeddingText(it.Text, it.Value)) == want {
			return it.Key, 1, nil
		}
	}
	return "", 0, nil
}

// sameText is a text as consolidation without vectors compares it: lower case, one space
// between words.
func sameText(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// Versions returns the earlier values of the caller's item that consolidating writes replaced,
// newest first. ENOTFOUND (no such item), EINVALID, EUNAUTHORIZED.
func (s *Service) Versions(ctx context.Context, namespace, key string) (*carryon.LongTermVersions, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := validItem(namespace, key); err != nil {
		return nil, err
	}
	out := &carryon.LongTermVersions{}
	err = s.st.Read(ctx, func(tx store.Tx) error {
		if _, err := tx.GetLongTermItem(ctx, own, namespace, key, s.clock()); err != nil {
			return err
		}
		var err error
		out.Items, err = tx.ListLongTermVersions(ctx, own, namespace, key)
		return err
	})
	return out, err
}
