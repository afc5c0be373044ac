package carryonadk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/adk/v2/session"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
)

// splitState sorts a state (or a delta) by scope: app: and user: keys (kept with their prefix),
// the session's own keys; temp: keys are dropped.
func splitState(state map[string]any) (app, user, local map[string]any) {
	app, user, local = map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range state {
		switch {
		case strings.HasPrefix(k, session.KeyPrefixTemp):
		case strings.HasPrefix(k, session.KeyPrefixApp):
			app[k] = v
		case strings.HasPrefix(k, session.KeyPrefixUser):
			user[k] = v
		default:
			local[k] = v
		}
	}
	return app, user, local
}

// segment makes an ADK name a namespace segment of long-term memory ([a-z0-9_-]+): its hex.
func segment(name string) string { return "h" + hex.EncodeToString([]byte(name)) }

// appNamespace and userNamespace hold the app: and user: state of an app.
func appNamespace(app string) string        { return "adk." + segment(app) + ".app" }
func userNamespace(app, user string) string { return "adk." + segment(app) + ".user." + segment(user) }

// sharedItem is the value of a long-term item of app: or user: state: the state key as ADK
// spells it, and its value.
type sharedItem struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// itemKey is the long-term key of a state key: the key itself when carryon's key rule allows it,
// otherwise its hash (the item's value holds the key as it is).
func itemKey(key string) string {
	if longterm.ValidKey(key) == nil {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// putShared stores app: and user: state, one long-term item per key.
func (s *Service) putShared(ctx context.Context, app, user string, appState, userState map[string]any) error {
	for _, part := range []struct {
		ns    string
		state map[string]any
	}{{appNamespace(app), appState}, {userNamespace(app, user), userState}} {
		for k, v := range part.state {
			raw, err := json.Marshal(sharedItem{Key: k, Value: v})
			if err != nil {
				return fmt.Errorf("carryonadk: state %q: %w", k, err)
			}
			if _, err := s.longTerm.Put(ctx, part.ns, itemKey(k), carryon.LongTermPut{Value: raw, Text: k}); err != nil {
				return fmt.Errorf("carryonadk: store state %q: %w", k, err)
			}
		}
	}
	return nil
}

// readShared adds the app's app: state and the user's user: state to the session's state.
func (s *Service) readShared(ctx context.Context, sess *adkSession) error {
	for _, ns := range []string{appNamespace(sess.app), userNamespace(sess.app, sess.user)} {
		f := carryon.LongTermFilter{Namespace: ns, Limit: 100}
		for {
			page, err := s.longTerm.List(ctx, f)
			if err != nil {
				return fmt.Errorf("carryonadk: read state: %w", err)
			}
			for _, it := range page.Items {
				if it.Namespace != ns {
					continue // a namespace under it
				}
				var item sharedItem
				if err := json.Unmarshal(it.Value, &item); err != nil || item.Key == "" {
					return fmt.Errorf("carryonadk: state item %s/%s is not one this adapter wrote: %v", ns, it.Key, errors.Join(err))
				}
				sess.state[item.Key] = item.Value
			}
			if page.NextCursor == "" {
				break
			}
			f.Cursor = page.NextCursor
		}
	}
	return nil
}
