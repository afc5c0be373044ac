package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// DeepChain makes a root with rootMessages messages ("r1", …) and a chain of depth forks, each
// a fork of the one before at its last seq with one message of its own ("c1", … at seq
// rootMessages+i), many levels per write. It returns the sessions, root first.
func DeepChain(t testing.TB, st store.Store, rootMessages, depth int) []*carryon.Session {
	return deepChain(t, st, rootMessages, depth, true)
}

// EmptyChain is DeepChain with forks that have no message of their own: every level reads the
// root's messages through all the others.
func EmptyChain(t testing.TB, st store.Store, rootMessages, depth int) []*carryon.Session {
	return deepChain(t, st, rootMessages, depth, false)
}

func deepChain(t testing.TB, st store.Store, rootMessages, depth int, own bool) []*carryon.Session {
	t.Helper()
	ctx := t.Context()
	root := newSession(ownerA, carryon.NewID("sess_"), at(0))
	insertSession(t, st, root)
	write(t, st, func(tx store.Tx) error {
		for i := 1; i <= rootMessages; i++ {
			cur, err := AppendTurn(ctx, tx, ownerA, root.ID, fmt.Sprintf("r%d", i))
			if err != nil {
				return err
			}
			*root = *cur
		}
		return nil
	})
	chain := []*carryon.Session{root}
	const perWrite = 100
	for done := 0; done < depth; done += perWrite {
		write(t, st, func(tx store.Tx) error {
			for i := done + 1; i <= min(depth, done+perWrite); i++ {
				parent := chain[len(chain)-1]
				s := newSession(ownerA, carryon.NewID("sess_"), at(100))
				s.ParentID, s.ForkSeq, s.ForkVersion = parent.ID, parent.LastSeq, parent.Version
				s.Version, s.LastSeq, s.MessageCount = 1, parent.LastSeq, parent.LastSeq
				if err := tx.InsertSession(ctx, s); err != nil {
					return err
				}
				if !own {
					chain = append(chain, s)
					continue
				}
				cur, err := AppendTurn(ctx, tx, ownerA, s.ID, fmt.Sprintf("c%d", i))
				if err != nil {
					return err
				}
				chain = append(chain, cur)
			}
			return nil
		})
	}
	return chain
}

// deepHistory is what level i of a DeepChain sees.
func deepHistory(rootMessages, i int) []string {
	var out []string
	for j := 1; j <= rootMessages; j++ {
		out = append(out, fmt.Sprintf("r%d", j))
	}
	for j := 1; j <= i; j++ {
		out = append(out, fmt.Sprintf("c%d", j))
	}
	return out
}

// seqText is one visible message: its seq and content.
type seqText struct {
	seq  int64
	text string
}

// numbered gives the contents seqs 1, 2, … except those in gone (deleted messages).
func numbered(contents []string, gone ...int64) []seqText {
	var out []seqText
	for i, c := range contents {
		if seq := int64(i + 1); !slices.Contains(gone, seq) {
			out = append(out, seqText{seq, c})
		}
	}
	return out
}

// checkWindows checks windows of s's history against want: the last k for several k, pages
// after several seqs, pages before several seqs, and the whole history.
func checkWindows(t testing.TB, st store.Store, s *carryon.Session, want []seqText) {
	t.Helper()
	ctx := t.Context()
	n := len(want)
	texts := func(ws []seqText) []string {
		out := []string{}
		for _, w := range ws {
			out = append(out, w.text)
		}
		return out
	}
	check := func(what string, got []*carryon.Message, err error, w []seqText) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s %s: %v", s.ID, what, err)
		}
		if g := contents(got); !reflect.DeepEqual(g, texts(w)) {
			t.Fatalf("%s %s: %d messages %s, want %d %s", s.ID, what, len(g), brief(g), len(w), brief(texts(w)))
		}
	}
	last := int64(0)
	if n > 0 {
		last = want[n-1].seq
	}
	read(t, st, func(tx store.Tx) error {
		for _, k := range []int{1, 2, 20, 100, n, n + 5} {
			got, err := tx.LastMessages(ctx, ownerA, s, k)
			check(fmt.Sprintf("LastMessages(%d)", k), got, err, want[max(0, n-k):])
		}
		for _, after := range []int64{0, 1, 9, 10, 11, last / 2, last - 3, last} {
			for _, limit := range []int{0, 1, 7, 30} {
				got, err := tx.MessagesAfter(ctx, ownerA, s, after, limit)
				var w []seqText
				for _, m := range want {
					if m.seq > after && (limit == 0 || len(w) < limit) {
						w = append(w, m)
					}
				}
				check(fmt.Sprintf("MessagesAfter(%d, %d)", after, limit), got, err, w)
			}
		}
		for _, before := range []int64{1, 2, 11, last / 2, last, last + 1} {
			got, err := tx.MessagesBefore(ctx, ownerA, s, before, 25)
			var w []seqText
			for _, m := range want {
				if m.seq < before {
					w = append(w, m)
				}
			}
			check(fmt.Sprintf("MessagesBefore(%d, 25)", before), got, err, w[max(0, len(w)-25):])
		}
		return nil
	})
}

// brief shows the first and last few of a long list.
func brief(xs []string) string {
	if len(xs) <= 8 {
		return fmt.Sprint(xs)
	}
	return fmt.Sprint(xs[:4], " … ", xs[len(xs)-4:])
}

func testDeepForks(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	const rootMessages, depth = 10, 1000
	chain := DeepChain(t, st, rootMessages, depth)
	head := chain[depth]
	for _, i := range []int{0, 1, 2, depth / 2, depth} {
		checkWindows(t, st, chain[i], numbered(deepHistory(rootMessages, i)))
	}

	// A fork of the head at a seq deep in what it inherits sees that far, then its own.
	x := fork(t, st, head, carryon.NewID("sess_"), rootMessages+2, head.Version)
	appendMessages(t, st, x, "x1")
	checkWindows(t, st, x, numbered(append(deepHistory(rootMessages, 2), "x1")))

	// Messages the head deletes (its own and inherited ones) leave its windows, not its
	// ancestors'.
	for _, seq := range []int64{rootMessages + depth, rootMessages + depth - 2, rootMessages + depth - 3, 5} {
		write(t, st, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, ownerA, head.ID)
			if err != nil {
				return err
			}
			return tx.DeleteMessage(ctx, ownerA, cur, seq, cur.Version+1, at(200))
		})
	}
	hidden := numbered(deepHistory(rootMessages, depth), rootMessages+depth, rootMessages+depth-2, rootMessages+depth-3, 5)
	checkWindows(t, st, head, hidden)
	checkWindows(t, st, chain[depth-1], numbered(deepHistory(rootMessages, depth-1)))

	// Deleting a session in the middle of the chain: every level below keeps its history.
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, chain[depth/2].ID) })
	for _, i := range []int{depth/2 + 1, depth/2 + 2, depth - 1} {
		checkWindows(t, st, chain[i], numbered(deepHistory(rootMessages, i)))
	}
	checkWindows(t, st, head, hidden)
	checkWindows(t, st, x, numbered(append(deepHistory(rootMessages, 2), "x1")))
	// And the root, which every level reads through.
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, chain[0].ID) })
	for _, i := range []int{1, depth/2 - 1, depth/2 + 1, depth - 1} {
		checkWindows(t, st, chain[i], numbered(deepHistory(rootMessages, i)))
	}
	checkWindows(t, st, head, hidden)
}
