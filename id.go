package carryon

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// SessionIDPrefix starts every session id.
const SessionIDPrefix = "sess_"

// NewID returns prefix followed by 128 random bits in lower-case base32, e.g. "sess_…".
func NewID(prefix string) string {
	return prefix + RandomToken(16)
}

// RandomToken returns n random bytes in lower-case base32 without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return strings.ToLower(idEncoding.EncodeToString(b))
}
