package carryonadk

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/carryon-hub/carryon"
)

// memoryNamespace holds the memories of a user of an app.
func memoryNamespace(app, user string) string {
	return "adk." + segment(app) + ".memory." + segment(user)
}

// memoryItem is the value of a memory: what ADK's memory.Entry holds.
type memoryItem struct {
	Content   *genai.Content `json:"content"`
	Author    string         `json:"author"`
	SessionID string         `json:"session_id"`
	EventID   string         `json:"event_id"`
}

// AddSessionToMemory keeps the events of a session that have text as memories of its user: one
// long-term item per event, searched by its text. Adding a session again replaces its items.
func (s *Service) AddSessionToMemory(ctx context.Context, sess session.Session) error {
	if sess == nil {
		return fmt.Errorf("carryonadk: add session needs a session")
	}
	ctx = s.as(ctx)
	ns := memoryNamespace(sess.AppName(), sess.UserID())
	for ev := range sess.Events().All() {
		text := textOf(ev)
		if text == "" {
			continue
		}
		raw, err := json.Marshal(memoryItem{Content: ev.Content, Author: ev.Author, SessionID: sess.ID(), EventID: ev.ID})
		if err != nil {
			return err
		}
		key := itemKey(sess.ID() + "." + ev.ID)
		if _, err := s.longTerm.Put(ctx, ns, key, carryon.LongTermPut{Value: raw, Text: text}); err != nil {
			return fmt.Errorf("carryonadk: add memory: %w", err)
		}
	}
	return nil
}

// SearchMemory returns the user's memories in the app that match the query, best first.
func (s *Service) SearchMemory(ctx context.Context, req *memory.SearchRequest) (*memory.SearchResponse, error) {
	if req == nil {
		return nil, fmt.Errorf("carryonadk: search needs a request")
	}
	ctx = s.as(ctx)
	res, err := s.longTerm.Search(ctx, carryon.LongTermSearch{Query: req.Query, Namespace: memoryNamespace(req.AppName, req.UserID)})
	if err != nil {
		return nil, fmt.Errorf("carryonadk: search memory: %w", err)
	}
	out := &memory.SearchResponse{Memories: []memory.Entry{}}
	for _, it := range res.Items {
		var m memoryItem
		if err := json.Unmarshal(it.Value, &m); err != nil || m.Content == nil {
			continue
		}
		out.Memories = append(out.Memories, memory.Entry{ID: it.Key, Content: m.Content, Author: m.Author, Timestamp: it.UpdatedAt,
			CustomMetadata: map[string]any{"session_id": m.SessionID, "event_id": m.EventID}})
	}
	return out, nil
}
