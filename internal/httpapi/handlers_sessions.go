package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// sessionPath is the URL of a session.
func sessionPath(id string) string { return "/v1/sessions/" + url.PathEscape(id) }

// answersSession completes a write that answers the session it wrote: the answer is tagged with
// the session's version, and a write that makes a session (201) says where it is.
func answersSession[In any](wr writeRoute[In, *carryon.Session]) writeRoute[In, *carryon.Session] {
	wr.version = func(sess *carryon.Session) int64 { return sess.Version }
	if wr.status == http.StatusCreated {
		wr.location = func(_ *http.Request, sess *carryon.Session) string { return sessionPath(sess.ID) }
	}
	return wr
}

func (s *server) handleSessionCreate() http.HandlerFunc {
	return answersSession(writeRoute[carryon.NewSession, *carryon.Session]{
		body:     bodyOptions{optional: true},
		controls: sessionWrite(func(in *carryon.NewSession) *carryon.WriteOptions { return &in.WriteOptions }, false),
		call: func(ctx context.Context, _ *http.Request, in carryon.NewSession) (*carryon.Session, error) {
			return s.sessions.Create(ctx, in)
		},
		status: http.StatusCreated,
	}).handler(s)
}

func (s *server) handleSessionList() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (carryon.SessionPage, error) {
		f := carryon.SessionFilter{
			Status:       carryon.SessionStatus(q.str("status")),
			Limit:        int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
			Cursor:       q.str("cursor"),
			ExternalID:   q.str("external_id"),
			Query:        q.str("q"),
			Metadata:     q.members("metadata"),
			Agent:        q.str("agent"),
			CreatedAfter: q.time("created_after"), CreatedBefore: q.time("created_before"),
			UpdatedAfter: q.time("updated_after"), UpdatedBefore: q.time("updated_before"),
		}
		if q.has("metadata") {
			q.errorf("query parameter \"metadata\" takes a key: metadata[key]=value")
		}
		if q.has("q") && f.Query == "" {
			q.errorf("query parameter \"q\" is empty: leave it out to list without searching")
		}
		if q.err != nil {
			return carryon.SessionPage{}, q.err
		}
		page, err := s.sessions.List(r.Context(), f)
		if err != nil {
			return carryon.SessionPage{}, err
		}
		out := *page
		out.Items = orEmpty(out.Items)
		return out, nil
	})
}

func (s *server) handleSessionGet() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &query{values: r.URL.Query()}
		n := int(q.int("messages", 0, carryon.MaxMessageWindow, int64(carryon.DefaultMessageWindow)))
		if n == 0 {
			n = -1 // none
		}
		view, err := s.sessions.Get(r.Context(), r.PathValue("id"), carryon.GetOptions{Messages: n})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		setETag(w, view.Version)
		if noneMatch(r, view.Version) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		out := *view
		if out.WorkingMemory == nil {
			out.WorkingMemory = carryon.WorkingMemory{}
		}
		out.Messages = orEmpty(out.Messages)
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleSessionUpdate() http.HandlerFunc {
	return answersSession(writeRoute[carryon.SessionUpdate, *carryon.Session]{
		controls: sessionWrite(func(in *carryon.SessionUpdate) *carryon.WriteOptions { return &in.WriteOptions }, true),
		call:     onID(s.sessions.Update),
		status:   http.StatusOK,
	}).handler(s)
}

// sessionStateChange serves close and restore: an optional body of write options, a session back.
func (s *server) sessionStateChange(call func(context.Context, string, carryon.WriteOptions) (*carryon.Session, error)) http.HandlerFunc {
	return answersSession(writeRoute[carryon.WriteOptions, *carryon.Session]{
		body:     bodyOptions{optional: true},
		controls: sessionWrite(itself[carryon.WriteOptions], true),
		call:     onID(call),
		status:   http.StatusOK,
	}).handler(s)
}

func (s *server) handleSessionClose() http.HandlerFunc { return s.sessionStateChange(s.sessions.Close) }

func (s *server) handleSessionRestore() http.HandlerFunc {
	return s.sessionStateChange(s.sessions.Restore)
}

func (s *server) handleSessionDelete() http.HandlerFunc {
	return writeRoute[carryon.WriteOptions, struct{}]{
		body:     bodyOptions{optional: true},
		controls: sessionWrite(itself[carryon.WriteOptions], true),
		call:     onID(noResult(s.sessions.Delete)),
		status:   http.StatusNoContent,
	}.handler(s)
}

func (s *server) handleSessionFork() http.HandlerFunc {
	return answersSession(writeRoute[carryon.ForkInput, *carryon.Session]{
		body: bodyOptions{optional: true},
		// A fork writes a new session and leaves its source alone, so it needs no version.
		controls: sessionWrite(func(in *carryon.ForkInput) *carryon.WriteOptions { return &in.WriteOptions }, false),
		call:     onID(s.sessions.Fork),
		status:   http.StatusCreated,
	}).handler(s)
}

func (s *server) handleMessagesAppend() http.HandlerFunc {
	return writeRoute[wire.AppendRequest, carryon.AppendResult]{
		controls: sessionWrite(func(in *wire.AppendRequest) *carryon.WriteOptions { return &in.WriteOptions }, true),
		call: func(ctx context.Context, r *http.Request, in wire.AppendRequest) (carryon.AppendResult, error) {
			res, err := s.sessions.AppendMessages(ctx, r.PathValue("id"), carryon.AppendInput{Messages: in.Messages, WorkingMemoryPatch: in.WorkingMemoryPatch, WriteOptions: in.WriteOptions})
			if err != nil {
				return carryon.AppendResult{}, err
			}
			out := *res
			out.Messages = orEmpty(out.Messages)
			return out, nil
		},
		status:  http.StatusCreated,
		version: func(res carryon.AppendResult) int64 { return res.Version },
		// Where the appended messages can be read again: the page that starts with the first.
		location: func(r *http.Request, res carryon.AppendResult) string {
			loc := sessionPath(r.PathValue("id")) + "/messages"
			if len(res.Messages) > 0 {
				loc += "?after_seq=" + strconv.FormatInt(res.Messages[0].Seq-1, 10)
			}
			return loc
		},
	}.handler(s)
}

func (s *server) handleMessagesList() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (carryon.MessagePage, error) {
		page, err := s.sessions.ListMessages(r.Context(), r.PathValue("id"), carryon.MessageFilter{
			Cursor:         q.str("cursor"),
			AfterSeq:       q.int("after_seq", 0, 1<<53-1, 0),
			BeforeSeq:      q.int("before_seq", 1, 1<<53-1, 0),
			Limit:          int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
			IncludeDeleted: q.str("include_deleted") == "true",
		})
		if err != nil {
			return carryon.MessagePage{}, err
		}
		out := *page
		out.Items = orEmpty(out.Items)
		return out, nil
	})
}

// handleMessageDelete serves DELETE /v1/sessions/{id}/messages/{seq}: the message's tombstone,
// the session back at its new version.
func (s *server) handleMessageDelete() http.HandlerFunc {
	return answersSession(writeRoute[carryon.WriteOptions, *carryon.Session]{
		body:     bodyOptions{optional: true},
		controls: sessionWrite(itself[carryon.WriteOptions], true),
		call: func(ctx context.Context, r *http.Request, in carryon.WriteOptions) (*carryon.Session, error) {
			seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
			if err != nil || seq < 1 {
				return nil, carryon.Errorf(carryon.EINVALID, "seq in the path must be a positive integer, not %q", r.PathValue("seq"))
			}
			return s.sessions.DeleteMessage(ctx, r.PathValue("id"), seq, in)
		},
		status: http.StatusOK,
	}).handler(s)
}

// workingMemoryAnswer is a working memory state as it is answered (an empty document is {}).
func workingMemoryAnswer(st *carryon.WorkingMemoryState) carryon.WorkingMemoryState {
	out := *st
	if out.WorkingMemory == nil {
		out.WorkingMemory = carryon.WorkingMemory{}
	}
	return out
}

func (s *server) handleWorkingMemoryGet() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, err := s.sessions.GetWorkingMemory(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		setETag(w, st.Version)
		s.writeJSON(w, r, http.StatusOK, workingMemoryAnswer(st))
	}
}

func (s *server) handleWorkingMemoryPatch() http.HandlerFunc {
	return writeRoute[wire.WorkingMemoryPatchRequest, carryon.WorkingMemoryState]{
		read:     (*server).decodeWorkingMemoryPatch,
		controls: sessionWrite(func(in *wire.WorkingMemoryPatchRequest) *carryon.WriteOptions { return &in.WriteOptions }, true),
		call: func(ctx context.Context, r *http.Request, in wire.WorkingMemoryPatchRequest) (carryon.WorkingMemoryState, error) {
			st, err := s.sessions.PatchWorkingMemory(ctx, r.PathValue("id"), carryon.WorkingMemoryPatch{Patch: in.Patch, WriteOptions: in.WriteOptions})
			if err != nil {
				return carryon.WorkingMemoryState{}, err
			}
			return workingMemoryAnswer(st), nil
		},
		status:  http.StatusOK,
		version: func(st carryon.WorkingMemoryState) int64 { return st.Version },
	}.handler(s)
}

// decodeWorkingMemoryPatch reads {patch, expected_version?, request_id?} sent as application/json, or a
// bare merge patch sent as application/merge-patch+json.
func (s *server) decodeWorkingMemoryPatch(r *http.Request) (wire.WorkingMemoryPatchRequest, error) {
	var in wire.WorkingMemoryPatchRequest
	body, media, err := s.readBody(r, bodyOptions{mergePatch: true})
	if err != nil {
		return in, err
	}
	if media == mediaMergePatch {
		var v any
		if err := unmarshalStrict(body, &v); err != nil {
			return in, err
		}
		in.Patch = json.RawMessage(body)
		return in, nil
	}
	if err := unmarshalStrict(body, &in); err != nil {
		return in, err
	}
	if len(in.Patch) == 0 {
		return in, carryon.Errorf(carryon.EINVALID, "field \"patch\" is required: a JSON merge patch object")
	}
	return in, nil
}

func (s *server) handleWorkingMemoryHistory() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (carryon.RevisionPage, error) {
		page, err := s.sessions.WorkingMemoryHistory(r.Context(), r.PathValue("id"), carryon.RevisionFilter{
			Cursor:                     q.str("cursor"),
			BeforeWorkingMemoryVersion: q.int("before", 1, 1<<53-1, 0),
			Limit:                      int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
		})
		if err != nil {
			return carryon.RevisionPage{}, err
		}
		out := *page
		out.Items = orEmpty(out.Items)
		return out, nil
	})
}

func (s *server) handleWorkingMemoryDiff() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (carryon.WorkingMemoryDiff, error) {
		diff, err := s.sessions.WorkingMemoryDiff(r.Context(), r.PathValue("id"), q.int("from", 0, 1<<53-1, 0), q.int("to", 0, 1<<53-1, 0))
		if err != nil {
			return carryon.WorkingMemoryDiff{}, err
		}
		out := *diff
		out.Changes = orEmpty(out.Changes)
		return out, nil
	})
}
