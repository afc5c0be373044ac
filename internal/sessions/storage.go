package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// Storage returns what the caller's session takes, kind by kind: its rows in the database,
// counted in one read transaction (store.SessionStorage), then its workspace files (not
// versioned: as they are when they are walked). A session without a workspace has no files.
// ENOTFOUND for a session that is not the caller's.
func (s *Service) Storage(ctx context.Context, id string) (*carryon.SessionStorage, error) {
	out := &carryon.SessionStorage{SessionID: id}
	err := s.read(ctx, func(tx store.Tx, own string, _ time.Time) error {
		var err error
		out.Kinds, err = tx.SessionStorage(ctx, own, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	use := carryon.StorageUse{Kind: carryon.StorageWorkspaceFiles}
	if dir := s.workspaceDir(id); dir != "" {
		if use.Rows, use.Bytes, err = workspace.Usage(dir); err != nil {
			return nil, carryon.Errorf(carryon.EINTERNAL, "storage of session %s: %v", id, err)
		}
	}
	out.Kinds = append(out.Kinds, use)
	out.Total()
	return out, nil
}
