package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Normalize returns a bundle with what an import changes made uniform, so that two bundles of
// the same session before and after an export → import → export compare byte for byte. It is the
// definition of "the same apart from ids and times" (docs/EXPORT.md): the session, run and action
// ids become ID1, ID2, … in the order they first appear (wherever they occur); the header's
// exported_at and session_id, the session's updated_at, last_active_at and expires_at, and the
// end line's sha256 are emptied. Everything else must be equal.
func Normalize(data []byte) ([]byte, error) {
	b, err := Decode(data)
	if err != nil {
		return nil, err
	}
	var pairs []string
	for _, l := range b.Lines {
		if id := idOf(l); id != "" {
			pairs = append(pairs, id, fmt.Sprintf("ID%d", len(pairs)/2+1))
		}
	}
	r := strings.NewReplacer(pairs...)
	var out bytes.Buffer
	hb, _ := json.Marshal(map[string]any{"format": b.Header.Format, "version": b.Header.Version})
	out.Write(hb)
	out.WriteByte('\n')
	for _, raw := range b.Raw {
		var l map[string]any
		d := json.NewDecoder(strings.NewReader(r.Replace(string(raw))))
		d.UseNumber()
		if err := d.Decode(&l); err != nil {
			return nil, err
		}
		if s, ok := l[KindSession].(map[string]any); ok {
			delete(s, "updated_at")
			delete(s, "last_active_at")
			delete(s, "expires_at")
		}
		lb, _ := json.Marshal(l)
		out.Write(lb)
		out.WriteByte('\n')
	}
	counts, _ := json.Marshal(map[string]any{"kind": KindEnd, "counts": countsOf(b)})
	out.Write(counts)
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func idOf(l Line) string {
	switch {
	case l.Session != nil:
		return l.Session.ID
	case l.Run != nil:
		return l.Run.ID
	case l.Action != nil:
		return l.Action.ID
	}
	return ""
}

func countsOf(b *Bundle) map[string]int64 {
	c := map[string]int64{}
	for _, l := range b.Lines {
		c[l.Kind]++
	}
	return c
}
