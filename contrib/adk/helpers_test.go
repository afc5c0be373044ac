package carryonadk_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/contrib/adk"
	"github.com/carryon-hub/carryon/hub"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

// testHub is a hub in a fresh data directory, serving HTTP too, with users alice and bob.
type testHub struct {
	hub        *hub.Hub
	url        string
	alice, bob *carryon.User
	aliceKey   string
	bobKey     string
}

// newHub opens a hub in dir (a fresh one when dir is ""), with runners off, and serves its API.
func newHub(t testing.TB, dir string) *testHub {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	h, err := hub.Open(t.Context(), hub.Options{Data: dir, NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	th := &testHub{hub: h}
	trusted := carryon.NewTrustedContext(t.Context())
	for _, u := range []struct {
		name string
		user **carryon.User
		key  *string
	}{{"alice", &th.alice, &th.aliceKey}, {"bob", &th.bob, &th.bobKey}} {
		got, key, err := h.Users.CreateUser(trusted, carryon.NewUser{Name: u.name})
		if carryon.ErrorCode(err) == carryon.ECONFLICT {
			if got, err = h.Users.GetUser(trusted, u.name); err == nil {
				_, key, err = h.Users.CreateKey(trusted, got.ID)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		*u.user, *u.key = got, key
	}
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{
		Sessions: h.Sessions, Users: h.Users, Runs: h.Runs, LongTerm: h.LongTerm, Agents: h.Agents,
		Logger: slog.New(slog.DiscardHandler), Ready: h.Ping,
	}))
	t.Cleanup(srv.Close)
	th.url = srv.URL
	return th
}

// mode is one way of reaching carryon: in-process or over HTTP.
type mode struct {
	name string
	// service returns an adapter acting for alice (or bob) with opt.
	service func(th *testHub, bob bool, opt carryonadk.Options) *carryonadk.Service
}

var modes = []mode{
	{"in-process", func(th *testHub, bob bool, opt carryonadk.Options) *carryonadk.Service {
		u := th.alice
		if bob {
			u = th.bob
		}
		return carryonadk.NewInProcess(th.hub, u, opt)
	}},
	{"http", func(th *testHub, bob bool, opt carryonadk.Options) *carryonadk.Service {
		key := th.aliceKey
		if bob {
			key = th.bobKey
		}
		return carryonadk.NewHTTP(client.New(th.url, key), opt)
	}},
}
