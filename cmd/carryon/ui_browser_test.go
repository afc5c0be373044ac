package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/npmtest"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium (headless) through the inspector at /ui/ of a real
// server process. Each saves screenshots under $CARRYON_TEST_SCREENSHOTS/<test>/ when that is
// set (a temporary directory otherwise), fails on any request the page makes to another origin,
// on a script error, on any error in the console (a failed request included, unless the test
// declared that it provokes it: allowConsole), and on a serious or critical accessibility
// violation found by axe-core (pinned in .ci/npm) on every page it checks.

// browserPage is one tab of a headless chromium on the inspector of the server at origin.
type browserPage struct {
	t      *testing.T
	ctx    context.Context
	origin string
	shots  string

	mu      sync.Mutex
	allowed []*regexp.Regexp // console errors the test provokes on purpose
}

// allowConsole declares that the test provokes console errors matching the regular expression
// (matched against "text url"): a refusal it asks for (a stale edit's 409), or a stream cut by
// a server it kills. Every other console error fails the test.
func (p *browserPage) allowConsole(re string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowed = append(p.allowed, regexp.MustCompile(re))
}

// consoleError fails the test on a console error it did not allow.
func (p *browserPage) consoleError(source, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, re := range p.allowed {
		if re.MatchString(line) {
			p.t.Logf("expected console error (%s): %s", source, line)
			return
		}
	}
	p.t.Errorf("console error (%s): %s", source, line)
}

var axeSource struct {
	once sync.Once
	js   string
	err  error
}

// requireBrowser returns chromium's path and axe-core's source, or skips the test without them
// (fails under CARRYON_TEST_REQUIRE_NPM=1, as in CI).
func requireBrowser(t *testing.T) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		npmtest.Missing(t, "chromium is not installed (apt-get install chromium)")
	}
	axe := npmtest.File(t, "axe-core/axe.min.js")
	axeSource.once.Do(func() {
		var b []byte
		b, axeSource.err = os.ReadFile(axe)
		axeSource.js = string(b)
	})
	if axeSource.err != nil {
		t.Fatal(axeSource.err)
	}
	return bin, axeSource.js
}

// newBrowserPage starts a headless chromium for origin (http://host:port of the server).
func newBrowserPage(t *testing.T, origin string) *browserPage {
	t.Helper()
	bin, _ := requireBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	shots := os.Getenv("CARRYON_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	shots = filepath.Join(shots, regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &browserPage{t: t, ctx: ctx, origin: origin, shots: shots}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(ev.Request.URL)
			if err != nil || (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ws" || u.Scheme == "wss") && u.Scheme+"://"+u.Host != origin {
				t.Errorf("the page requested %s, outside %s", ev.Request.URL, origin)
			} else if u.Scheme != "http" && u.Scheme != "data" && u.Scheme != "about" {
				t.Errorf("the page requested %s", ev.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			t.Errorf("script error: %s (%s:%d)", msg, d.URL, d.LineNumber)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.consoleError("console."+string(ev.Type), strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				p.consoleError(string(ev.Entry.Source), ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// do runs the actions within a minute; on an error it saves a screenshot and fails the test.
func (p *browserPage) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.shot("failed")
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("%s: %v\nthe page says:\n%s", what, err, body)
	}
}

// until waits (up to a minute) for the JavaScript expression to be true.
func (p *browserPage) until(what, expr string) {
	p.t.Helper()
	p.do(what, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Minute), chromedp.WithPollingInterval(100*time.Millisecond))(ctx, t)
		return chromedp.Void{}, err
	})
}

// eval evaluates a JavaScript expression as a string.
func (p *browserPage) eval(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// shot saves a screenshot of the whole page as name.png.
func (p *browserPage) shot(name string) {
	p.t.Helper()
	b, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(p.shots, name+".png"), b, 0o644); err != nil {
		p.t.Error(err)
	}
}

// axeViolation is one rule axe-core found broken.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// check injects axe-core into the page, fails the test on a serious or critical violation, and
// saves a screenshot as name.png.
func (p *browserPage) check(name string) {
	p.t.Helper()
	_, axe := requireBrowser(p.t)
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
		p.t.Fatalf("inject axe-core: %v", err)
	}
	vs, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {resultTypes: ['violations']}).then((r) =>
		r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
		 .map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("run axe-core: %v", err)
	}
	for _, v := range vs {
		p.t.Errorf("%s: accessibility (%s) %s: %s on %s", name, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, ", "))
	}
	p.shot(name)
}

// signIn opens the inspector and signs in with key by typing it.
func (p *browserPage) signIn(key string) {
	p.t.Helper()
	p.do("open the sign-in page", chromedp.Navigate(p.origin+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)))
	p.check("sign-in")
	p.do("sign in", chromedp.SendKeys(chromedp.CSS(`input[name=key]`), key), chromedp.Click(chromedp.CSS(`form button[type=submit]`)))
	p.until("the sessions list", `document.title.startsWith('Sessions') && !!document.querySelector('table tbody')`)
}

// click clicks the button whose text is label. The page may draw the button again between
// finding and clicking it (a refresh of the data it shows): then the click finds it again.
func (p *browserPage) click(label string) {
	p.t.Helper()
	sel := fmt.Sprintf(`//button[normalize-space()=%q]`, label)
	p.do("click "+label, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			_, err := chromedp.Click(sel)(ctx, t)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "Could not find node") {
				return chromedp.Void{}, err
			}
		}
	})
}

// fixedAddr is a free loopback address, so that a restarted server keeps the page's origin.
func fixedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { return fmt.Sprintf("%q", s) }
