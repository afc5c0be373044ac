package webui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// get sends one request to the handler mounted at Path on a real loopback listener.
func request(t *testing.T, srv *httptest.Server, method, path string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func serve(cfg Config) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle(Path, Handler(cfg))
	return httptest.NewServer(mux)
}

func TestServesTheAppUnderAStrictPolicy(t *testing.T) {
	t.Parallel()
	srv := serve(Config{})
	defer srv.Close()
	for _, path := range []string{"/ui/", "/ui/app.js", "/ui/app.css", "/ui/session.js"} {
		res, body := request(t, srv, "GET", path, nil)
		if res.StatusCode != 200 || body == "" {
			t.Fatalf("GET %s = %d", path, res.StatusCode)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy || !strings.Contains(got, "script-src 'self'") {
			t.Fatalf("GET %s: Content-Security-Policy %q", path, got)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET %s: no nosniff", path)
		}
	}
	if res, _ := request(t, srv, "GET", "/ui/app.js", nil); !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js is served as %q: a module needs a JavaScript type", res.Header.Get("Content-Type"))
	}
	if res, _ := request(t, srv, "POST", "/ui/", nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /ui/ = %d", res.StatusCode)
	}
}

// TestNoExternalReferences: no file of the app names another origin, an inline script or an
// inline style (the policy would refuse them; this finds them before a browser does). The SVG
// namespace is a name a browser never fetches, so it is the one address a file may hold.
func TestNoExternalReferences(t *testing.T) {
	t.Parallel()
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|<script>|style="|\son[a-z]+="`)
	err := fs.WalkDir(static, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "'http://www.w3.org/2000/svg'", "")
		if m := external.FindString(text); m != "" {
			t.Errorf("%s holds %q", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLocalKey(t *testing.T) {
	t.Parallel()
	key := func() (string, error) { return "ck_local", nil }
	srv := serve(Config{LocalKey: key})
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	good := map[string]string{"X-Carryon-Local-Key": "1", "Sec-Fetch-Site": "same-origin", "Origin": srv.URL}
	res, body := request(t, srv, "POST", LocalKeyPath, good)
	if res.StatusCode != 200 || !strings.Contains(body, `"ck_local"`) || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a same-origin loopback request got %d %q (%s)", res.StatusCode, body, res.Header.Get("Cache-Control"))
	}
	without := func(name, value string) map[string]string {
		h := map[string]string{}
		for k, v := range good {
			h[k] = v
		}
		if value == "" {
			delete(h, name)
		} else {
			h[name] = value
		}
		return h
	}
	refused := map[string]map[string]string{
		"no custom header":        without("X-Carryon-Local-Key", ""),
		"cross-site":              without("Sec-Fetch-Site", "cross-site"),
		"no fetch metadata":       without("Sec-Fetch-Site", ""),
		"another origin":          without("Origin", "http://evil.example"),
		"no origin":               without("Origin", ""),
		"a rebinding host header": {"X-Carryon-Local-Key": "1", "Sec-Fetch-Site": "same-origin", "Origin": "http://evil.example:" + strings.Split(host, ":")[1], "Host": "evil.example:" + strings.Split(host, ":")[1]},
	}
	for name, h := range refused {
		if res, body := request(t, srv, "POST", LocalKeyPath, h); res.StatusCode != 404 || strings.Contains(body, "ck_local") {
			t.Errorf("%s: %d %q, want 404", name, res.StatusCode, body)
		}
	}
	if res, _ := request(t, srv, "PUT", LocalKeyPath, good); res.StatusCode != 404 {
		t.Errorf("PUT = %d, want 404", res.StatusCode)
	}
	off := serve(Config{})
	defer off.Close()
	if res, _ := request(t, off, "POST", LocalKeyPath, map[string]string{"X-Carryon-Local-Key": "1", "Sec-Fetch-Site": "same-origin", "Origin": off.URL}); res.StatusCode != 404 {
		t.Errorf("without Config.LocalKey: %d, want 404", res.StatusCode)
	}
}

// TestLocalKeyOffered: GET says whether the key is offered (on, loopback connection and Host)
// with a 200 either way, so the sign-in page asks for it only when it may get it; it never
// answers the key.
func TestLocalKeyOffered(t *testing.T) {
	t.Parallel()
	on := serve(Config{LocalKey: func() (string, error) { return "ck_local", nil }})
	defer on.Close()
	off := serve(Config{})
	defer off.Close()
	port := strings.Split(on.URL, ":")[2]
	for _, c := range []struct {
		name    string
		srv     *httptest.Server
		headers map[string]string
		want    string
	}{
		{"on", on, nil, `{"offered":true}`},
		{"off", off, nil, `{"offered":false}`},
		{"a rebinding host header", on, map[string]string{"Host": "evil.example:" + port}, `{"offered":false}`},
	} {
		res, body := request(t, c.srv, "GET", LocalKeyPath, c.headers)
		if res.StatusCode != 200 || strings.TrimSpace(body) != c.want || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d %q (%s), want 200 %s", c.name, res.StatusCode, body, res.Header.Get("Cache-Control"), c.want)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{"127.0.0.1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"127.1.2.3": true, "10.0.0.1": false, "example.com": false, "localhost.example.com": false, "": false} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}
