package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/jackc/pgx/v5"
)

// InsertUser stores a new user. ECONFLICT when the name (or id) is taken.
func (t *tx) InsertUser(ctx context.Context, u *carryon.User) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO users (id, name, admin, created_at) VALUES ($1, $2, $3, $4)`,
		u.ID, u.Name, u.Admin, micros(u.CreatedAt))
	if err != nil {
		return conflict(err, "user name %q is taken", u.Name)
	}
	return nil
}

// GetUser finds a user by id or by name (an id match wins). ENOTFOUND.
func (t *tx) GetUser(ctx context.Context, idOrName string) (*carryon.User, error) {
	row := t.tx.QueryRow(ctx, `SELECT id, name, admin, created_at FROM users
		WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC LIMIT 1`, idOrName)
	u, err := scanUser(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("user", idOrName)
	}
	return u, wrap(err, "get user")
}

// ListUsers returns every user ordered by name (bytewise).
func (t *tx) ListUsers(ctx context.Context) ([]*carryon.User, error) {
	rows, err := t.tx.Query(ctx, `SELECT id, name, admin, created_at FROM users ORDER BY name`)
	if err != nil {
		return nil, wrap(err, "list users")
	}
	defer rows.Close()
	var out []*carryon.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, wrap(err, "list users")
		}
		out = append(out, u)
	}
	return out, wrap(rows.Err(), "list users")
}

// InsertKey stores a new key. ENOTFOUND when the user does not exist; ECONFLICT on a taken id or hash.
func (t *tx) InsertKey(ctx context.Context, k *carryon.APIKey) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO api_keys (id, user_id, prefix, hash, created_at, revoked_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, k.UserID, k.Prefix, k.Hash, micros(k.CreatedAt), nullMicros(k.RevokedAt), nullMicros(k.LastUsedAt))
	switch carryon.ErrorCode(normalize(err)) {
	case "":
		return nil
	case carryon.ENOTFOUND: // the foreign key to users
		return notFound("user", k.UserID)
	default:
		return conflict(err, "key %s exists", k.ID)
	}
}

// KeyByHash returns an unrevoked key with that hash and its user. ENOTFOUND.
func (t *tx) KeyByHash(ctx context.Context, hash string) (*carryon.APIKey, *carryon.User, error) {
	row := t.tx.QueryRow(ctx, `SELECT k.id, k.user_id, k.prefix, k.hash, k.created_at, k.revoked_at, k.last_used_at,
		u.id, u.name, u.admin, u.created_at
		FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash)
	var k carryon.APIKey
	var u carryon.User
	var kc, uc int64
	var rev, used *int64
	err := row.Scan(&k.ID, &k.UserID, &k.Prefix, &k.Hash, &kc, &rev, &used, &u.ID, &u.Name, &u.Admin, &uc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, carryon.Errorf(carryon.ENOTFOUND, "key not found")
	} else if err != nil {
		return nil, nil, wrap(err, "key by hash")
	}
	k.CreatedAt, k.RevokedAt, k.LastUsedAt = fromMicros(kc), timePtr(rev), timePtr(used)
	u.CreatedAt = fromMicros(uc)
	return &k, &u, nil
}

// ListKeys returns a user's keys, oldest first, revoked ones included.
func (t *tx) ListKeys(ctx context.Context, userID string) ([]*carryon.APIKey, error) {
	rows, err := t.tx.Query(ctx, `SELECT id, user_id, prefix, hash, created_at, revoked_at, last_used_at
		FROM api_keys WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, wrap(err, "list keys")
	}
	defer rows.Close()
	var out []*carryon.APIKey
	for rows.Next() {
		var k carryon.APIKey
		var c int64
		var rev, used *int64
		if err := rows.Scan(&k.ID, &k.UserID, &k.Prefix, &k.Hash, &c, &rev, &used); err != nil {
			return nil, wrap(err, "list keys")
		}
		k.CreatedAt, k.RevokedAt, k.LastUsedAt = fromMicros(c), timePtr(rev), timePtr(used)
		out = append(out, &k)
	}
	return out, wrap(rows.Err(), "list keys")
}

// RevokeKey marks a key revoked at now. ENOTFOUND (also when already revoked).
func (t *tx) RevokeKey(ctx context.Context, keyID string, now time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	tag, err := t.tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, micros(now), keyID)
	if err != nil {
		return wrap(err, "revoke key")
	}
	if tag.RowsAffected() == 0 {
		return notFound("key", keyID)
	}
	return nil
}

func scanUser(r scanner) (*carryon.User, error) {
	var u carryon.User
	var c int64
	if err := r.Scan(&u.ID, &u.Name, &u.Admin, &c); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMicros(c)
	return &u, nil
}
