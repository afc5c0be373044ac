package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

// A client that trickles its body a byte at a time gets 408 (or a closed connection) once the
// body read timeout has passed, on every one of many connections at once; none stays open.
func TestSlowBodiesTimeOut(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	e := newEnv(t, func(c *httpapi.Config) { c.BodyReadTimeout = timeout })
	s := e.newSession("slow")
	const conns = 20
	var wg sync.WaitGroup
	results := make(chan string, conns)
	start := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- trickle(e, "/v1/sessions/"+s.ID+"/messages", e.aliceKey)
		}()
	}
	wg.Wait()
	close(results)
	elapsed := time.Since(start)
	for r := range results {
		if r != "408" && r != "closed" {
			t.Errorf("a trickling client got %s", r)
		}
	}
	if elapsed > timeout+5*time.Second {
		t.Errorf("the slow connections were cut after %s; the timeout is %s", elapsed, timeout)
	}
}

// trickle sends the headers of a request with a 1000-byte body, then the body a byte every 20ms,
// and reports how the server ended it: "408", "closed", another status, or "still open" when
// nothing happened for 10 s.
func trickle(e *env, path, key string) string {
	c, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", path, key)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	switch {
	case err == nil:
		defer resp.Body.Close()
		return fmt.Sprint(resp.StatusCode)
	case err == io.EOF || err == io.ErrUnexpectedEOF || strings.Contains(err.Error(), "reset"):
		return "closed"
	case strings.Contains(err.Error(), "timeout"):
		return "still open"
	}
	return err.Error()
}

// slowSessions answers appends only after a delay (a slow database), unless the request's
// context ends first.
type slowSessions struct {
	carryon.SessionService
	delay time.Duration
}

func (s slowSessions) AppendMessages(ctx context.Context, id string, in carryon.AppendInput) (*carryon.AppendResult, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.SessionService.AppendMessages(ctx, id, in)
}

// The body timeout ends with the body: an answer that takes longer than it (here a slow append;
// in general an event stream) is not cut, and the connection is reused afterwards.
func TestBodyTimeoutSparesLongAnswers(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	e := newEnv(t, func(c *httpapi.Config) {
		c.BodyReadTimeout = timeout
		c.Sessions = slowSessions{SessionService: c.Sessions, delay: 3 * timeout}
	})
	s := e.newSession("long")
	for i := 0; i < 2; i++ {
		a := e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, `{"messages":[{"role":"user","content":"x"}]}`)
		wantStatus(t, a, http.StatusCreated)
	}
}

// Paths that are not canonical answer a problem, never a redirect.
func TestUncleanPathsAnswerProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("paths")
	client := *e.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, p := range []string{"/v1/sessions/../users", "//v1/sessions", "/v1/./sessions", "/v1/sessions/" + s.ID + "/../" + s.ID, "/v1//me"} {
		for _, method := range []string{"GET", "POST"} {
			r, err := http.NewRequest(method, e.srv.URL+p, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Authorization", "Bearer "+e.aliceKey)
			resp, err := client.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Location") != "" {
				t.Errorf("%s %s: %d %s Location %q: %s", method, p, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location"), body)
			} else if !strings.Contains(string(body), "not canonical") {
				t.Errorf("%s %s: %s", method, p, body)
			}
		}
	}
	wantStatus(t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""), http.StatusOK)
}
