package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// sessionPath is the URL of a session.
func sessionPath(id string) string { return "/v1/sessions/" + url.PathEscape(id) }

// answerSession answers with a session, tagged with its version.
func (s *server) answerSession(w http.ResponseWriter, r *http.Request, rec *carryon.WriteReceipt, status int, sess *carryon.Session) {
	if rec != nil {
		markReplay(w, rec)
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", sessionPath(sess.ID))
	}
	setETag(w, sess.Version)
	s.writeJSON(w, r, status, sess)
}

func (s *server) handleSessionCreate() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.NewSession](s, r, bodyOptions{optional: true})
		if err == nil {
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, false)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		sess, err := s.sessions.Create(ctx, in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.answerSession(w, r, rec, http.StatusCreated, sess)
	}
}

func (s *server) handleSessionList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &query{values: r.URL.Query()}
		page, err := s.sessions.List(r.Context(), carryon.SessionFilter{
			Status: carryon.SessionStatus(q.str("status")),
			Limit:  int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
			Cursor: q.str("cursor"),
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := *page
		if out.Items == nil {
			out.Items = []*carryon.Session{}
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
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
		if out.Messages == nil {
			out.Messages = []*carryon.Message{}
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleSessionUpdate() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.SessionUpdate](s, r, bodyOptions{})
		if err == nil {
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		sess, err := s.sessions.Update(ctx, r.PathValue("id"), in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.answerSession(w, r, rec, http.StatusOK, sess)
	}
}

// sessionStateChange serves close and restore: an optional body of write options, a session back.
func (s *server) sessionStateChange(call func(context.Context, string, carryon.WriteOptions) (*carryon.Session, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.WriteOptions](s, r, bodyOptions{optional: true})
		if err == nil {
			in, err = s.writeOptions(r, in, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		sess, err := call(ctx, r.PathValue("id"), in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.answerSession(w, r, rec, http.StatusOK, sess)
	}
}

func (s *server) handleSessionClose() http.HandlerFunc { return s.sessionStateChange(s.sessions.Close) }

func (s *server) handleSessionRestore() http.HandlerFunc {
	return s.sessionStateChange(s.sessions.Restore)
}

func (s *server) handleSessionDelete() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.WriteOptions](s, r, bodyOptions{optional: true})
		if err == nil {
			in, err = s.writeOptions(r, in, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		if err := s.sessions.Delete(ctx, r.PathValue("id"), in); err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *server) handleSessionFork() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.ForkInput](s, r, bodyOptions{optional: true})
		if err == nil {
			// A fork writes a new session and leaves its source alone, so it needs no version.
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, false)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		sess, err := s.sessions.Fork(ctx, r.PathValue("id"), in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.answerSession(w, r, rec, http.StatusCreated, sess)
	}
}

func (s *server) handleMessagesAppend() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[AppendRequest](s, r, bodyOptions{})
		if err == nil {
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		id := r.PathValue("id")
		ctx, rec := receipt(r)
		res, err := s.sessions.AppendMessages(ctx, id, carryon.AppendInput{Messages: in.Messages, WriteOptions: in.WriteOptions})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := *res
		if out.Messages == nil {
			out.Messages = []*carryon.Message{}
		}
		markReplay(w, rec)
		loc := sessionPath(id) + "/messages"
		if len(out.Messages) > 0 {
			loc += "?after_seq=" + strconv.FormatInt(out.Messages[0].Seq-1, 10)
		}
		w.Header().Set("Location", loc)
		setETag(w, out.Version)
		s.writeJSON(w, r, http.StatusCreated, out)
	}
}

func (s *server) handleMessagesList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &query{values: r.URL.Query()}
		page, err := s.sessions.ListMessages(r.Context(), r.PathValue("id"), carryon.MessageFilter{
			Cursor:   q.str("cursor"),
			AfterSeq: q.int("after_seq", 0, 1<<53-1, 0),
			Limit:    int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := *page
		if out.Items == nil {
			out.Items = []*carryon.Message{}
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

// answerMemory answers with a working memory state, tagged with the session's version.
func (s *server) answerMemory(w http.ResponseWriter, r *http.Request, st *carryon.WorkingMemoryState) {
	out := *st
	if out.WorkingMemory == nil {
		out.WorkingMemory = carryon.WorkingMemory{}
	}
	setETag(w, out.Version)
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *server) handleMemoryGet() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, err := s.sessions.GetWorkingMemory(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.answerMemory(w, r, st)
	}
}

func (s *server) handleMemoryPatch() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := s.decodeMemoryPatch(r)
		if err == nil {
			in.WriteOptions, err = s.writeOptions(r, in.WriteOptions, true)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		st, err := s.sessions.PatchWorkingMemory(ctx, r.PathValue("id"), carryon.MemoryPatch{Patch: in.Patch, WriteOptions: in.WriteOptions})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		s.answerMemory(w, r, st)
	}
}

// decodeMemoryPatch reads {patch, expected_version?, request_id?} sent as application/json, or a
// bare merge patch sent as application/merge-patch+json.
func (s *server) decodeMemoryPatch(r *http.Request) (MemoryPatchRequest, error) {
	var in MemoryPatchRequest
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

func (s *server) handleMemoryHistory() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &query{values: r.URL.Query()}
		page, err := s.sessions.MemoryHistory(r.Context(), r.PathValue("id"), carryon.RevisionFilter{
			Cursor:              q.str("cursor"),
			BeforeMemoryVersion: q.int("before", 1, 1<<53-1, 0),
			Limit:               int(q.int("limit", 1, carryon.MaxMessageWindow, 0)),
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := *page
		if out.Items == nil {
			out.Items = []*carryon.MemoryRevision{}
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleMemoryDiff() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &query{values: r.URL.Query()}
		from, to := q.int("from", 0, 1<<53-1, 0), q.int("to", 0, 1<<53-1, 0)
		diff, err := s.sessions.MemoryDiff(r.Context(), r.PathValue("id"), from, to)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := *diff
		if out.Changes == nil {
			out.Changes = []carryon.MemoryEdit{}
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}
