package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The vectors of long-term memory (store.LongTermVectors): columns embedding and embedding_model
// of memories, the per-owner counter memory_generations and the replaced values memory_versions;
// the same SQL on both databases.

// LongTermChanged moves the owner's memory counter on: drivers call it in every write of an
// item, so that no instance keeps searching vectors of a memory that changed.
func (t *Tx) LongTermChanged(ctx context.Context, owner string) error {
	_, err := t.Conn.Exec(ctx, `INSERT INTO memory_generations (owner_id, gen) VALUES (?, 1)
		ON CONFLICT (owner_id) DO UPDATE SET gen = memory_generations.gen + 1`, owner)
	return t.Wrap(err, "move memory counter")
}

// LockLongTerm moves the owner's memory counter on; the row it writes is held until commit, so a
// second writer of the same owner waits (on SQLite every write transaction is alone anyway).
func (t *Tx) LockLongTerm(ctx context.Context, owner string) (int64, error) {
	if err := t.WritableBy(owner); err != nil {
		return 0, err
	}
	var gen int64
	err := t.Conn.QueryRow(ctx, `INSERT INTO memory_generations (owner_id, gen) VALUES (?, 1)
		ON CONFLICT (owner_id) DO UPDATE SET gen = memory_generations.gen + 1 RETURNING gen`, owner).Scan(&gen)
	return gen, t.Wrap(err, "lock memory")
}

// LongTermGeneration returns the owner's memory counter (0 before the first write).
func (t *Tx) LongTermGeneration(ctx context.Context, owner string) (int64, error) {
	if err := store.CheckOwner(owner); err != nil {
		return 0, err
	}
	var gen int64
	err := t.Conn.QueryRow(ctx, `SELECT gen FROM memory_generations WHERE owner_id = ?`, owner).Scan(&gen)
	if errors.Is(err, ErrNoRows) {
		return 0, nil
	}
	return gen, t.Wrap(err, "read memory counter")
}

// SetLongTermVector sets the item's vector if the item is at version.
func (t *Tx) SetLongTermVector(ctx context.Context, owner, namespace, key string, version int64, v store.Vector) (bool, error) {
	if err := t.WritableBy(owner); err != nil {
		return false, err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE memories SET embedding = ?, embedding_model = ?
		WHERE owner_id = ? AND namespace = ? AND key = ? AND version = ?`,
		store.EncodeVector(v.Values), v.Model, owner, namespace, key, version)
	if err != nil || n == 0 {
		return false, t.Wrap(err, "set memory vector")
	}
	return true, t.LongTermChanged(ctx, owner)
}

// LongTermVectors returns the owner's counter, then the owner's vectors made by model.
func (t *Tx) LongTermVectors(ctx context.Context, owner, model string) (int64, []store.VectorRow, error) {
	gen, err := t.LongTermGeneration(ctx, owner)
	if err != nil {
		return 0, nil, err
	}
	rows, err := scanAll(t, ctx, "read memory vectors", func(r Row) (store.VectorRow, error) {
		var v store.VectorRow
		var b []byte
		var exp *int64
		if err := r.Scan(&v.Namespace, &v.Key, &exp, &b); err != nil {
			return v, err
		}
		v.ExpiresAt, v.Values = TimePtr(exp), store.DecodeVector(b)
		return v, nil
	}, `SELECT namespace, key, expires_at, embedding FROM memories
		WHERE owner_id = ? AND embedding_model = ? AND embedding IS NOT NULL`, owner, model)
	return gen, rows, err
}

// PutLongTermVersion keeps a replaced value of an item.
func (t *Tx) PutLongTermVersion(ctx context.Context, owner, namespace, key string, v *carryon.LongTermVersion) error {
	if err := t.WritableBy(owner); err != nil {
		return err
	}
	_, err := t.Conn.Exec(ctx, `INSERT INTO memory_versions (owner_id, namespace, key, version, value, text, superseded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner_id, namespace, key, version) DO NOTHING`,
		owner, namespace, key, v.Version, string(v.Value), v.Text, Micros(v.SupersededAt))
	return t.Wrap(err, "keep memory version")
}

// ListLongTermVersions returns the kept earlier values of an item, newest first.
func (t *Tx) ListLongTermVersions(ctx context.Context, owner, namespace, key string) ([]*carryon.LongTermVersion, error) {
	if err := store.CheckOwner(owner); err != nil {
		return nil, err
	}
	out, err := scanAll(t, ctx, "list memory versions", func(r Row) (*carryon.LongTermVersion, error) {
		v := &carryon.LongTermVersion{}
		var value string
		var at int64
		err := r.Scan(&v.Version, &value, &v.Text, &at)
		v.Value, v.SupersededAt = json.RawMessage(value), FromMicros(at)
		return v, err
	}, `SELECT version, value, text, superseded_at FROM memory_versions
		WHERE owner_id = ? AND namespace = ? AND key = ? ORDER BY version DESC`, owner, namespace, key)
	if err == nil && out == nil {
		out = []*carryon.LongTermVersion{}
	}
	return out, err
}

// deleteLongTermVersions removes the kept values of an item (with the item).
func (t *Tx) deleteLongTermVersions(ctx context.Context, owner, namespace, key string) error {
	_, err := t.Conn.Exec(ctx, `DELETE FROM memory_versions WHERE owner_id = ? AND namespace = ? AND key = ?`, owner, namespace, key)
	return t.Wrap(err, "delete memory versions")
}

// LongTermDeleted does what every driver's delete of an item does besides deleting its row:
// removes its kept values and moves the owner's counter on.
func (t *Tx) LongTermDeleted(ctx context.Context, owner, namespace, key string) error {
	if err := t.deleteLongTermVersions(ctx, owner, namespace, key); err != nil {
		return err
	}
	return t.LongTermChanged(ctx, owner)
}

// LongTermPurging does what a purge of expired items does first, before their rows go: removes
// their kept values and moves their owners' counters on.
func (t *Tx) LongTermPurging(ctx context.Context, before time.Time) error {
	expired := `SELECT owner_id, namespace, key FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?`
	if _, err := t.Conn.Exec(ctx, `UPDATE memory_generations SET gen = gen + 1 WHERE owner_id IN
		(SELECT owner_id FROM memories WHERE expires_at IS NOT NULL AND expires_at < ?)`, Micros(before)); err != nil {
		return t.Wrap(err, "move memory counters")
	}
	_, err := t.Conn.Exec(ctx, `DELETE FROM memory_versions WHERE (owner_id, namespace, key) IN (`+expired+`)`, Micros(before))
	return t.Wrap(err, "purge memory versions")
}

// StaleLongTermItems returns unexpired items of any owner with text whose vector is missing or
// made by another model, by (owner, namespace, key) after the one given.
func (t *Tx) StaleLongTermItems(ctx context.Context, model string, after [3]string, now time.Time, limit int) ([]store.StaleItem, error) {
	return scanAll(t, ctx, "find stale memory vectors", func(r Row) (store.StaleItem, error) {
		var s store.StaleItem
		var value, text string
		err := r.Scan(&s.Owner, &s.Namespace, &s.Key, &s.Version, &value, &text)
		s.Document = store.EmbeddingText(text, json.RawMessage(value))
		return s, err
	}, `SELECT owner_id, namespace, key, version, value, text FROM memories
		WHERE (embedding_model IS NULL OR embedding_model <> ?) AND (expires_at IS NULL OR expires_at > ?)
		AND (owner_id, namespace, key) > (?, ?, ?)
		ORDER BY owner_id, namespace, key`+limitArg, model, Micros(now), after[0], after[1], after[2], Limit(limit))
}
