package users

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon"
)

// LocalKeyFile is the name of the file in the data directory that holds the local user's key.
const LocalKeyFile = "local.key"

// LocalUserName is the name of the admin user a server makes for itself on first start.
const LocalUserName = "local"

// EnsureLocalUser returns the local user's key, making the user (an admin) and the key file
// (mode 0600) in dataDir on first use. A key file whose key no longer works gets a new key.
func (s *Service) EnsureLocalUser(ctx context.Context, dataDir string) (string, error) {
	path := filepath.Join(dataDir, LocalKeyFile)
	if key, err := ReadLocalKey(dataDir); err == nil {
		if _, err := s.Authenticate(ctx, key); err == nil {
			return key, nil
		} else if carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			return "", err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	ctx = carryon.NewTrustedContext(ctx)
	_, secret, err := s.CreateUser(ctx, carryon.NewUser{Name: LocalUserName, Admin: true})
	if carryon.ErrorCode(err) == carryon.ECONFLICT {
		_, secret, err = s.CreateKey(ctx, LocalUserName)
	}
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write local key file: %w", err)
	}
	return secret, nil
}

// ReadLocalKey reads the local user's key from dataDir.
func ReadLocalKey(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, LocalKeyFile))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
