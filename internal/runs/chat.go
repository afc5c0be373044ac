package runs

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
)

// opChat names a chat's writes under its request id.
const opChat = "chat"

// chatRequest is what identifies a chat for its request id (the id itself aside).
type chatRequest struct {
	SessionID       string               `json:"session_id,omitempty"`
	Message         string               `json:"message"`
	ExpectedVersion *int64               `json:"expected_version,omitempty"`
	Tools           []carryon.ClientTool `json:"tools,omitempty"`
	Agent           string               `json:"agent,omitempty"`
}

// chatAnswer is what a chat's request id keeps: the session and run it made at once, and the
// answer once the run has ended, which every repeat then gets as it was.
type chatAnswer struct {
	SessionID string              `json:"session_id"`
	RunID     string              `json:"run_id"`
	Result    *carryon.ChatResult `json:"result,omitempty"`
}

// WrittenSession names the chat's session, which forgets the chat's request id when it is deleted.
func (a chatAnswer) WrittenSession() string { return a.SessionID }

// Chat is the seed's short path: it creates the session when no id is given, starts a run with
// the message and waits for it to end (or to wait for an approval or for tool outputs). The session, the message and
// the run are written in one transaction under the caller's request id, so a chat that is refused
// (an empty message, a stale version) leaves nothing behind and its request id stays free for
// the corrected retry. A retry with the same request id finds the same session and run, waits
// for the run if it is still going, and answers exactly the first answer once there is one.
func (s *Service) Chat(ctx context.Context, in carryon.ChatInput) (*carryon.ChatResult, error) {
	if err := validMessage(in.Message); err != nil {
		return nil, err
	}
	if in.SessionID == "" && in.ExpectedVersion != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "If-Match and expected_version name a version of an existing session; a chat without session_id makes a new one")
	}
	if in.Agent != "" {
		if _, err := s.agents.Agent(in.Agent); err != nil {
			return nil, err
		}
	}
	if err := checkClientTools(in.Tools); err != nil {
		return nil, err
	}
	req := chatRequest{SessionID: in.SessionID, Message: in.Message, ExpectedVersion: in.ExpectedVersion, Tools: in.Tools, Agent: in.Agent}
	run := carryon.NewRun{Message: in.Message, Tools: in.Tools, Agent: in.Agent, WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion}}
	here := s.reserve()
	defer here.release()
	ans, err := sessions.Write(ctx, s.sess, opChat, in.SessionID, in.RequestID, req, func(tx store.Tx, own string, now time.Time) (chatAnswer, error) {
		id := in.SessionID
		if id == "" {
			sess, err := s.sess.CreateInTx(ctx, tx, own, clipTitle(in.Message), in.Agent, now)
			if err != nil {
				return chatAnswer{}, err
			}
			id = sess.ID
		}
		r, err := s.startTx(ctx, id, run, carryon.MultitaskReject, in.RequestID, nil)(tx, own, now)
		if err != nil {
			return chatAnswer{}, err
		}
		if _, err := here.claim(ctx, tx, r, now); err != nil {
			return chatAnswer{}, err
		}
		return chatAnswer{SessionID: id, RunID: r.ID}, nil
	})
	if err != nil {
		return nil, err
	}
	launched := here.launch()
	if ans.Result != nil {
		return ans.Result, nil
	}
	s.notify.local(ans.RunID)
	if !launched {
		s.Wake()
	}
	done, err := s.Wait(ctx, ans.RunID)
	if err != nil {
		return nil, err
	}
	wm, err := s.sess.GetWorkingMemory(ctx, ans.SessionID)
	if err != nil {
		return nil, err
	}
	res := &carryon.ChatResult{SessionID: ans.SessionID, RunID: done.ID, Status: done.Status, Reply: done.Reply, Error: done.Error,
		WorkingMemory: wm.WorkingMemory, RequiredAction: done.RequiredAction}
	ans.Result = res
	if err := sessions.ReplaceAnswer(ctx, s.sess, opChat, in.SessionID, in.RequestID, req, ans); err != nil {
		return nil, err
	}
	return res, nil
}

// validMessage refuses a message a run cannot start with, before anything is written.
func validMessage(m string) error {
	if m == "" {
		return carryon.Errorf(carryon.EINVALID, "message must be a non-empty UTF-8 string")
	}
	return sessions.ValidMessages([]carryon.NewMessage{{Role: carryon.RoleUser, Content: m}})
}

// Wait blocks until the run ended or waits (for an approval or for tool outputs), and returns it.
func (s *Service) Wait(ctx context.Context, runID string) (*carryon.Run, error) {
	ch, unsub := s.notify.subscribeStatus(runID)
	defer unsub()
	for {
		run, err := s.GetRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		if run.Status.Terminal() || run.Status.Waiting() {
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
