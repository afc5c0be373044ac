package longterm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// rrfK is the constant of reciprocal rank fusion: an item's fused score is the sum over the
// rankings that found it of 1/(rrfK + rank), rank from 1 (Cormack, Clarke and Büttcher, 2009).
const rrfK = 60

// maxFilterFields bounds the fields of a search's filter.
const maxFilterFields = 16

// Search returns the caller's unexpired items most relevant to in.Query, best first, a page of
// in.Limit at a time: NextCursor continues the same search (another query, namespace, mode,
// filter or min_score with it is EINVALID), up to carryon.MaxLongTermSearchDepth results. A page
// is a position in the ranking as it is when the page is read.
//
// The modes: keyword ranks by shared words (scores relative to the best, 1); semantic by the
// cosine similarity of the item's vector to the query's (the score is the similarity); hybrid
// (the default) fuses both rankings by reciprocal rank fusion (scores relative to the best fused
// score, with each ranking's part in Scores), and is keyword alone when the server has no
// embeddings or the query could not be embedded (the answer's Mode says so). A query without
// words (empty, or only punctuation) returns the most recently updated items instead, without
// scores, except in semantic mode, which needs a query. EINVALID, EUNAUTHORIZED, EUNAVAILABLE
// (semantic mode, the embeddings provider failing).
func (s *Service) Search(ctx context.Context, in carryon.LongTermSearch) (*carryon.LongTermResults, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkSearch(&in); err != nil {
		return nil, err
	}
	offset := 0
	if in.Cursor != "" {
		if offset, err = decodeSearchCursor(in.Cursor, in); err != nil {
			return nil, err
		}
	}
	end := min(offset+in.Limit, carryon.MaxLongTermSearchDepth)
	mode := in.Mode
	var qvec []float32
	if mode != carryon.SearchKeyword && strings.TrimSpace(in.Query) != "" && s.emb != nil {
		if len(in.Query) > s.emb.MaxInputBytes {
			return nil, carryon.Errorf(carryon.EINVALID, "query is longer than the embeddings provider takes (%d bytes)", s.emb.MaxInputBytes)
		}
		v, err := s.embed(ctx, []string{in.Query})
		switch {
		case err == nil:
			qvec = v[0]
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case mode == carryon.SearchSemantic:
			return nil, semanticError(err)
		default:
			s.log().Warn("hybrid memory search fell back to keywords: the embeddings provider failed", "err", err)
		}
	}
	if mode == carryon.SearchHybrid && qvec == nil {
		mode = carryon.SearchKeyword
	}
	if qvec != nil {
		if err := s.vectors.warm(ctx, s.st, own, s.emb.Model); err != nil {
			return nil, err
		}
	}
	now := s.clock()
	var items []*carryon.LongTermItem
	err = s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		items, err = s.rank(ctx, tx, own, in, mode, qvec, end+1, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	res := &carryon.LongTermResults{Items: []*carryon.LongTermItem{}, Mode: mode}
	if offset < len(items) {
		res.Items = items[offset:min(end, len(items))]
	}
	if len(items) > end && end < carryon.MaxLongTermSearchDepth {
		res.NextCursor = encodeSearchCursor(end, in)
	}
	return res, nil
}

// checkSearch validates a search and fills in its defaults.
func (s *Service) checkSearch(in *carryon.LongTermSearch) error {
	if err := ValidNamespace(in.Namespace, true); err != nil {
		return err
	}
	switch {
	case in.Limit < 0 || in.Limit > carryon.MaxLongTermSearchLimit:
		return carryon.Errorf(carryon.EINVALID, "limit must be between 1 and %d", carryon.MaxLongTermSearchLimit)
	case len(in.Query) > MaxQueryBytes:
		return carryon.Errorf(carryon.EINVALID, "query is longer than %d bytes", MaxQueryBytes)
	case math.IsNaN(in.MinScore) || in.MinScore < -1 || in.MinScore > 1:
		return carryon.Errorf(carryon.EINVALID, "min_score must be between -1 and 1 (scores are at most 1)")
	case len(in.Filter) > maxFilterFields:
		return carryon.Errorf(carryon.EINVALID, "filter has more than %d fields", maxFilterFields)
	}
	for k, v := range in.Filter {
		if k == "" || !json.Valid(v) {
			return carryon.Errorf(carryon.EINVALID, "filter must map field names to JSON values; %q does not", clip(k))
		}
	}
	switch in.Mode {
	case "":
		in.Mode = carryon.SearchHybrid
	case carryon.SearchHybrid, carryon.SearchKeyword:
	case carryon.SearchSemantic:
		if s.emb == nil {
			return carryon.Errorf(carryon.EINVALID, "mode semantic needs embeddings, and this server has none (the agents file's embeddings:); search with mode keyword or hybrid")
		}
		if strings.TrimSpace(in.Query) == "" {
			return carryon.Errorf(carryon.EINVALID, "query is required in mode semantic")
		}
	default:
		return carryon.Errorf(carryon.EINVALID, "mode must be hybrid, semantic or keyword, not %q", clip(string(in.Mode)))
	}
	if err := carryon.CheckText("query", in.Query); err != nil {
		return err
	}
	if in.Limit == 0 {
		in.Limit = carryon.DefaultLongTermSearchLimit
	}
	return nil
}

// candidate is an item in a ranking: found by keywords (item set), by its vector, or both.
type candidate struct {
	ns, key  string
	item     *carryon.LongTermItem
	keyword  *float64
	semantic *float64
	fused    float64
}

// rank returns the first n results of the search in one transaction: each ranking's candidates
// (deep enough for the page and what the filter and min_score may drop), fused, then the items
// read for the candidates found by vector alone, filtered, scored and cut at n.
func (s *Service) rank(ctx context.Context, tx store.Tx, own string, in carryon.LongTermSearch, mode carryon.SearchMode, qvec []float32, n int, now time.Time) ([]*carryon.LongTermItem, error) {
	depth := n
	if len(in.Filter) > 0 || in.MinScore != 0 {
		depth = carryon.MaxLongTermSearchDepth + 1
	}
	var byKeyword []*carryon.LongTermItem
	if mode != carryon.SearchSemantic {
		var err error
		byKeyword, err = tx.SearchLongTermItems(ctx, own, store.LongTermSearchQuery{Text: in.Query, Namespace: in.Namespace, Now: now, Limit: depth})
		if err != nil {
			return nil, err
		}
		store.RelativeScores(byKeyword)
		if mode == carryon.SearchKeyword {
			out := make([]*carryon.LongTermItem, 0, len(byKeyword))
			for _, it := range byKeyword {
				if it.Score > 0 {
					sc := it.Score
					it.Scores = &carryon.LongTermScores{Keyword: &sc}
				}
				if matches(it, in) {
					out = append(out, it)
				}
			}
			return out[:min(len(out), n)], nil
		}
	}
	var hits []hit
	var set *vectorSet
	if qvec != nil {
		var err error
		if set, err = s.vectors.get(ctx, tx, own, s.emb.Model, -1); err != nil {
			return nil, err
		}
		hits = set.top(qvec, depth, in.Namespace, false, now)
	}
	cands := map[[2]string]*candidate{}
	var order []*candidate
	at := func(ns, key string) *candidate {
		c := cands[[2]string{ns, key}]
		if c == nil {
			c = &candidate{ns: ns, key: key}
			cands[[2]string{ns, key}] = c
			order = append(order, c)
		}
		return c
	}
	for r, it := range byKeyword {
		if it.Score <= 0 {
			break // the most recent items of a query without words are no ranking
		}
		c := at(it.Namespace, it.Key)
		c.item = it
		sc := it.Score
		c.keyword = &sc
		c.fused += 1 / float64(rrfK+r+1)
	}
	for r, h := range hits {
		c := at(set.ns[h.i], set.keys[h.i])
		sim := round3(float64(h.score))
		c.semantic = &sim
		c.fused += 1 / float64(rrfK+r+1)
	}
	if mode == carryon.SearchSemantic {
		for _, c := range order {
			c.fused = *c.semantic
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].fused > order[j].fused })
	out := make([]*carryon.LongTermItem, 0, min(n, len(order)))
	best := 0.0
	for _, c := range order {
		if len(out) == n {
			break
		}
		if best == 0 {
			best = c.fused
		}
		it := c.item
		if it == nil {
			var err error
			it, err = tx.GetLongTermItem(ctx, own, c.ns, c.key, now)
			if carryon.ErrorCode(err) == carryon.ENOTFOUND {
				continue
			} else if err != nil {
				return nil, err
			}
		}
		it.Scores = &carryon.LongTermScores{Keyword: c.keyword, Semantic: c.semantic}
		it.Score = c.fused
		if mode == carryon.SearchHybrid {
			it.Score = math.Max(round3(c.fused/best), 0.001)
		}
		if matches(it, in) {
			out = append(out, it)
		}
	}
	if len(order) == 0 && mode == carryon.SearchHybrid && len(byKeyword) > 0 {
		for _, it := range byKeyword { // a query without words: the most recent items
			if len(out) < n && matches(it, in) {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// matches reports whether a result passes the search's min_score and filter.
func matches(it *carryon.LongTermItem, in carryon.LongTermSearch) bool {
	if in.MinScore != 0 && it.Score < in.MinScore {
		return false
	}
	if len(in.Filter) == 0 {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(it.Value, &obj) != nil || obj == nil {
		return false
	}
	for k, want := range in.Filter {
		got, ok := obj[k]
		if !ok || !jsonEqual(got, want) {
			return false
		}
	}
	return true
}

// jsonEqual compares two JSON values by meaning (key order and spacing aside).
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// searchOf names a search for its cursors: a cursor continues the search it came from only.
func searchOf(in carryon.LongTermSearch) string {
	keys := make([]string, 0, len(in.Filter))
	for k := range in.Filter {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	h.Write([]byte(in.Namespace + "\x00" + in.Query + "\x00" + string(in.Mode) + "\x00" + strconv.FormatFloat(in.MinScore, 'g', -1, 64)))
	for _, k := range keys {
		h.Write([]byte("\x00" + k + "\x00" + string(in.Filter[k])))
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

func encodeSearchCursor(offset int, in carryon.LongTermSearch) string {
	return base64.RawURLEncoding.EncodeToString([]byte("s|" + strconv.Itoa(offset) + "|" + searchOf(in)))
}

func decodeSearchCursor(c string, in carryon.LongTermSearch) (int, error) {
	bad := carryon.Errorf(carryon.EINVALID, "cursor is not a next_cursor of a search")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != 3 || parts[0] != "s" {
		return 0, bad
	}
	offset, err := strconv.Atoi(parts[1])
	if err != nil || offset < 1 || offset >= carryon.MaxLongTermSearchDepth {
		return 0, bad
	}
	if parts[2] != searchOf(in) {
		return 0, carryon.Errorf(carryon.EINVALID, "cursor continues another search: send the same query, namespace, mode, filter and min_score as the search it came from")
	}
	return offset, nil
}
