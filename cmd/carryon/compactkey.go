package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// compactKeyFile, in the data directory, holds the key that signs the compaction items of the
// OpenAI door when CARRYON_COMPACTION_KEY is not set.
const compactKeyFile = "compaction.key"

// compactKey returns the key that signs compaction items: CARRYON_COMPACTION_KEY when set (the
// same on every instance of a multi-instance deployment, so that any of them takes an item
// another made), otherwise the data directory's key file, made on first use.
func compactKey(data string, getenv env) ([]byte, error) {
	if k := getenv("CARRYON_COMPACTION_KEY"); k != "" {
		return []byte(k), nil
	}
	p := filepath.Join(data, compactKeyFile)
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return []byte(strings.TrimSpace(string(b))), nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("compaction key: %w", err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	text := hex.EncodeToString(k)
	if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("compaction key: %w", err)
	}
	return []byte(text), nil
}
