package webui

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
)

// serveLocalKey answers POST LocalKeyPath with {"key": …} when every check holds, 404 otherwise
// (the same answer whatever failed, so a probe learns nothing):
//   - the server was given the key (serve --ui-local-key);
//   - the connection comes from a loopback address and reached a loopback address;
//   - the Host header names a loopback address or localhost (a DNS-rebinding page on another
//     name is refused);
//   - the browser says the request is same-origin (Sec-Fetch-Site) and its Origin is this host,
//     and the custom header X-Carryon-Local-Key is set (a cross-site form or image cannot send it).
//
// A non-browser process on the same machine can forge the headers: this route trusts every
// local process as much as the key file's owner, which is why it is off by default.
//
// GET LocalKeyPath answers {"offered": bool}, never the key: whether the route is on and the
// connection and Host are loopback, so the sign-in page asks for the key only when it may get
// it (a 404 it provokes would be an error in the browser's console).
func serveLocalKey(w http.ResponseWriter, r *http.Request, key func() (string, error)) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]bool{"offered": key != nil && loopbackRequest(r)})
		return
	}
	if key == nil || r.Method != http.MethodPost || !localRequest(r) {
		http.NotFound(w, r)
		return
	}
	k, err := key()
	if err != nil || k == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"key": k})
}

// localRequest reports whether r passes the checks of serveLocalKey.
func localRequest(r *http.Request) bool {
	if r.Header.Get("X-Carryon-Local-Key") != "1" || r.Header.Get("Sec-Fetch-Site") != "same-origin" {
		return false
	}
	return loopbackRequest(r) && r.Header.Get("Origin") == "http://"+r.Host
}

// loopbackRequest reports whether r came from and reached a loopback address, with a Host
// header that names a loopback address or localhost.
func loopbackRequest(r *http.Request) bool {
	if !loopbackHostPort(r.RemoteAddr) {
		return false
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); !ok || !loopbackHostPort(la.String()) {
		return false
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	return loopbackHost(host)
}

// loopbackHostPort reports whether addr (host:port) is a loopback IP address.
func loopbackHostPort(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header's host is a loopback IP address or localhost.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
