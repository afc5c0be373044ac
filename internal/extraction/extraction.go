// Package extraction learns facts about a user from their sessions: a model call reads the turns
// of a session since its last extraction and answers the durable facts they state, which go to
// the user's long-term memory through the consolidating write (longterm.Service.AddFacts), so a
// fact learned twice updates one item.
//
// It happens once per turn: the session's mark (how far facts were learned, store.Extractions)
// moves in the same transaction as the facts, and only from where the extraction started, so an
// extraction that a crash cut off wrote nothing and the next one reads the same turns again, and
// two extractions of one session at once write the facts once (the second answers ECONFLICT).
// It owns the prompt and the parsing of the answer; it knows nothing of HTTP.
package extraction

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/store"
)

// Limits of one extraction.
const (
	// MaxMessages is how many messages after the mark one extraction reads (the rest: the next).
	MaxMessages = 200
	// MaxFacts is how many facts of one answer are kept.
	MaxFacts = 20
	// MaxFactBytes bounds one fact's text.
	MaxFactBytes = 1000
	// maxTranscriptBytes bounds the text sent to the model.
	maxTranscriptBytes = 64 << 10
)

// Prompt is the system prompt of the extraction call.
const Prompt = `You extract durable facts about the user from a conversation: preferences, personal details, ` +
	`decisions, plans and standing instructions that will still be true in a later conversation. ` +
	`Leave out what is only about this conversation, what the assistant said of itself, and guesses. ` +
	`Write each fact as one short sentence about the user in the third person ("Prefers vim."). ` +
	`Answer with JSON only: {"facts": ["…", "…"]}, an empty list when there is nothing to keep.`

// Learner is a profile's extraction: the model that reads the turns and where the facts go.
type Learner struct {
	Provider model.Provider
	Model    string
	// Namespace is where the facts are written (default longterm.FactsNamespace).
	Namespace string
	// Timeout bounds the model call (default 60s).
	Timeout time.Duration
}

// Service runs extractions.
type Service struct {
	st  store.Store
	mem *longterm.Service
	// learner returns the extraction of the named agent profile (false: it learns nothing).
	learner func(agent string) (Learner, bool)
	now     func() time.Time
	idle    map[string]time.Duration // the profiles learned from when idle (WithIdle)
	log     *slog.Logger
	mu      sync.Mutex
	tries   map[string]int // failed idle extractions, by session and last activity
	spans   Spans
}

// Spans traces the writes of learned facts (telemetry.Telemetry): the span of one write, ended
// with how many items it created and updated.
type Spans interface {
	MemoryWrite(ctx context.Context, namespace, sessionID string) (context.Context, func(created, updated int, err error))
}

// noSpans traces nothing.
type noSpans struct{}

func (noSpans) MemoryWrite(ctx context.Context, _, _ string) (context.Context, func(int, int, error)) {
	return ctx, func(int, int, error) {}
}

// WithSpans sets what traces the writes of learned facts (nil: nothing), and returns s.
func (s *Service) WithSpans(sp Spans) *Service {
	if sp == nil {
		sp = noSpans{}
	}
	s.spans = sp
	return s
}

// New returns an extraction service over st, writing facts through mem; learner names each
// profile's extraction.
func New(st store.Store, mem *longterm.Service, learner func(agent string) (Learner, bool)) *Service {
	return &Service{st: st, mem: mem, learner: learner, now: time.Now, log: slog.New(slog.DiscardHandler), tries: map[string]int{}, spans: noSpans{}}
}

// Extract learns facts from the caller's session: the turns after its mark, read by the model
// of the session's profile, written to the caller's long-term memory, and the mark moved past
// them, in one transaction. A session with no new turns answers at once without a model call.
// ENOTFOUND, EINVALID (the profile learns nothing, or the caller turned learning facts off in
// their settings), EUNAUTHORIZED, ECONFLICT (another extraction
// of the session wrote first), EUNAVAILABLE (the model failed: nothing was written).
func (s *Service) Extract(ctx context.Context, sessionID string) (*carryon.Extraction, error) {
	own := carryon.UserIDFromContext(ctx)
	if own == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	var sess *carryon.Session
	var from int64
	var msgs []*carryon.Message
	err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		if sess, err = tx.GetSession(ctx, own, sessionID); err != nil {
			return err
		}
		set, err := tx.UserSettings(ctx, own)
		if err != nil {
			return err
		}
		if !set.LearnFacts {
			return carryon.Errorf(carryon.EINVALID, "you turned learning facts off: nothing is learned from your sessions until PATCH /v1/me/settings {\"learn_facts\": true}")
		}
		if from, err = tx.ExtractedSeq(ctx, own, sessionID); err != nil {
			return err
		}
		msgs, err = tx.MessagesAfter(ctx, own, sess, from, MaxMessages)
		return err
	})
	if err != nil {
		return nil, err
	}
	l, ok := s.learner(sess.Agent)
	if !ok {
		return nil, carryon.Errorf(carryon.EINVALID, "the session's agent %q learns no facts: give it memory_extraction in the agents file", sess.Agent)
	}
	if l.Namespace == "" {
		l.Namespace = longterm.FactsNamespace
	}
	out := &carryon.Extraction{SessionID: sessionID, FromSeq: from, ToSeq: from, Version: sess.Version, Namespace: l.Namespace, Facts: []*carryon.LongTermAdded{}}
	transcript := render(msgs)
	if len(msgs) == 0 {
		return out, nil
	}
	to := msgs[len(msgs)-1].Seq
	var texts []string
	if transcript != "" {
		if texts, err = s.ask(ctx, l, transcript); err != nil {
			return nil, err
		}
	}
	wctx, end := s.spans.MemoryWrite(ctx, l.Namespace, sessionID)
	facts, err := s.mem.AddFacts(wctx, l.Namespace, texts, func(ctx context.Context, tx store.Tx) (bool, error) {
		return tx.SetExtracted(ctx, own, sessionID, from, to, sess.Version, s.now().UTC())
	})
	updated := 0
	for _, f := range facts {
		if f.ConsolidatedInto != "" {
			updated++
		}
	}
	end(len(facts)-updated, updated, err)
	if err != nil {
		return nil, err
	}
	out.ToSeq, out.Facts = to, append(out.Facts, facts...)
	return out, nil
}

// render writes the user's and the assistant's messages as a transcript (tools and summaries
// left out), bounded.
func render(msgs []*carryon.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Kind != carryon.KindMessage && m.Kind != "" || m.Content == "" || m.Role != carryon.RoleUser && m.Role != carryon.RoleAssistant {
			continue
		}
		line := fmt.Sprintf("%s: %s\n", m.Role, m.Content)
		if b.Len()+len(line) > maxTranscriptBytes {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// ask makes the model call and parses its facts.
func (s *Service) ask(ctx context.Context, l Learner, transcript string) ([]string, error) {
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := model.Collect(l.Provider.Stream(cctx, model.Request{Model: l.Model, System: Prompt,
		Messages: []model.Message{{Role: model.RoleUser, Content: "The conversation:\n\n" + transcript}}}))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "the extraction's model call failed (%v); nothing was written, retry", err)
	}
	return Parse(resp.Text)
}

// Parse reads the facts of a model's answer: {"facts": [...]} (strings, or objects with a text),
// inside a code fence or not; at most MaxFacts of at most MaxFactBytes each. An answer that holds
// no such JSON is EUNAVAILABLE (the model did not do its job; nothing is written).
func Parse(answer string) ([]string, error) {
	s := strings.TrimSpace(answer)
	if i, j := strings.Index(s, "{"), strings.LastIndex(s, "}"); i >= 0 && j > i {
		s = s[i : j+1]
	}
	var body struct {
		Facts []json.RawMessage `json:"facts"`
	}
	if err := json.Unmarshal([]byte(s), &body); err != nil || body.Facts == nil {
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "the extraction's model answered no {\"facts\": […]} JSON; nothing was written")
	}
	var out []string
	for _, raw := range body.Facts {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var obj struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(raw, &obj)
			text = obj.Text
		}
		if text = strings.TrimSpace(text); text != "" && len(text) <= MaxFactBytes {
			out = append(out, text)
		}
		if len(out) == MaxFacts {
			break
		}
	}
	return out, nil
}
