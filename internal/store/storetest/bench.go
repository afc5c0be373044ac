package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// benchSession makes a session of its own in st with history messages and returns it.
func benchSession(b *testing.B, st store.Store, history int) *carryon.Session {
	b.Helper()
	ctx := b.Context()
	s := newSession("usr_bench", carryon.NewID("sess_"), time.Now().UTC().Truncate(time.Microsecond))
	s.ExpiresAt = s.ExpiresAt.Add(24 * time.Hour)
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertSession(ctx, s) }); err != nil {
		b.Fatal(err)
	}
	const batch = 500
	for done := 0; done < history; {
		n := min(batch, history-done)
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			prev := cur.Version
			cur.Version++
			msgs := make([]*carryon.Message, n)
			for i := range msgs {
				cur.LastSeq++
				msgs[i] = benchMessage(cur, fmt.Sprintf("history message %d", cur.LastSeq))
			}
			cur.MessageCount += int64(n)
			if err := tx.InsertMessages(ctx, s.OwnerID, msgs); err != nil {
				return err
			}
			if err := tx.UpdateSession(ctx, cur, prev); err != nil {
				return err
			}
			*s = *cur
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += n
	}
	return s
}

func benchMessage(s *carryon.Session, content string) *carryon.Message {
	return &carryon.Message{
		SessionID: s.ID, Seq: s.LastSeq, Role: carryon.RoleUser, Kind: carryon.KindMessage, Content: content,
		Tokens: len(content) / 4, Version: s.Version, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
	}
}

// BenchAppend measures one turn's write: in one write transaction, read the session, append one
// message and store the session at its next version, on a session that already has history
// messages. Its cost must not depend on history.
func BenchAppend(b *testing.B, st store.Store, history int) {
	s := benchSession(b, st, history)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := appendOne(ctx, st, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchLastMessages measures restoring a session to continue it: in one read transaction, read
// the session and its last k messages, on a session with history messages. Its cost must not
// depend on history.
func BenchLastMessages(b *testing.B, st store.Store, history, k int) {
	s := benchSession(b, st, history)
	ctx := b.Context()
	want := min(k, history)
	b.ReportAllocs()
	for b.Loop() {
		err := st.Read(ctx, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			msgs, err := tx.LastMessages(ctx, s.OwnerID, cur, k)
			if err != nil {
				return err
			}
			if len(msgs) != want {
				return fmt.Errorf("LastMessages returned %d messages, want %d", len(msgs), want)
			}
			if want > 0 && msgs[len(msgs)-1].Seq != cur.LastSeq {
				return fmt.Errorf("LastMessages ends at seq %d, want %d", msgs[len(msgs)-1].Seq, cur.LastSeq)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchAppendConcurrent measures durable appends from writers concurrent writers, each appending
// to a session of its own as BenchAppend does: b.N appends in all. It reports appends/s and the
// p50 and p99 latency of one append (ms), the figures group commit is judged by.
func BenchAppendConcurrent(b *testing.B, st store.Store, writers int) {
	ss := make([]*carryon.Session, writers)
	for i := range ss {
		ss[i] = benchSession(b, st, 1)
	}
	ctx := b.Context()
	b.ReportAllocs()
	BenchWriters(b, writers, func(w, _ int) error { return appendOne(ctx, st, ss[w]) })
}

// BenchWriters runs b.N calls of op from writers goroutines at once (op gets the writer's index
// and the call's, 0 to b.N-1) and reports appends/s and the p50 and p99 latency of one call (ms).
// The first error fails the benchmark.
func BenchWriters(b *testing.B, writers int, op func(w, i int) error) {
	lat := make([][]time.Duration, writers)
	next := make(chan int, 1024)
	errs := make(chan error, writers)
	b.ResetTimer()
	start := time.Now()
	go func() {
		for i := range b.N {
			next <- i
		}
		close(next)
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				if err := op(w, i); err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}

// appendOne is one append of BenchAppend: read the session, insert a message, store the session.
func appendOne(ctx context.Context, st store.Store, s *carryon.Session) error {
	return st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
		if err != nil {
			return err
		}
		prev := cur.Version
		cur.Version++
		cur.LastSeq++
		cur.MessageCount++
		cur.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
		cur.LastActiveAt = cur.UpdatedAt
		if err := tx.InsertMessages(ctx, s.OwnerID, []*carryon.Message{benchMessage(cur, "continue the task")}); err != nil {
			return err
		}
		return tx.UpdateSession(ctx, cur, prev)
	})
}

// BenchForkChain measures restoring the last session of a fork chain: in one read transaction,
// read the session and its last 20 messages. The root has 1,000 messages; each of the depth forks
// has one of its own (own) or none, so the 20 come from 20 levels or all from the root. Each
// iteration reads the root and the chain's end in turn, so both figures are taken under the
// same load: it reports both (µs) and their ratio, the one to compare.
func BenchForkChain(b *testing.B, st store.Store, depth int, own bool) {
	chain := deepChain(b, st, 1000, depth, own)
	ctx := b.Context()
	restore := func(s *carryon.Session) time.Duration {
		t0 := time.Now()
		err := st.Read(ctx, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			msgs, err := tx.LastMessages(ctx, s.OwnerID, cur, 20)
			if err != nil {
				return err
			}
			if len(msgs) != 20 || msgs[19].Seq != cur.LastSeq {
				return fmt.Errorf("LastMessages returned %d messages", len(msgs))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var root, head time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		root += restore(chain[0])
		head += restore(chain[len(chain)-1])
	}
	n := float64(b.N)
	b.ReportMetric(float64(root.Microseconds())/n, "root-µs")
	b.ReportMetric(float64(head.Microseconds())/n, "end-µs")
	b.ReportMetric(float64(head)/float64(root), "end/root")
}

// BenchStoredBytes measures the count of a user's stored bytes (the quota's recount), for a
// user with one session of history messages. Its cost grows with the user's rows: the quota
// counts at most every few seconds per user, never on an append.
func BenchStoredBytes(b *testing.B, st store.Store, history int) {
	s := benchSession(b, st, history)
	ctx := b.Context()
	for b.Loop() {
		if err := st.Read(ctx, func(tx store.Tx) error {
			_, err := tx.StoredBytes(ctx, s.OwnerID)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
