package sessions

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/store"
)

// ForgetBatch is the most rows one step of forgetting a user deletes: each step is its own
// transaction, short enough that the server's other writers barely wait for it.
const ForgetBatch = 500

// RunEnder ends the runs of a session before forgetting its user deletes the session's rows, so
// that no runner finds its run gone under it and fails on it (runs.Service; set with EndRunsWith).
type RunEnder interface {
	// EndSessionRuns ends every run of the owner's session that has not ended and returns once
	// none of them executes any more (or a bound ran out). ENOTFOUND when the session is gone.
	EndSessionRuns(ctx context.Context, owner, sessionID string) error
}

// EndRunsWith sets what ends a session's runs before Forget deletes the session, and returns s.
// Call it before the service is used (hub.Open does, with the run manager). Without it Forget
// deletes runs that may still be executing, and their runners find them gone.
func (s *Service) EndRunsWith(e RunEnder) *Service {
	s.runs = e
	return s
}

// forgetLocks holds one mutex per user being forgotten in this process, so that a forget asked
// for and the sweeper's continuation of it do not run side by side.
var forgetLocks sync.Map

// Forget continues forgetting a user that store.Tx.MarkForgetting marked (package users does),
// to the end: each session, its forks first, in steps of at most ForgetBatch rows, its workspace
// directory, then the session row; then the user's long-term memory and request ids; then the
// user row. Every step adds what it deleted to the receipt in its own transaction, so a crash
// loses nothing: Forget called again (the sweeper does, for every marked user) continues where
// it stopped. by names who asked, for the audit log line written once the user row is gone.
// ENOTFOUND when the user is not being forgotten (or another call finished it).
func (s *Service) Forget(ctx context.Context, userID, by string) (*carryon.ForgetReceipt, error) {
	mu, _ := forgetLocks.LoadOrStore(userID, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if err := s.stillForgetting(ctx, userID); err != nil {
		return nil, err
	}
	for {
		if err := s.forgetSessions(ctx, userID); err != nil {
			return nil, err
		}
		for {
			var c carryon.ForgetCounts
			err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				var err error
				if c, err = tx.ForgetUserRows(ctx, userID, ForgetBatch); err != nil {
					return err
				}
				return tx.AddForgotten(ctx, userID, c)
			})
			if err != nil {
				return nil, err
			}
			if c.Total() == 0 {
				break
			}
		}
		var r *carryon.ForgetReceipt
		err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			r = nil
			// A request that authenticated before the keys went may have made a session since.
			if left, err := tx.ForgetSessions(ctx, userID, 1); err != nil || len(left) > 0 {
				return err
			}
			var err error
			r, err = tx.DeleteForgottenUser(ctx, userID)
			return err
		})
		if err != nil {
			return nil, err
		}
		if r != nil {
			r.FinishedAt = s.now()
			d := r.Deleted
			s.cfg.Logger.Info("user forgotten", "audit", "user.forget", "user_id", userID, "by", by,
				"started_at", r.StartedAt, "sessions", d.Sessions, "messages", d.Messages,
				"message_deletions", d.MessageDeletions, "memory_revisions", d.MemoryRevisions, "runs", d.Runs,
				"actions", d.Actions, "events", d.Events, "workspaces", d.Workspaces,
				"long_term_items", d.LongTermItems, "request_ids", d.RequestIDs, "keys", d.Keys)
			forgetLocks.Delete(userID)
			return r, nil
		}
	}
}

// forgetSessions forgets every session of the user, forks before the sessions they fork.
func (s *Service) forgetSessions(ctx context.Context, owner string) error {
	for {
		var ids []string
		err := s.st.Read(ctx, func(tx store.Tx) error {
			var err error
			ids, err = tx.ForgetSessions(ctx, owner, 100)
			return err
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, id := range ids {
			if err := s.forgetSession(ctx, owner, id); err != nil {
				return err
			}
		}
	}
}

// forgetSession ends the session's runs (EndRunsWith), deletes the rows in the session step by
// step, then its workspace, then the session row. The workspace goes before the row, so that a crash in between leaves a session
// that the next call forgets again rather than files no row names any more.
func (s *Service) forgetSession(ctx context.Context, owner, id string) error {
	if s.runs != nil {
		err := s.runs.EndSessionRuns(ctx, owner, id)
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return s.stillForgetting(ctx, owner)
		} else if err != nil {
			return err
		}
	}
	for {
		var c carryon.ForgetCounts
		err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			if c, err = tx.ForgetSessionRows(ctx, owner, id, ForgetBatch); err != nil {
				return err
			}
			return tx.AddForgotten(ctx, owner, c)
		})
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return s.stillForgetting(ctx, owner) // the session went with another call, or the user did
		} else if err != nil {
			return err
		}
		failpoint.Hit(failpoint.ForgetStep)
		if c.Total() == 0 {
			break
		}
	}
	var c carryon.ForgetCounts
	if dir := s.workspaceDir(id); dir != "" {
		if _, err := os.Lstat(dir); err == nil {
			c.Workspaces = 1
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return err // the files must go: the next call tries again
		}
	}
	c.Sessions = 1
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.DeleteSession(ctx, owner, id); err != nil {
			return err
		}
		return tx.AddForgotten(ctx, owner, c)
	})
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		return s.stillForgetting(ctx, owner)
	}
	return err
}

// stillForgetting returns ENOTFOUND unless the user is marked and not finished.
func (s *Service) stillForgetting(ctx context.Context, userID string) error {
	return s.st.Read(ctx, func(tx store.Tx) error {
		_, err := tx.Forgetting(ctx, userID)
		return err
	})
}

// ForgetMarked continues forgetting every user marked but not finished (a forget cut off by a
// crash or a restart), and returns how many it finished. A user whose forget fails does not stop
// the others; the first failure is returned.
func (s *Service) ForgetMarked(ctx context.Context) (int, error) {
	var ids []string
	err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		ids, err = tx.ForgettingUsers(ctx)
		return err
	})
	n := 0
	for _, id := range ids {
		_, ferr := s.Forget(ctx, id, "sweeper")
		switch {
		case ferr == nil:
			n++
		case carryon.ErrorCode(ferr) == carryon.ENOTFOUND: // finished by another call
		case err == nil:
			err = ferr
		}
	}
	return n, err
}
