package openaiapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends body to the server with key and returns the status and the decoded answer.
func (e *env) post(t *testing.T, key, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s answered %d %q", path, res.StatusCode, raw)
	}
	return res.StatusCode, out
}

// A compaction item continues only for the user it was made for, on the server that made it:
// another user's, another server's or an altered one is refused, and nothing runs.
func TestCompactionItemRefusedElsewhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status, c := e.post(t, e.aliceKey, "/v1/responses/compact", `{"model":"fake","input":"the code word is ZEBRA"}`)
	if status != 200 || c["object"] != "response.compaction" {
		t.Fatalf("compact answered %d %v", status, c)
	}
	output := c["output"].([]any)
	item, _ := json.Marshal(output[len(output)-1])
	next := `{"model":"fake","input":[` + string(item) + `,{"role":"user","content":"go on"}]}`
	if status, r := e.post(t, e.aliceKey, "/v1/responses", next); status != 200 || r["status"] != "completed" {
		t.Fatalf("alice continuing her compaction answered %d %v", status, r)
	}
	other := newEnv(t)
	for name, try := range map[string]func() (int, map[string]any){
		"another user":   func() (int, map[string]any) { return e.post(t, e.bobKey, "/v1/responses", next) },
		"another server": func() (int, map[string]any) { return other.post(t, other.aliceKey, "/v1/responses", next) },
		"altered": func() (int, map[string]any) {
			return e.post(t, e.aliceKey, "/v1/responses", strings.Replace(next, `"encrypted_content":"cmp1.`, `"encrypted_content":"cmp1.e`, 1))
		},
	} {
		status, r := try()
		errObj, _ := r["error"].(map[string]any)
		if status != 400 || errObj["param"] != "input[0].encrypted_content" {
			t.Fatalf("%s: answered %d %v, want 400 naming the item", name, status, r)
		}
	}
}
