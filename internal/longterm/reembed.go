package longterm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
)

// reembedJob names the re-embedding job's lease.
const reembedJob = "memory.reembed"

// reembedLease is how long one claim of the job lasts; each batch renews it.
const reembedLease = time.Minute

// reembedState is the job's journal: the model it embeds for and the last item it did, in
// (owner, namespace, key) order. A job taken over (its instance died) resumes after that item.
type reembedState struct {
	Model string    `json:"model"`
	After [3]string `json:"after"`
	Done  int64     `json:"done"`
}

// Reembed makes the missing and stale vectors (an item stored while the provider failed, or made
// by a model the server no longer uses), a batch at a time, while search goes on (stale items are
// found by keywords alone meanwhile). One instance at a time runs it (a lease, renewed by every
// batch); the journal in the lease says where it got to. It returns how many vectors it wrote,
// and stops at the end of the items, at a provider failure (the next call resumes) or when
// another instance holds the job.
func (s *Service) Reembed(ctx context.Context, holder string) (int, error) {
	if s.emb == nil {
		return 0, nil
	}
	var st reembedState
	claim := func(tx store.Tx) (bool, error) {
		raw, ok, err := tx.ClaimJob(ctx, reembedJob, holder, s.clock(), reembedLease)
		if err != nil || !ok {
			return false, err
		}
		st = reembedState{}
		if raw != "" {
			_ = json.Unmarshal([]byte(raw), &st)
		}
		if st.Model != s.emb.Model {
			st = reembedState{Model: s.emb.Model}
		}
		return true, nil
	}
	var held bool
	if err := s.st.Write(ctx, func(_ context.Context, tx store.Tx) error {
		var err error
		held, err = claim(tx)
		return err
	}); err != nil || !held {
		return 0, err
	}
	written := 0
	for ctx.Err() == nil {
		var batch []store.StaleItem
		if err := s.st.Read(ctx, func(tx store.Tx) error {
			var err error
			batch, err = tx.StaleLongTermItems(ctx, st.Model, st.After, s.clock(), s.emb.BatchSize)
			return err
		}); err != nil {
			return written, err
		}
		if len(batch) == 0 {
			st.After = [3]string{} // the next run starts from the top (items put since, stale again)
			return written, s.saveJob(ctx, holder, st)
		}
		var texts []string
		var todo []store.StaleItem
		for _, it := range batch {
			if it.Document != "" && len(it.Document) <= s.emb.MaxInputBytes {
				texts, todo = append(texts, it.Document), append(todo, it)
			}
		}
		var vecs [][]float32
		if len(texts) > 0 {
			var err error
			if vecs, err = s.embed(ctx, texts); err != nil {
				return written, err
			}
		}
		last := batch[len(batch)-1]
		next := st
		next.After = [3]string{last.Owner, last.Namespace, last.Key}
		err := s.st.Write(ctx, func(_ context.Context, tx store.Tx) error {
			ok, err := claim(tx) // renews the lease; another holder took over: stop
			if err != nil || !ok {
				held = false
				return err
			}
			for i, it := range todo {
				if _, err := tx.SetLongTermVector(ctx, it.Owner, it.Namespace, it.Key, it.Version, store.Vector{Model: st.Model, Values: vecs[i]}); err != nil {
					return err
				}
			}
			next.Done += int64(len(todo))
			b, _ := json.Marshal(next)
			_, err = tx.SaveJob(ctx, reembedJob, holder, string(b))
			return err
		})
		if err != nil || !held {
			return written, err
		}
		written += len(todo)
		st = next
	}
	return written, ctx.Err()
}

func (s *Service) saveJob(ctx context.Context, holder string, st reembedState) error {
	b, _ := json.Marshal(st)
	return s.st.Write(ctx, func(_ context.Context, tx store.Tx) error {
		_, err := tx.SaveJob(ctx, reembedJob, holder, string(b))
		return err
	})
}

// RunReembedder runs Reembed every interval until ctx is done, as holder (the instance's name).
func (s *Service) RunReembedder(ctx context.Context, holder string, every time.Duration) {
	if s.emb == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Reembed(ctx, holder)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log().Warn("re-embedding of memory stopped; it resumes at the next interval", "err", err, "vectors", n)
		case n > 0:
			s.log().Info("re-embedded memory items", "vectors", n, "model", s.emb.Model)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
