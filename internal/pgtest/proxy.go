package pgtest

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy between a test's clients and a PostgreSQL server, for faults the server
// itself cannot be asked for: Cut drops every connection at once (a restart, a failover, a broken
// network), Refuse turns new connections away (a server that is down), Stall stops every byte in
// both directions while keeping the connections open (a partition, a frozen host) until Resume.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	conns    map[*pipe]struct{}
	refusing bool
	gate     chan struct{} // closed while bytes flow; a fresh open channel while stalled
	accepted int
	closed   bool
}

// pipe is one proxied connection: the client's side and the server's.
type pipe struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

func (p *pipe) close() {
	p.once.Do(func() {
		close(p.done)
		p.client.Close()
		p.server.Close()
	})
}

// NewProxy starts a proxy on a free port of 127.0.0.1 to target (host:port) and stops it, closing
// every connection, when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{ln: ln, target: target, conns: map[*pipe]struct{}{}, gate: open}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// NewProxyFor starts a proxy to the server dsn (a postgres:// URL) names and returns it with dsn
// rewritten to connect through it.
func NewProxyFor(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("proxy: %q is not a postgres:// URL with a host", dsn)
	}
	host := u.Host
	if !strings.Contains(host, ":") {
		host += ":5432"
	}
	p := NewProxy(t, host)
	u.Host = p.Addr()
	return p, u.String()
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is the number of connections the proxy has accepted so far (refused ones included).
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Open is the number of connections the proxy holds open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Cut closes every connection the proxy holds, both sides, as a dying server or network would.
func (p *Proxy) Cut() {
	p.mu.Lock()
	conns := make([]*pipe, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Refuse sets whether new connections are closed as soon as they are accepted (the server is
// down); the connections already open are left alone (Cut them too for a restart).
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusing = on
}

// Stall stops forwarding bytes on every connection, open or new, until Resume: the connections
// stay up, and whoever waits on them waits.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default: // already stalled
	}
}

// Resume lets the bytes held by Stall flow again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.Resume()
	p.Cut()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		refuse := p.refusing || p.closed
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		go p.connect(c)
	}
}

func (p *Proxy) connect(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	c := &pipe{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	go p.copy(c, server, client)
	p.copy(c, client, server)
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// copy forwards src to dst, holding each chunk while the proxy is stalled, until either side
// fails; then it closes the pipe.
func (p *Proxy) copy(c *pipe, dst, src net.Conn) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			p.mu.Unlock()
			select {
			case <-gate:
			case <-c.done:
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed side: the pipe is done
		}
	}
}
