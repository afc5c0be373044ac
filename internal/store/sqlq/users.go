package sqlq

import (
	"context"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
)

const userCols = `id, name, admin, created_at`

func scanUser(r Row) (*carryon.User, error) {
	var u carryon.User
	var c int64
	if err := r.Scan(&u.ID, &u.Name, &u.Admin, &c); err != nil {
		return nil, err
	}
	u.CreatedAt = FromMicros(c)
	return &u, nil
}

const keyCols = `id, user_id, prefix, hash, created_at, revoked_at, last_used_at`

func scanKey(r Row) (*carryon.APIKey, error) {
	var k carryon.APIKey
	var c int64
	var rev, used *int64
	if err := r.Scan(&k.ID, &k.UserID, &k.Prefix, &k.Hash, &c, &rev, &used); err != nil {
		return nil, err
	}
	k.CreatedAt, k.RevokedAt, k.LastUsedAt = FromMicros(c), TimePtr(rev), TimePtr(used)
	return &k, nil
}

// InsertUser stores a new user. ECONFLICT when the name (or id) is taken.
func (t *Tx) InsertUser(ctx context.Context, u *carryon.User) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?)`,
		u.ID, u.Name, u.Admin, Micros(u.CreatedAt))
	return t.Conflict(err, "insert user", "user name %q is taken", u.Name)
}

// GetUser finds a user by id or by name (an id match wins). ENOTFOUND, also for a user being
// forgotten.
func (t *Tx) GetUser(ctx context.Context, idOrName string) (*carryon.User, error) {
	u, err := scanUser(t.Conn.QueryRow(ctx, `SELECT `+userCols+` FROM users
		WHERE (id = ?1 OR name = ?1) AND forgetting_at IS NULL ORDER BY id = ?1 DESC LIMIT 1`, idOrName))
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("user", idOrName)
	}
	return u, t.Wrap(err, "get user")
}

// LockOwner checks that the user exists and is not being forgotten, with Dialect.LockForShare
// in a write transaction. EUNAUTHORIZED.
func (t *Tx) LockOwner(ctx context.Context, userID string) error {
	var one int
	err := t.Conn.QueryRow(ctx, `SELECT 1 FROM users WHERE id = ? AND forgetting_at IS NULL`+t.lockIfWriting(t.d.LockForShare), userID).Scan(&one)
	if errors.Is(err, ErrNoRows) {
		return carryon.Errorf(carryon.EUNAUTHORIZED, "user %s no longer exists: it has been deleted or is being forgotten", userID)
	}
	return t.Wrap(err, "lock user")
}

// ListUsers returns every user ordered by name (bytewise), but those being forgotten.
func (t *Tx) ListUsers(ctx context.Context) ([]*carryon.User, error) {
	return scanAll(t, ctx, "list users", scanUser, `SELECT `+userCols+` FROM users WHERE forgetting_at IS NULL ORDER BY name`)
}

// InsertKey stores a new key. ENOTFOUND when the user does not exist; ECONFLICT on a taken id or hash.
func (t *Tx) InsertKey(ctx context.Context, k *carryon.APIKey) error {
	if err := t.Writable(); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO api_keys (`+keyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.UserID, k.Prefix, k.Hash, Micros(k.CreatedAt), NullMicros(k.RevokedAt), NullMicros(k.LastUsedAt))
	if carryon.ErrorCode(t.d.Normalize(err)) == carryon.ENOTFOUND { // the foreign key to users
		return NotFound("user", k.UserID)
	}
	return t.Conflict(err, "insert key", "key %s exists", k.ID)
}

// KeyByHash returns an unrevoked key with that hash and its user. ENOTFOUND.
func (t *Tx) KeyByHash(ctx context.Context, hash string) (*carryon.APIKey, *carryon.User, error) {
	row := t.Conn.QueryRow(ctx, `SELECT k.id, k.user_id, k.prefix, k.hash, k.created_at, k.revoked_at, k.last_used_at,
		u.id, u.name, u.admin, u.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.hash = ? AND k.revoked_at IS NULL`, hash)
	var k carryon.APIKey
	var u carryon.User
	var kc, uc int64
	var rev, used *int64
	err := row.Scan(&k.ID, &k.UserID, &k.Prefix, &k.Hash, &kc, &rev, &used, &u.ID, &u.Name, &u.Admin, &uc)
	if errors.Is(err, ErrNoRows) {
		return nil, nil, carryon.Errorf(carryon.ENOTFOUND, "key not found")
	} else if err != nil {
		return nil, nil, t.Wrap(err, "key by hash")
	}
	k.CreatedAt, k.RevokedAt, k.LastUsedAt = FromMicros(kc), TimePtr(rev), TimePtr(used)
	u.CreatedAt = FromMicros(uc)
	return &k, &u, nil
}

// ListKeys returns a user's keys, oldest first, revoked ones included.
func (t *Tx) ListKeys(ctx context.Context, userID string) ([]*carryon.APIKey, error) {
	return scanAll(t, ctx, "list keys", scanKey, `SELECT `+keyCols+` FROM api_keys
		WHERE user_id = ? ORDER BY created_at, id`, userID)
}

// RevokeKey marks a key revoked at now. ENOTFOUND (also when already revoked).
func (t *Tx) RevokeKey(ctx context.Context, keyID string, now time.Time) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, Micros(now), keyID)
	if err != nil {
		return t.Wrap(err, "revoke key")
	}
	if n == 0 {
		return NotFound("key", keyID)
	}
	return nil
}

// UserSettings returns the user's settings, the defaults without a row.
func (t *Tx) UserSettings(ctx context.Context, userID string) (carryon.UserSettings, error) {
	s := carryon.DefaultUserSettings
	var learn int64
	err := t.Conn.QueryRow(ctx, `SELECT learn_facts FROM user_settings WHERE user_id = ?`, userID).Scan(&learn)
	if errors.Is(err, ErrNoRows) {
		return s, nil
	}
	s.LearnFacts = learn != 0
	return s, t.Wrap(err, "read user settings")
}

// PutUserSettings stores the user's settings (an upsert). ENOTFOUND when the user does not exist.
func (t *Tx) PutUserSettings(ctx context.Context, userID string, s carryon.UserSettings) error {
	if err := t.WritableBy(userID); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO user_settings (user_id, learn_facts) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET learn_facts = excluded.learn_facts`, userID, boolInt(s.LearnFacts))
	if carryon.ErrorCode(t.d.Normalize(err)) == carryon.ENOTFOUND {
		return NotFound("user", userID)
	}
	return t.Wrap(err, "store user settings")
}
