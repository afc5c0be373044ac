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
	key := carryon.NewID("m_")
	var w locked
	out, err := write(ctx, s, own, "memory.add", namespace, requestID, in, now, func(tx store.Tx) (*carryon.LongTermAdded, error) {
		if err := s.lock(ctx, tx, own, &w); err != nil {
			return nil, err
		}
		dupKey, sim, err := s.duplicate(ctx, tx, own, namespace, in.Text, vec, w.before, now)
		if err != nil {
			return nil, err
		}
		it := &carryon.LongTermItem{OwnerID: own, Namespace: namespace, Key: key, Value: value, Text: in.Text, CreatedAt: now, UpdatedAt: now, Version: 1}
		if in.TTLSeconds > 0 {
			exp := now.Add(time.Duration(in.TTLSeconds) * time.Second)
			it.ExpiresAt = &exp
		}
		ans := &carryon.LongTermAdded{}
		if dupKey != "" {
			old, err := tx.GetLongTermItem(ctx, own, namespace, dupKey, now)
			if err != nil {
				return nil, err
			}
			ans.ConsolidatedInto, ans.Similarity = dupKey, sim
			if old.Text == in.Text && jsonEqual(old.Value, value) {
				ans.LongTermItem = *old // the same fact again: nothing to change
				return ans, s.done(ctx, tx, own, &w)
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
		return ans, s.setVector(ctx, tx, own, it, vec, &w)
	})
	s.committed(own, &w, err)
	return out, err
}

// duplicate finds the item of namespace that a fact is a near duplicate of: by vector when the
// fact has one, else by the same text (case and spaces aside) among its keyword matches.
func (s *Service) duplicate(ctx context.Context, tx store.Tx, own, namespace, text string, vec []float32, gen int64, now time.Time) (string, float64, error) {
	if vec != nil {
		set, err := s.vectors.get(ctx, tx, own, s.emb.Model, gen)
		if err != nil {
			return "", 0, err
		}
		if h := set.top(vec, 1, namespace, true, now); len(h) == 1 && float64(h[0].score) >= s.emb.ConsolidateAbove {
			return set.keys[h[0].i], round3(float64(h[0].score)), nil
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
