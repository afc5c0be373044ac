package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
)

// SecretPrefix starts every signing secret, as the Standard Webhooks specification says.
const SecretPrefix = "whsec_"

// NewSecret returns a new signing secret: whsec_ and 32 random bytes in standard base64.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the v1 signature of a message with the secret: v1, then the standard base64 of
// HMAC-SHA256 over "id.timestamp.body" keyed with the secret's decoded bytes.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", fmt.Errorf("the signing secret is not base64: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// Signatures returns the webhook-signature header of a message to w at now: the signature with
// its secret and, until the previous secret expires after a rotation, with that one too,
// separated by a space, so that a receiver with either secret accepts it.
func Signatures(w *store.Webhook, id string, ts, now time.Time, body []byte) (string, error) {
	sig, err := Sign(w.Secret, id, ts, body)
	if err != nil {
		return "", err
	}
	if w.PrevSecret != "" && w.PrevSecretUntil != nil && now.Before(*w.PrevSecretUntil) {
		prev, err := Sign(w.PrevSecret, id, ts, body)
		if err != nil {
			return "", err
		}
		sig += " " + prev
	}
	return sig, nil
}
