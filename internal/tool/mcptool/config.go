package mcptool

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of a Config's durations.
const (
	// DefaultCallTimeout bounds one tool call when Config.CallTimeout is zero.
	DefaultCallTimeout = 60 * time.Second
	// DefaultConnectTimeout bounds starting and initialising a server when Config.ConnectTimeout
	// is zero. It is generous because a command such as `npx -y pkg` may first download pkg.
	DefaultConnectTimeout = 60 * time.Second
	// DefaultMaxConcurrentCalls is how many calls one server has in flight at most when
	// Config.MaxConcurrentCalls is zero: enough for the parallel calls of a few runs, few enough
	// that a server that stops answering holds only that many calls, the others failing as not
	// made when their timeout ends while they wait.
	DefaultMaxConcurrentCalls = 4
)

// Config describes one MCP server. Exactly one of Command, URL and Transport is set.
type Config struct {
	// Name is the server's name, the prefix of its tools' names (<Name>__<tool>). It is 1 to 32
	// letters and digits in words joined by single "_" or "-", so that no two servers' tool names
	// can meet.
	Name string
	// Command is the program and arguments of a stdio server, started on first use.
	Command []string
	// Dir is the working directory of Command; "" means carryon's.
	Dir string
	// Env is added to the small environment a stdio server inherits (see InheritedEnv): carryon's
	// own variables, its keys among them, are not passed on.
	Env map[string]string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// Headers are sent with every HTTP request to URL, values already resolved (the profile
	// layer reads them from the environment).
	Headers map[string]string
	// Transport, when set, makes a new connection to the server each time one is needed; for
	// programs that embed a server in process, and for tests. Command and URL must then be empty.
	Transport func() mcp.Transport
	// TrustAnnotations lets the server's readOnlyHint and idempotentHint decide its tools' effect
	// classes; otherwise every tool is unsafe (the MCP specification calls annotations untrusted
	// unless the server is).
	TrustAnnotations bool
	// CallTimeout bounds one tool call, including (re)starting the server; 0 means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// ConnectTimeout bounds starting and initialising the server; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// MaxConcurrentCalls is how many tool calls the server has in flight at most; a call beyond
	// them waits for one to end, within its own timeout and context. 0 means
	// DefaultMaxConcurrentCalls.
	MaxConcurrentCalls int
}

var (
	serverNameRE = regexp.MustCompile(`^[a-zA-Z0-9]+(?:[_-][a-zA-Z0-9]+)*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// maxServerName keeps <server>__ well inside the 64 characters of a tool name.
const maxServerName = 32

// Validate reports what is wrong with c as an EINVALID error naming the field, or nil.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return carryon.Errorf(carryon.EINVALID, "mcp server %q: "+format, append([]any{c.Name}, args...)...)
	}
	if len(c.Name) > maxServerName || !serverNameRE.MatchString(c.Name) {
		return bad("the name must be 1 to %d letters and digits, in words joined by single _ or -", maxServerName)
	}
	set := 0
	for _, on := range []bool{len(c.Command) > 0, c.URL != "", c.Transport != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		return bad("set exactly one of command and url")
	}
	if len(c.Command) > 0 && strings.TrimSpace(c.Command[0]) == "" {
		return bad("command: the program is empty")
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad("env: %q is not a variable name", k)
		}
	}
	if len(c.Env) > 0 && len(c.Command) == 0 {
		return bad("env is only for a command")
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url: %q is not an http or https URL", c.URL)
		}
	}
	if len(c.Headers) > 0 && c.URL == "" {
		return bad("headers are only for a url")
	}
	for k, v := range c.Headers {
		if !headerNameRE.MatchString(k) {
			return bad("headers: %q is not a header name", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return bad("headers: the value of %s holds a line break", k)
		}
	}
	if c.CallTimeout < 0 || c.ConnectTimeout < 0 {
		return bad("timeouts must not be negative")
	}
	if c.MaxConcurrentCalls < 0 {
		return bad("max_concurrent_calls must be 1 or more (0 for the default, %d)", DefaultMaxConcurrentCalls)
	}
	return nil
}

func (c Config) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

func (c Config) maxConcurrentCalls() int {
	if c.MaxConcurrentCalls > 0 {
		return c.MaxConcurrentCalls
	}
	return DefaultMaxConcurrentCalls
}

func (c Config) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// transportName is the network.transport of the server's calls: "pipe" for a stdio server, "tcp"
// for a streamable HTTP one, "inproc" for a Transport of the program's own.
func (c Config) transportName() string {
	switch {
	case len(c.Command) > 0:
		return "pipe"
	case c.URL != "":
		return "tcp"
	}
	return "inproc"
}

// host is the server.address of a streamable HTTP server ("" for the others).
func (c Config) host() string {
	if u, err := url.Parse(c.URL); err == nil && c.URL != "" {
		return u.Hostname()
	}
	return ""
}
