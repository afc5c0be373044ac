package sqlq

import (
	"context"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Storage by kind (GET /v1/sessions/{id}/storage, carryon stats): one count and one sum of byte
// lengths per kind, written once here for a session and for every user. A kind's rows are x, its
// session's row s where it is joined to one; the search index's are the driver's
// (SessionSearch.StorageFrom).

// storageKind is how one kind's rows are found and measured.
type storageKind struct {
	kind string
	// from names the kind's rows as x (and their session as s, their run as r where needed).
	from string
	// owner and session are the columns of the rows' owner id and session id; session is empty
	// for a kind that belongs to a user and no session.
	owner, session string
	// where is a further condition on the rows, or empty.
	where string
	// bytes is the byte length of one row's stored text and data.
	bytes string
}

// messageBytes is what a message's row holds of text.
const messageBytes = `octet_length(x.content) + octet_length(x.name) + octet_length(x.tool_call_id)
	+ coalesce(octet_length(x.tool_calls), 0) + coalesce(octet_length(x.metadata), 0)`

// storageKinds are the kinds in the order they are reported.
func (t *Tx) storageKinds() []storageKind {
	const msgs = `messages x JOIN sessions s ON s.session_key = x.session_key`
	return []storageKind{
		{carryon.StorageMessages, msgs, "s.owner_id", "s.id", "x.kind <> 'summary'", messageBytes},
		{carryon.StorageCompactions, msgs, "s.owner_id", "s.id", "x.kind = 'summary'", messageBytes},
		{carryon.StorageMemoryRevisions, `memory_revisions x JOIN sessions s ON s.session_key = x.session_key`, "s.owner_id", "s.id", "",
			`coalesce(octet_length(x.document), 0) + coalesce(octet_length(x.patch), 0)`},
		{carryon.StorageRuns, `runs x`, "x.owner_id", "x.session_id", "",
			`octet_length(x.message) + octet_length(x.reply) + octet_length(x.error) + coalesce(octet_length(x.tools), 0)`},
		{carryon.StorageEvents, `run_events x JOIN runs r ON r.id = x.run_id`, "r.owner_id", "r.session_id", "",
			`octet_length(x.type) + coalesce(octet_length(x.data), 0)`},
		{carryon.StorageJournal, `actions x JOIN runs r ON r.id = x.run_id`, "r.owner_id", "x.session_id", "",
			`coalesce(octet_length(x.args), 0) + coalesce(octet_length(x.original_args), 0) + octet_length(x.result) + octet_length(x.error)`},
		{carryon.StorageRequestIDs, `idempotency x`, "x.owner_id", "x.session_id", "",
			`octet_length(x.key) + octet_length(x.fingerprint) + coalesce(octet_length(x.result), 0)`},
		{carryon.StorageSearchIndex, t.d.SessionSearch.StorageFrom, "s.owner_id", "s.id", "", t.d.SessionSearch.StorageBytes},
		{carryon.StorageLongTerm, `memories x`, "x.owner_id", "", "",
			`octet_length(x.value) + octet_length(x.text) + coalesce(octet_length(x.embedding), 0)`},
		{carryon.StorageLongTerm, `memory_versions x`, "x.owner_id", "", "", `octet_length(x.value) + octet_length(x.text)`},
	}
}

// SessionStorage counts the rows and bytes of each kind of the owner's session in one statement
// (a UNION ALL of one aggregate per kind, each through the indexes by session), after checking
// that the session is the owner's.
func (t *Tx) SessionStorage(ctx context.Context, owner, id string) ([]carryon.StorageUse, error) {
	if _, err := t.GetSession(ctx, owner, id); err != nil {
		return nil, err
	}
	if err := t.FlushSearch(ctx); err != nil {
		return nil, err
	}
	var parts []string
	var order []string
	for _, k := range t.storageKinds() {
		if k.session == "" {
			continue
		}
		where := k.session + ` = ?1 AND ` + k.owner + ` = ?2`
		if k.where != "" {
			where += ` AND ` + k.where
		}
		parts = append(parts, `SELECT '`+k.kind+`', count(*), coalesce(sum(`+k.bytes+`), 0) FROM `+k.from+` WHERE `+where)
		order = append(order, k.kind)
	}
	got, err := scanAll(t, ctx, "session storage", func(r Row) (carryon.StorageUse, error) {
		var u carryon.StorageUse
		err := r.Scan(&u.Kind, &u.Rows, &u.Bytes)
		return u, err
	}, strings.Join(parts, "\nUNION ALL "), id, owner)
	if err != nil {
		return nil, err
	}
	return merged(order, got), nil
}

// UserStorage counts the rows and bytes of each kind per owner in one statement (one aggregate
// grouped by owner per kind), then names the users.
func (t *Tx) UserStorage(ctx context.Context) ([]store.UserStorage, error) {
	if err := t.FlushSearch(ctx); err != nil {
		return nil, err
	}
	var parts []string
	var order []string
	for _, k := range t.storageKinds() {
		q := `SELECT '` + k.kind + `', ` + k.owner + `, count(*), coalesce(sum(` + k.bytes + `), 0) FROM ` + k.from
		if k.where != "" {
			q += ` WHERE ` + k.where
		}
		parts = append(parts, q+` GROUP BY `+k.owner)
		if !slices.Contains(order, k.kind) {
			order = append(order, k.kind)
		}
	}
	type ownedUse struct {
		owner string
		use   carryon.StorageUse
	}
	got, err := scanAll(t, ctx, "user storage", func(r Row) (ownedUse, error) {
		var o ownedUse
		err := r.Scan(&o.use.Kind, &o.owner, &o.use.Rows, &o.use.Bytes)
		return o, err
	}, strings.Join(parts, "\nUNION ALL "))
	if err != nil {
		return nil, err
	}
	byOwner := map[string][]carryon.StorageUse{}
	for _, o := range got {
		byOwner[o.owner] = append(byOwner[o.owner], o.use)
	}
	users, err := t.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.UserStorage, 0, len(users))
	for _, u := range users {
		s := store.UserStorage{UserID: u.ID, Name: u.Name, Kinds: merged(order, byOwner[u.ID])}
		for _, k := range s.Kinds {
			s.Rows += k.Rows
			s.Bytes += k.Bytes
		}
		out = append(out, s)
	}
	store.SortUserStorage(out)
	return out, nil
}

// merged returns one use per kind of order, in that order, each the sum of the uses of its kind
// in got (zero where there are none).
func merged(order []string, got []carryon.StorageUse) []carryon.StorageUse {
	out := make([]carryon.StorageUse, len(order))
	for i, k := range order {
		out[i].Kind = k
		for _, u := range got {
			if u.Kind == k {
				out[i].Rows += u.Rows
				out[i].Bytes += u.Bytes
			}
		}
	}
	return out
}

// SessionOwners returns the owner of each of ids that names a stored session, in one query a
// hundred ids.
func (t *Tx) SessionOwners(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for len(ids) > 0 {
		n := min(len(ids), 100)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		found, err := scanAll(t, ctx, "session owners", func(r Row) (store.SessionRef, error) {
			var ref store.SessionRef
			err := r.Scan(&ref.ID, &ref.OwnerID)
			return ref, err
		}, `SELECT id, owner_id FROM sessions WHERE id IN (?`+strings.Repeat(", ?", n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, ref := range found {
			out[ref.ID] = ref.OwnerID
		}
		ids = ids[n:]
	}
	return out, nil
}
