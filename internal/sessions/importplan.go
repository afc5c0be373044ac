package sessions

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
	"github.com/carryon-hub/carryon/internal/jsongate"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// importPlan is what an import stores: the rows of a bundle, checked, with the ids they are
// stored under.
type importPlan struct {
	sess   *bundle.Session
	fork   *bundle.Fork
	msgs   []*carryon.Message
	tombs  []*carryon.Message
	revs   []*carryon.WorkingMemoryRevision
	runs   []*bundle.Run
	acts   []*carryon.Action
	evs    []*carryon.Event
	files  []workspace.File
	counts map[string]int64
}

// planOf checks b and returns what importing it stores. Without keepIDs every session, run and
// action id of the bundle is replaced by a new one wherever it occurs in its lines (events,
// request ids and idempotency keys name them too), so the copy never names the original's rows.
func planOf(b *bundle.Bundle, keepIDs bool) (*importPlan, error) {
	lines := b.Lines
	if !keepIDs {
		var err error
		if lines, err = renamed(b); err != nil {
			return nil, err
		}
	}
	p := &importPlan{counts: map[string]int64{}}
	runs := map[string]bool{}
	paths := map[string]bool{}
	order := map[string]int{}
	for i, k := range bundle.Kinds {
		order[k] = i
	}
	last := -1
	for i, l := range lines {
		n := i + 2 // the line's number: the header is line 1
		if order[l.Kind] < last {
			return nil, carryon.Errorf(carryon.EINVALID, "line %d: a %s line after the %s lines (a bundle's lines come kind by kind, in the order of docs/EXPORT.md)", n, l.Kind, bundle.Kinds[last])
		}
		last = order[l.Kind]
		if l.Kind != bundle.KindSession && p.sess == nil {
			return nil, carryon.Errorf(carryon.EINVALID, "line %d: the session line must come first after the header", n)
		}
		p.counts[l.Kind]++
		switch l.Kind {
		case bundle.KindSession:
			if p.sess != nil {
				return nil, carryon.Errorf(carryon.EINVALID, "line %d: a second session line", n)
			}
			p.sess = l.Session
		case bundle.KindFork:
			if p.fork != nil {
				return nil, carryon.Errorf(carryon.EINVALID, "line %d: a second fork line", n)
			}
			p.fork = l.Fork
		case bundle.KindMessage:
			p.msgs = append(p.msgs, l.Message)
		case bundle.KindTombstone:
			t := l.Tombstone
			p.tombs = append(p.tombs, &carryon.Message{SessionID: p.sess.ID, Seq: t.Seq, Version: t.Version, Role: t.Role, Kind: t.Kind, CreatedAt: t.CreatedAt, Deleted: true})
		case bundle.KindRevision:
			p.revs = append(p.revs, l.Revision)
		case bundle.KindRun:
			if runs[l.Run.ID] {
				return nil, carryon.Errorf(carryon.EINVALID, "line %d: run %s twice", n, l.Run.ID)
			}
			runs[l.Run.ID] = true
			p.runs = append(p.runs, l.Run)
		case bundle.KindAction:
			p.acts = append(p.acts, l.Action)
		case bundle.KindEvent:
			p.evs = append(p.evs, l.Event)
		case bundle.KindFile:
			f := l.File
			if !workspace.ValidPath(f.Path) || paths[f.Path] {
				return nil, carryon.Errorf(carryon.EINVALID, "line %d: %q is no workspace file path, or a second file of that path", n, f.Path)
			}
			paths[f.Path] = true
			p.files = append(p.files, workspace.File{Path: f.Path, Mode: fs.FileMode(f.Mode).Perm(), Data: f.Data})
		}
	}
	if p.sess == nil {
		return nil, carryon.Errorf(carryon.EINVALID, "the bundle has no session line")
	}
	return p, p.check(runs)
}

// renamed returns b's lines with new ids for the session, runs and actions it holds.
func renamed(b *bundle.Bundle) ([]bundle.Line, error) {
	var pairs []string
	for _, l := range b.Lines {
		var old string
		switch {
		case l.Session != nil:
			old = l.Session.ID
		case l.Run != nil:
			old = l.Run.ID
		case l.Action != nil:
			old = l.Action.ID
		default:
			continue
		}
		if len(old) < 8 {
			return nil, carryon.Errorf(carryon.EINVALID, "id %q is too short to be a carryon id", old)
		}
		prefix := ""
		if i := strings.Index(old, "_"); i >= 0 {
			prefix = old[:i+1]
		}
		pairs = append(pairs, old, carryon.NewID(prefix))
	}
	r := strings.NewReplacer(pairs...)
	out := make([]bundle.Line, len(b.Lines))
	for i, raw := range b.Raw {
		if err := jsongate.Decode([]byte(r.Replace(string(raw))), &out[i]); err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "line %d: %v", i+2, err)
		}
	}
	return out, nil
}

// check refuses a plan whose rows do not make one consistent session.
func (p *importPlan) check(runs map[string]bool) error {
	s := p.sess
	bad := func(format string, args ...any) error {
		return carryon.Errorf(carryon.EINVALID, "the bundle's %s", fmt.Sprintf(format, args...))
	}
	switch {
	case !strings.HasPrefix(s.ID, carryon.SessionIDPrefix):
		return bad("session id %q is no session id", s.ID)
	case s.Status != carryon.SessionActive && s.Status != carryon.SessionClosed && s.Status != carryon.SessionExpired:
		return bad("session status %q is none of active, closed, expired", s.Status)
	case s.Version < 1 || s.LastSeq < 0 || s.MessageCount < 0 || s.MessageCount > s.LastSeq || s.WorkingMemoryVersion < 0 || s.IdleTTLSeconds < 0:
		return bad("session has impossible counters (version %d, last_seq %d, message_count %d, memory_version %d)", s.Version, s.LastSeq, s.MessageCount, s.WorkingMemoryVersion)
	case len(s.ExternalID) > carryon.MaxExternalIDLen:
		return bad("external_id is longer than %d bytes", carryon.MaxExternalIDLen)
	}
	if err := validTitle(s.Title); err != nil {
		return err
	}
	if err := validMetadata(s.Metadata); err != nil {
		return err
	}
	if err := s.Budget.Check("session.budget"); err != nil {
		return carryon.Errorf(carryon.EINVALID, "the bundle's %s", carryon.ErrorMessage(err))
	}
	s.Budget = normalBudget(s.Budget)
	lo := int64(0)
	if f := p.fork; f != nil {
		if f.ParentID == "" || f.ForkSeq < 0 || f.ForkSeq > s.LastSeq || f.ForkVersion < 1 {
			return bad("fork line is not a fork point (parent %q, fork_seq %d, fork_version %d)", f.ParentID, f.ForkSeq, f.ForkVersion)
		}
		lo = f.ForkSeq
	}
	if int64(len(p.msgs)) != s.LastSeq-lo {
		return bad("session's messages are seqs %d to %d, but it holds %d message lines", lo+1, s.LastSeq, len(p.msgs))
	}
	deleted := map[int64]bool{}
	for _, t := range p.tombs {
		if t.Seq < 1 || t.Seq > s.LastSeq || deleted[t.Seq] || t.Version < 1 || t.Version > s.Version {
			return bad("tombstone of message %d at version %d is out of place", t.Seq, t.Version)
		}
		deleted[t.Seq] = true
	}
	var chunk []carryon.NewMessage
	for i, m := range p.msgs {
		if m.SessionID != s.ID || m.Seq != lo+int64(i)+1 || m.Version < 1 || m.Version > s.Version {
			return bad("message line %d (seq %d of session %s at version %d) is out of place: seqs go on one by one from %d", i+1, m.Seq, m.SessionID, m.Version, lo+1)
		}
		if m.Deleted != deleted[m.Seq] {
			return bad("message %d and the tombstones disagree on whether it is deleted", m.Seq)
		}
		if m.Deleted {
			if m.Content != "" || m.ToolCalls != nil || m.Metadata != nil || !m.Role.Valid() {
				return bad("deleted message %d holds content", m.Seq)
			}
			continue
		}
		if m.RunID != "" && !runs[m.RunID] {
			return bad("message %d names run %s, which it does not hold", m.Seq, m.RunID)
		}
		chunk = append(chunk, carryon.NewMessage{Role: m.Role, Content: m.Content, Kind: m.Kind, Name: m.Name, ToolCalls: m.ToolCalls,
			ToolCallID: m.ToolCallID, CoversFrom: m.CoversFrom, CoversTo: m.CoversTo, Metadata: m.Metadata})
		if len(chunk) == carryon.MaxAppendMessages || i == len(p.msgs)-1 {
			if err := validMessages(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if len(chunk) > 0 {
		if err := validMessages(chunk); err != nil {
			return err
		}
	}
	for i, r := range p.revs {
		if r.SessionID != s.ID || r.WorkingMemoryVersion != int64(i)+1 || r.Version < 1 || r.Version > s.Version || r.Document == nil {
			return bad("working-memory revision line %d (memory version %d of session %s) is out of place: memory versions go on one by one from 1", i+1, r.WorkingMemoryVersion, r.SessionID)
		}
		if err := carryon.CheckJSONText("working memory", mustJSON(r.Document)); err != nil {
			return err
		}
	}
	if int64(len(p.revs)) != s.WorkingMemoryVersion {
		return bad("session is at memory version %d but holds %d revisions", s.WorkingMemoryVersion, len(p.revs))
	}
	for _, r := range p.runs {
		if r.SessionID != s.ID || r.Status == "" || !(r.Status.Active() || r.Status.Terminal()) {
			return bad("run %s (of session %s, status %q) is out of place", r.ID, r.SessionID, r.Status)
		}
	}
	for _, a := range p.acts {
		if !runs[a.RunID] || a.SessionID != s.ID {
			return bad("action %s names run %s of session %s, which it does not hold", a.ID, a.RunID, a.SessionID)
		}
	}
	next := map[string]int64{}
	for _, e := range p.evs {
		if !runs[e.RunID] || e.Seq != next[e.RunID]+1 {
			return bad("event %d of run %s is out of place: a run's events go on one by one from 1", e.Seq, e.RunID)
		}
		next[e.RunID] = e.Seq
		if e.Data != nil && !json.Valid(e.Data) {
			return bad("event %d of run %s holds no JSON", e.Seq, e.RunID)
		}
	}
	return nil
}
