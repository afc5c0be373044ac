package webhooks

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/carryon-hub/carryon"
)

// Policy says which URLs webhooks may reach. The zero Policy is the safe default: https only,
// and only public addresses.
type Policy struct {
	// AllowHTTP accepts http:// URLs (--webhook-allow-http).
	AllowHTTP bool
	// AllowPrivate accepts URLs that resolve to loopback, private, link-local (cloud metadata),
	// shared, unspecified or multicast addresses (--webhook-allow-private).
	AllowPrivate bool
	// Resolver resolves host names at create; nil is net.DefaultResolver.
	Resolver *net.Resolver
}

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// refusedPrefixes are the ranges that netip's predicates do not name: shared address space
// (carrier-grade NAT), "this network", benchmarking, the IPv4/IPv6 translation and 6to4 relay
// prefixes that can embed a private IPv4 address, and the documentation ranges.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("100::/64"),
}

// Refused says why a webhook may not reach ip, or "" when it may: loopback, private, link-local
// (169.254.169.254, the cloud metadata address, is one), unspecified, multicast and the reserved
// ranges are refused unless the policy allows private addresses.
func (p Policy) Refused(ip netip.Addr) string {
	if p.AllowPrivate {
		return ""
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address (such as the cloud metadata service)"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, pre := range refusedPrefixes {
		if pre.Contains(ip) {
			return "a reserved address"
		}
	}
	return ""
}

// CheckURL checks a webhook URL at create or patch: absolute, http(s) as the policy allows,
// without user info, and with a host every address of which (after DNS resolution) the policy
// allows. EINVALID with the reason.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	if raw == "" {
		return carryon.Errorf(carryon.EINVALID, "url is required")
	}
	if len(raw) > MaxURLLength {
		return carryon.Errorf(carryon.EINVALID, "url is longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return carryon.Errorf(carryon.EINVALID, "url %q is not an absolute URL", raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return carryon.Errorf(carryon.EINVALID, "url must use https (this server does not allow http webhooks)")
	default:
		return carryon.Errorf(carryon.EINVALID, "url must use https, not %s", u.Scheme)
	}
	if u.User != nil {
		return carryon.Errorf(carryon.EINVALID, "url must not hold a user name or password")
	}
	if u.Fragment != "" {
		return carryon.Errorf(carryon.EINVALID, "url must not have a fragment")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if why := p.Refused(ip); why != "" {
			return carryon.Errorf(carryon.EINVALID, "url host %s is %s, which webhooks may not reach", host, why)
		}
		return nil
	}
	if p.AllowPrivate {
		return nil
	}
	res := p.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := res.LookupNetIP(rctx, "ip", host)
	if err != nil {
		return carryon.Errorf(carryon.EINVALID, "url host %s does not resolve: %v", host, err)
	}
	for _, ip := range addrs {
		if why := p.Refused(ip); why != "" {
			return carryon.Errorf(carryon.EINVALID, "url host %s resolves to %s, %s, which webhooks may not reach", host, ip, why)
		}
	}
	return nil
}

// control is the net.Dialer hook that checks the address actually dialled, after resolution:
// a name that resolved to a public address at create and to a private one now is refused here.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: dial %s: %w", address, err)
	}
	if why := p.Refused(ap.Addr()); why != "" {
		return fmt.Errorf("webhook: refused to connect to %s, %s", ap.Addr(), why)
	}
	return nil
}

// Client returns the HTTP client deliveries use: every connection's address checked by the
// policy (control), no proxy from the environment (which would dial for it), no redirects
// followed (a 3xx answer is a failed attempt, its code in the log), and timeout for the whole
// exchange.
func (p Policy) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout, Control: p.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
