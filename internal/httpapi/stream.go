package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
)

// itemsHead is how a page's JSON begins when its items come first and are empty.
var itemsHead = []byte(`{"items":[]`)

// writeStreamed answers 200 with v as JSON like writeJSON, but a page (a struct whose first
// field is its Items list, as every listing's is) is written an item at a time: the answer is
// never held whole in memory beside the items it encodes, however large the page (a page is
// bounded in bytes by the store's read budget; this bounds what encoding it adds to one item).
// Anything else, and a small page, is written by writeJSON. An item that fails to encode once
// the answer has begun cuts the connection (the client sees a truncated answer, never a
// complete-looking wrong one).
func (s *server) writeStreamed(w http.ResponseWriter, r *http.Request, v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct || rv.NumField() == 0 || rv.Type().Field(0).Name != "Items" || rv.Field(0).Kind() != reflect.Slice || rv.Field(0).Len() < 2 {
		s.writeJSON(w, r, http.StatusOK, v)
		return
	}
	items := rv.Field(0)
	rest := reflect.New(rv.Type()).Elem()
	rest.Set(rv)
	rest.Field(0).Set(reflect.MakeSlice(items.Type(), 0, 0))
	frame, err := marshal(rest.Interface())
	if err != nil || !bytes.HasPrefix(frame, itemsHead) {
		s.writeJSON(w, r, http.StatusOK, v)
		return
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(frame[:len(itemsHead)-1]) // {"items":[
	for i := range items.Len() {
		b, err := marshal(items.Index(i).Interface())
		if err != nil {
			s.logger.ErrorContext(r.Context(), "an item of a page cannot be encoded", "path", r.URL.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
		if i > 0 {
			_, _ = w.Write([]byte{','})
		}
		if _, err := w.Write(b); err != nil {
			return // the client went away
		}
	}
	_, _ = w.Write(append(frame[len(itemsHead)-1:], '\n')) // ]…} and writeJSON's newline
}

// marshal encodes v as the API does (no HTML escaping), without the encoder's newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
