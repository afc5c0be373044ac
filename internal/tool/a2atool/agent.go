package a2atool

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Defaults and bounds.
const (
	// DefaultCallTimeout bounds one call when Config.CallTimeout is zero: a remote agent runs a
	// model loop of its own.
	DefaultCallTimeout = 5 * time.Minute
	// CardTimeout bounds reading the card; listCardTimeout when a run's start lists the tools.
	CardTimeout     = 10 * time.Second
	listCardTimeout = 3 * time.Second
	// RetryCard is how long a card that could not be read is not asked for again when runs list
	// the tools (a call always tries).
	RetryCard = 30 * time.Second
	// maxCardBytes and maxAnswerBytes bound what is read of a card and of an answer.
	maxCardBytes   = 1 << 20
	maxAnswerBytes = 16 << 20
)

// Config describes one remote A2A agent.
type Config struct {
	// Name is the agent's name in the agents file; its tool is Name + "__send_message".
	Name string
	// URL is the agent card's URL (ending in .json) or the base it is under.
	URL string
	// Headers are sent with every request, values already resolved (such as Authorization).
	Headers map[string]string
	// CallTimeout bounds one call, the send and the wait for the task; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// Effect is the tool's effect class; "" means unsafe.
	Effect carryon.EffectClass
	// HTTPClient makes the requests; nil means a client of its own.
	HTTPClient *http.Client
}

// Agent is one remote A2A agent: a tool.Source of its one tool, and a tool.Checker.
type Agent struct {
	cfg     Config
	http    *http.Client
	cardAt  string
	mu      sync.Mutex
	card    *card
	ep      endpoint
	lastErr error
	triedAt time.Time
}

var (
	_ tool.Source  = (*Agent)(nil)
	_ tool.Checker = (*Agent)(nil)
)

// New returns the agent of cfg. Its card is read on first need.
func New(cfg Config) (*Agent, error) {
	at, err := cardURL(cfg.URL)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "A2A agent %s: url: %v", cfg.Name, err)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.Effect == "" {
		cfg.Effect = carryon.EffectUnsafe
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Agent{cfg: cfg, http: hc, cardAt: at}, nil
}

// ToolName is the name of the agent's tool.
func (a *Agent) ToolName() string { return a.cfg.Name + "__send_message" }

// Tools returns the agent's one tool. It never fails: a card that cannot be read yet leaves a
// plain description (and each call tries to read it).
func (a *Agent) Tools(ctx context.Context) ([]tool.Tool, error) {
	desc := fmt.Sprintf("Sends a message to the remote agent %s (A2A, %s) and returns its reply. %s", a.cfg.Name, a.cfg.URL, conversationNote)
	a.mu.Lock()
	retry := a.card == nil && time.Since(a.triedAt) >= RetryCard
	a.mu.Unlock()
	if retry {
		// A run's start waits for the card a little only: its calls try again for longer.
		lctx, cancel := context.WithTimeout(ctx, listCardTimeout)
		_, _, _ = a.resolve(lctx)
		cancel()
	}
	a.mu.Lock()
	if a.card != nil {
		desc = a.card.description(a.cfg.Name)
	}
	a.mu.Unlock()
	return []tool.Tool{&sendTool{agent: a, desc: desc}}, nil
}

// Check reads the agent's card (once it was read, it is not read again) and says why it cannot.
func (a *Agent) Check(ctx context.Context) error {
	_, _, err := a.resolve(ctx)
	return err
}

// resolve returns the card and its endpoint, reading the card when it was not read yet.
func (a *Agent) resolve(ctx context.Context) (*card, endpoint, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.card != nil {
		return a.card, a.ep, nil
	}
	ctx, cancel := context.WithTimeout(ctx, CardTimeout)
	defer cancel()
	c, ep, err := a.fetchCard(ctx, a.cardAt)
	a.triedAt = time.Now()
	if err != nil {
		a.lastErr = fmt.Errorf("its agent card at %s cannot be read: %v", a.cardAt, err)
		return nil, endpoint{}, a.lastErr
	}
	a.card, a.ep, a.lastErr = c, ep, nil
	return c, ep, nil
}

// readLimited reads r to its end, refusing more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the answer is over %d bytes", limit)
	}
	return b, nil
}

// snippet is the start of a body, for an error.
func snippet(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "?"))
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
