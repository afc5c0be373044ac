package runs

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// Chat is the seed's short path: it creates the session when no id is given, starts a run with
// the message and waits for it to end (or to wait for an approval). A retry with the same request
// id finds the same session and the same run, also while the run is still going.
func (s *Service) Chat(ctx context.Context, in carryon.ChatInput) (*carryon.ChatResult, error) {
	id := in.SessionID
	if id == "" {
		ns := carryon.NewSession{Title: clipTitle(in.Message)}
		if in.RequestID != "" {
			ns.RequestID = "chat-session:" + in.RequestID
		}
		sess, err := s.sess.Create(ctx, ns)
		if err != nil {
			return nil, err
		}
		id = sess.ID
	}
	run, err := s.Start(ctx, id, carryon.NewRun{Message: in.Message, WriteOptions: carryon.WriteOptions{RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	if run, err = s.Wait(ctx, run.ID); err != nil {
		return nil, err
	}
	wm, err := s.sess.GetWorkingMemory(ctx, id)
	if err != nil {
		return nil, err
	}
	return &carryon.ChatResult{SessionID: id, RunID: run.ID, Status: run.Status, Reply: run.Reply, Error: run.Error, WorkingMemory: wm.WorkingMemory}, nil
}

// Wait blocks until the run ended or waits for an approval, and returns it.
func (s *Service) Wait(ctx context.Context, runID string) (*carryon.Run, error) {
	ch, unsub := s.notify.subscribe(runID)
	defer unsub()
	for {
		run, err := s.GetRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		if run.Status.Terminal() || run.Status == carryon.RunWaitingApproval {
			return run, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-time.After(s.cfg.Poll):
		}
	}
}

func clipTitle(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
