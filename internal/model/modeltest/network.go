package modeltest

import (
	"context"
	"iter"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model"
)

// Network is a fake server on an in-memory network: Client reaches handler at URL over
// net.Pipe connections, with real HTTP/1.1 on them. Real sockets would keep a testing/synctest
// bubble's clock from moving (a goroutine reading one is not durably blocked); pipes do not, so
// a test of timeouts runs in fake time, at once and without races against a real clock.
// Created inside a bubble, everything it starts belongs to that bubble.
type Network struct {
	// URL is the server's base URL ("http://model.test").
	URL string
	// Client sends requests to the server, and nowhere else.
	Client *http.Client

	srv    *http.Server
	served chan struct{}
	stop   context.CancelFunc
}

// NewNetwork starts handler on a new in-memory network. Close stops it.
func NewNetwork(handler http.Handler) *Network {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	base, stop := context.WithCancel(context.Background())
	n := &Network{
		URL:    "http://model.test",
		Client: &http.Client{Transport: &http.Transport{DialContext: l.dial}},
		srv: &http.Server{Handler: handler,
			BaseContext: func(net.Listener) context.Context { return base }},
		served: make(chan struct{}),
		stop:   stop,
	}
	go func() {
		defer close(n.served)
		_ = n.srv.Serve(l)
	}()
	return n
}

// Close ends the requests' contexts (so handlers that wait on them return), closes the server
// and its connections and waits for it to stop serving.
func (n *Network) Close() {
	n.stop()
	_ = n.srv.Close()
	n.Client.CloseIdleConnections()
	<-n.served
}

// pipeListener hands the server the far ends of the pipes the client dials.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// dial connects a new pipe to the server.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept returns the next connection a client dialled.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting connections.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a made-up address: there is no socket.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "model.test:80" }

// CollectWithin collects seq as model.Collect does and returns what it got, unless the stream
// has not ended within d: then it fails t, calls stop (which must end the stream, by cancelling
// its context) and waits for the stream to end. It keeps a test of a stream that never ends
// from hanging; inside a synctest bubble d passes in fake time.
func CollectWithin(t testing.TB, d time.Duration, stop func(), seq iter.Seq2[model.Chunk, error]) (model.Response, error) {
	t.Helper()
	type result struct {
		resp model.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// As model.Collect, with the text in a builder: a stream that never ends makes much.
		var resp model.Response
		var text strings.Builder
		var err error
		for c, cerr := range seq {
			if err = cerr; err != nil {
				break
			}
			text.WriteString(c.Delta)
			c.Delta = ""
			resp.Add(c)
		}
		resp.Text = text.String()
		done <- result{resp, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-timer.C:
		t.Errorf("the model call had not ended after %s", d)
		stop()
		r := <-done
		return r.resp, r.err
	}
}
