package users

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Settings returns the caller's own settings.
func (s *Service) Settings(ctx context.Context) (*carryon.UserSettings, error) {
	u := carryon.UserFromContext(ctx)
	if u == nil {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	var out carryon.UserSettings
	err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		out, err = tx.UserSettings(ctx, u.ID)
		return err
	})
	return &out, err
}

// UpdateSettings changes the fields of the caller's settings that in gives, in one write
// (setting a value again changes nothing), and returns them all.
func (s *Service) UpdateSettings(ctx context.Context, in carryon.UserSettingsPatch) (*carryon.UserSettings, error) {
	u := carryon.UserFromContext(ctx)
	if u == nil {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	if in.LearnFacts == nil {
		return nil, carryon.Errorf(carryon.EINVALID, "give a setting to change: learn_facts")
	}
	var out carryon.UserSettings
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.LockOwner(ctx, u.ID); err != nil {
			return err
		}
		cur, err := tx.UserSettings(ctx, u.ID)
		if err != nil {
			return err
		}
		cur.LearnFacts = *in.LearnFacts
		out = cur
		return tx.PutUserSettings(ctx, u.ID, cur)
	})
	return &out, err
}
