package sessions

import (
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// searchFilter checks the search conditions of f (text, metadata, agent, time bounds) and puts
// them in q. EINVALID names the condition that is wrong.
func searchFilter(f carryon.SessionFilter, q *store.SessionQuery) error {
	if f.Query != "" {
		if len(f.Query) > carryon.MaxSessionQueryLength {
			return carryon.Errorf(carryon.EINVALID, "q is %d bytes; the limit is %d", len(f.Query), carryon.MaxSessionQueryLength)
		}
		if err := carryon.CheckText("q", f.Query); err != nil {
			return err
		}
		terms, ok := store.SearchQueryTerms(f.Query)
		if !ok {
			return carryon.Errorf(carryon.EINVALID, "q holds %d words; the limit is %d", len(terms), store.MaxSessionSearchTerms)
		}
		if len(terms) == 0 {
			return carryon.Errorf(carryon.EINVALID, "q holds no word (letters or digits) to search for")
		}
		q.Terms = terms
	}
	if len(f.Metadata) > carryon.MaxSessionMetadataFilters {
		return carryon.Errorf(carryon.EINVALID, "%d metadata filters; the limit is %d", len(f.Metadata), carryon.MaxSessionMetadataFilters)
	}
	for k, v := range f.Metadata {
		if err := checkMetadataKey(k); err != nil {
			return err
		}
		if len(v) > maxMetadataValueLen {
			return carryon.Errorf(carryon.EINVALID, "metadata[%s] is %d bytes; the limit is %d", k, len(v), maxMetadataValueLen)
		}
		if err := carryon.CheckText("metadata["+k+"]", v); err != nil {
			return err
		}
		q.Metadata = append(q.Metadata, store.MetadataMatch{Key: k, Value: v})
	}
	slices.SortFunc(q.Metadata, func(a, b store.MetadataMatch) int { return strings.Compare(a.Key, b.Key) })
	if f.Agent != "" {
		if len(f.Agent) > maxAgentFilterLen {
			return carryon.Errorf(carryon.EINVALID, "agent is %d bytes; the limit is %d", len(f.Agent), maxAgentFilterLen)
		}
		q.Agent = f.Agent
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		return carryon.Errorf(carryon.EINVALID, "created_after must be before created_before")
	}
	if !f.UpdatedAfter.IsZero() && !f.UpdatedBefore.IsZero() && !f.UpdatedAfter.Before(f.UpdatedBefore) {
		return carryon.Errorf(carryon.EINVALID, "updated_after must be before updated_before")
	}
	q.CreatedAfter, q.CreatedBefore, q.UpdatedAfter, q.UpdatedBefore = f.CreatedAfter, f.CreatedBefore, f.UpdatedAfter, f.UpdatedBefore
	return nil
}

// maxMetadataValueLen and maxAgentFilterLen bound the values of a listing's filters.
const (
	maxMetadataValueLen = 1024
	maxAgentFilterLen   = 200
)

// checkMetadataKey refuses a metadata filter key that is empty, too long or holds a character
// outside store.MetadataKeyChars.
func checkMetadataKey(k string) error {
	if k == "" || len(k) > 64 || strings.Trim(k, store.MetadataKeyChars) != "" {
		return carryon.Errorf(carryon.EINVALID, "metadata filter key %q must be 1 to 64 letters, digits or _-.:", k)
	}
	return nil
}
