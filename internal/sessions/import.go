package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bundle"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// importInput is what an import's request id is checked against: the bundle (by its checksum)
// and the options, never the bytes themselves.
type importInput struct {
	SHA256  string `json:"sha256"`
	Format  string `json:"format"`
	KeepIDs bool   `json:"keep_ids"`
	Parent  string `json:"parent"`
	Order   string `json:"order,omitempty"`
}

// Import recreates the session of a bundle (bundle.Decode checks it: truncated, tampered with,
// newer or unknown lines are EINVALID, too large ETOOLARGE) for the caller, in one transaction:
// all of it or nothing, and exactly once by request id. New ids by default; in.KeepIDs keeps the
// bundle's, and an id that exists (anyone's) refuses the import with ECONFLICT. A fork is linked
// to in.Parent or the bundle's parent id, a session of the caller's. The session's clock starts
// again (updated and last active now, expiring an idle TTL from now); every other row keeps
// its times. A run that was active when exported is stored cancelled: an import never resumes
// work. Workspace files are written before the transaction in a directory no session has, and
// moved into the session's after it commits.
func (s *Service) Import(ctx context.Context, in carryon.ImportInput) (*carryon.ImportResult, error) {
	if in.Format != "" && in.Format != carryon.ImportCarryon {
		return nil, carryon.Errorf(carryon.EINVALID, "format must be %s here, not %q", carryon.ImportCarryon, in.Format)
	}
	b, err := bundle.Decode(in.Bundle)
	if err != nil {
		return nil, err
	}
	p, err := planOf(b, in.KeepIDs)
	if err != nil {
		return nil, err
	}
	return s.importPlan(ctx, p, importInput{SHA256: b.SHA256, Format: carryon.ImportCarryon, KeepIDs: in.KeepIDs, Parent: in.Parent}, in)
}

// ImportMessages makes a new session of the caller holding msgs (OpenAI conversation items
// mapped to messages by the OpenAI door), through the same transaction as Import. raw is the
// body they came from, which the request id is checked against.
func (s *Service) ImportMessages(ctx context.Context, raw []byte, msgs []carryon.NewMessage, in carryon.ImportInput) (*carryon.ImportResult, error) {
	if len(raw) > bundle.MaxBytes {
		return nil, carryon.Errorf(carryon.ETOOLARGE, "the items are %d bytes; an import may hold %d", len(raw), bundle.MaxBytes)
	}
	if len(msgs) == 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "the items hold no message to import")
	}
	now := s.now()
	ttl := int64(s.cfg.IdleTTL / time.Second)
	sess := &bundle.Session{ID: carryon.NewID(carryon.SessionIDPrefix), Status: carryon.SessionActive, Version: 1, Agent: carryon.DefaultAgent,
		CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now, IdleTTLSeconds: ttl,
		MessageCount: int64(len(msgs)), LastSeq: int64(len(msgs))}
	p := &importPlan{sess: sess, counts: map[string]int64{bundle.KindSession: 1, bundle.KindMessage: int64(len(msgs))}}
	for i, m := range msgs {
		p.msgs = append(p.msgs, &carryon.Message{SessionID: sess.ID, Seq: int64(i) + 1, Role: m.Role, Kind: kindOf(m.Kind), Content: m.Content,
			Name: m.Name, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Metadata: compactJSON(m.Metadata), Tokens: estimateTokens(m),
			Version: 1, CreatedAt: now})
	}
	if err := p.check(nil); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	return s.importPlan(ctx, p, importInput{SHA256: hex.EncodeToString(sum[:]), Format: carryon.ImportOpenAI, Order: in.Order}, in)
}

func kindOf(k carryon.MessageKind) carryon.MessageKind {
	if k == "" {
		return carryon.KindMessage
	}
	return k
}

// importPlan stores p in one write under the caller's request id.
func (s *Service) importPlan(ctx context.Context, p *importPlan, fp importInput, in carryon.ImportInput) (*carryon.ImportResult, error) {
	stage := ""
	if len(p.files) > 0 {
		if s.cfg.Workspaces == "" {
			return nil, carryon.Errorf(carryon.EINVALID, "the bundle holds workspace files and this server keeps no workspaces")
		}
		// Named for the session it is for: left behind by a crash, the sweeper moves it into
		// place if the import committed and removes it if not (sweepStagedImports).
		stage = filepath.Join(s.cfg.Workspaces, stageName(p.sess.ID))
		if err := workspace.WriteAll(stage, p.files); err != nil {
			_ = os.RemoveAll(stage)
			return nil, carryon.Errorf(carryon.EINTERNAL, "import: %v", err)
		}
	}
	made := ""
	out, err := Write(ctx, s, "session.import", "", in.RequestID, fp, func(tx store.Tx, own string, now time.Time) (*carryon.ImportResult, error) {
		made = ""
		sess, err := p.store(ctx, tx, own, in, now)
		if err != nil {
			return nil, err
		}
		made = sess.ID
		return &carryon.ImportResult{Session: sess, Counts: p.counts}, nil
	})
	if stage != "" {
		if err == nil && out.Session.ID == made {
			failpoint.Hit(failpoint.ImportCommitted)
			err = s.moveStaged(stage, made)
		} else {
			_ = os.RemoveAll(stage)
		}
	}
	return out, err
}

// moveStaged makes the staged workspace the session id's.
func (s *Service) moveStaged(stage, id string) error {
	dst := s.workspaceDir(id)
	if dst == "" {
		return carryon.Errorf(carryon.EINTERNAL, "import: session %s can have no workspace", id)
	}
	_ = os.RemoveAll(dst) // a directory left over by a session of that id deleted before
	if err := os.Rename(stage, dst); err != nil {
		s.cfg.Logger.Error("move the imported workspace into place", "session_id", id, "err", err)
		return carryon.Errorf(carryon.EINTERNAL, "import: the session is stored but its files could not be moved into place: %v", err)
	}
	return nil
}

// store writes the plan's rows in tx for own and returns the session stored.
func (p *importPlan) store(ctx context.Context, tx store.Tx, own string, in carryon.ImportInput, now time.Time) (*carryon.Session, error) {
	if err := tx.LockOwner(ctx, own); err != nil {
		return nil, err
	}
	sess := p.sess.Stored(own)
	if !in.KeepIDs {
		sess.ExternalID = ""
	}
	sess.UpdatedAt, sess.LastActiveAt = now, now
	sess.ExpiresAt = now.Add(time.Duration(sess.IdleTTLSeconds) * time.Second)
	if f := p.fork; f != nil {
		parentID := in.Parent
		if parentID == "" {
			parentID = f.ParentID
		}
		parent, err := tx.GetSession(ctx, own, parentID)
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return nil, carryon.Errorf(carryon.EINVALID, "the bundle is a fork of session %s, which is not a session of yours: import its parent first and name it with parent", parentID)
		} else if err != nil {
			return nil, err
		}
		if parent.LastSeq < f.ForkSeq {
			return nil, carryon.Errorf(carryon.EINVALID, "the bundle is a fork at seq %d of a session that session %s, with %d messages, cannot be", f.ForkSeq, parentID, parent.LastSeq)
		}
		sess.ParentID, sess.ForkSeq, sess.ForkVersion = parent.ID, f.ForkSeq, f.ForkVersion
	}
	if err := tx.InsertSession(ctx, sess); err != nil {
		if carryon.ErrorCode(err) == carryon.ECONFLICT {
			return nil, carryon.Errorf(carryon.ECONFLICT, "session %s (or its external id) exists already; import with new ids instead of keep_ids", sess.ID)
		}
		return nil, err
	}
	if b := p.sess.Budget; !b.Empty() {
		if err := tx.PutSessionBudget(ctx, own, sess.ID, b, now); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(p.msgs); i += carryon.MaxAppendMessages {
		if err := tx.InsertMessages(ctx, own, p.msgs[i:min(len(p.msgs), i+carryon.MaxAppendMessages)]); err != nil {
			return nil, err
		}
	}
	failpoint.Hit(failpoint.ImportWriting)
	if len(p.tombs) > 0 {
		if err := tx.InsertTombstones(ctx, own, sess.ID, p.tombs); err != nil {
			return nil, err
		}
	}
	for _, r := range p.revs {
		if err := tx.InsertWorkingMemoryRevision(ctx, own, r); err != nil {
			return nil, err
		}
	}
	for _, br := range p.runs {
		r := br.Stored(own)
		if r.Status.Active() {
			r.Status, r.Error = carryon.RunCancelled, "the run was "+string(br.Status)+" when its session was exported; an import does not resume it"
			if r.FinishedAt == nil {
				r.FinishedAt = &now
			}
		}
		if err := tx.InsertRun(ctx, r); err != nil {
			if carryon.ErrorCode(err) == carryon.ECONFLICT {
				return nil, carryon.Errorf(carryon.ECONFLICT, "run %s exists already; import with new ids instead of keep_ids", r.ID)
			}
			return nil, err
		}
	}
	for _, a := range p.acts {
		if err := tx.InsertAction(ctx, own, a); err != nil {
			if carryon.ErrorCode(err) == carryon.ECONFLICT {
				return nil, carryon.Errorf(carryon.ECONFLICT, "action %s exists already; import with new ids instead of keep_ids", a.ID)
			}
			return nil, err
		}
	}
	for _, e := range p.evs {
		ev := *e
		if err := tx.AppendEvent(ctx, own, &ev); err != nil {
			return nil, err
		}
		if ev.Seq != e.Seq {
			return nil, carryon.Errorf(carryon.EINTERNAL, "import: event %d of run %s was stored as %d", e.Seq, e.RunID, ev.Seq)
		}
	}
	return sess, nil
}
