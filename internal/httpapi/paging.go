package httpapi

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
)

// defaultPageSize is the page size of a listing when no limit is given, as the services' own.
const defaultPageSize = carryon.DefaultPageSize

// pageOf pages a complete, short list a service returns whole (users, a user's keys, a run's tool
// journal) with the API's one paging convention: limit and cursor in, next_cursor out. key gives
// each item a unique key whose byte order is the listing's order; the cursor is the last key of
// the previous page, so an item added between pages never moves the items after it.
func pageOf[T any](items []T, key func(T) string, q *query) ([]T, string, error) {
	limit := int(q.int("limit", 1, carryon.MaxMessageWindow, defaultPageSize))
	if q.err != nil {
		return nil, "", q.err
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	start := 0
	if c := q.str("cursor"); c != "" {
		after, err := decodeKeyCursor(c)
		if err != nil {
			return nil, "", err
		}
		start, _ = slices.BinarySearchFunc(sorted, after, func(it T, k string) int {
			if key(it) <= k {
				return -1
			}
			return 1
		})
	}
	page := sorted[start:min(start+limit, len(sorted))]
	next := ""
	if start+limit < len(sorted) {
		next = encodeKeyCursor(key(page[len(page)-1]))
	}
	return append([]T{}, page...), next, nil
}

func encodeKeyCursor(k string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("k|" + k))
}

func decodeKeyCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	k, ok := strings.CutPrefix(string(b), "k|")
	if err != nil || !ok || k == "" {
		return "", carryon.Errorf(carryon.EINVALID, "cursor is not a next_cursor this listing returned")
	}
	return k, nil
}

// keyKey orders a user's keys oldest first (creation time, then id).
func keyKey(k *carryon.APIKey) string {
	return fmt.Sprintf("%020d|%s", k.CreatedAt.UnixMicro(), k.ID)
}

// actionKey orders a run's tool journal by step, then index.
func actionKey(a *carryon.Action) string {
	return fmt.Sprintf("%010d|%010d", a.Step, a.Index)
}
