package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// NetKind says what kind of network failure a NetError is.
type NetKind string

// Kinds of network failure.
const (
	NetDNS         NetKind = "dns"         // the host name could not be resolved
	NetRefused     NetKind = "refused"     // nothing listens at the address
	NetUnreachable NetKind = "unreachable" // no route to the host
	NetTLS         NetKind = "tls"         // the TLS handshake or certificate check failed
	NetTimeout     NetKind = "timeout"     // a time limit ran out (connecting, silence, a read, the caller's deadline)
	NetClosed      NetKind = "closed"      // the connection ended before the response was complete
	NetEncoding    NetKind = "encoding"    // the server compressed the response
	NetCanceled    NetKind = "canceled"    // the caller cancelled the context
	NetOther       NetKind = "other"       // anything else
)

// NetError is a failure to get a file from a server, or to get on at all once the caller's context is
// done, in plain words: Msg says what happened, Hint what to do. The cause stays wrapped, so errors.Is(err, context.Canceled), errors.As(err, **net.DNSError)
// and the like keep working.
type NetError struct {
	Kind NetKind
	Msg  string
	Hint string
	Err  error
	// again is set when trying again may help.
	again bool
}

// Error is Msg.
func (e *NetError) Error() string { return e.Msg }

// Unwrap gives the cause.
func (e *NetError) Unwrap() error { return e.Err }

const (
	hintOffline = "check the host name and the network connection (offline?)"
	hintSlow    = "the server or the network is slow or stalled; try again later"
	hintTLS     = "check the URL, the system clock and the trusted certificates; a proxy that intercepts TLS needs its certificate trusted"
)

// netError puts a transport failure in plain words. ctx is the caller's: when it is done, that is
// what happened. timeout is the limit on connecting and waiting, for the message. Errors already in
// words (a *NetError, *HTTPError or *canon.ReadError anywhere in the chain) are returned as they are, less
// the client's *url.Error around them.
func netError(ctx context.Context, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	for { // the client's wrapping repeats the URL and the method in Go's words
		u, ok := err.(*url.Error)
		if !ok {
			break
		}
		err = u.Err
	}
	var ne *NetError
	var he *HTTPError
	var re *canon.ReadError
	if errors.As(err, &ne) || errors.As(err, &he) || errors.As(err, &re) {
		return err
	}
	wrap := func(kind NetKind, again bool, hint, format string, args ...any) error {
		return &NetError{Kind: kind, Msg: fmt.Sprintf(format, args...), Hint: hint, Err: err, again: again}
	}
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var badCert x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var nerr net.Error
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			err = errors.Join(cerr, err)
		}
		if errors.Is(cerr, context.Canceled) {
			return wrap(NetCanceled, false, "", "interrupted")
		}
		return wrap(NetTimeout, false, "", "timed out: the time allowed ran out")
	}
	switch {
	case errors.As(err, &dns):
		return wrap(NetDNS, dns.IsTemporary, hintOffline, "cannot resolve host %s", textfmt.Escape(dns.Name))
	case errors.Is(err, syscall.ECONNREFUSED):
		return wrap(NetRefused, false, "is the server running, and is the port right?", "connection refused by %s", at(err))
	case errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH):
		return wrap(NetUnreachable, false, hintOffline, "no route to %s", at(err))
	case errors.As(err, &unknownCA):
		return wrap(NetTLS, false, hintTLS, "TLS failure: the server's certificate is not signed by an authority this system trusts")
	case errors.As(err, &badHost):
		return wrap(NetTLS, false, hintTLS, "TLS failure: the server's certificate is for another host")
	case errors.As(err, &badCert):
		return wrap(NetTLS, false, hintTLS, "TLS failure: the server's certificate is expired, not yet valid or not valid for this use")
	case errors.As(err, &verify):
		return wrap(NetTLS, false, hintTLS, "TLS failure: the server's certificate could not be verified")
	case errors.As(err, &nerr) && nerr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return wrap(NetTimeout, false, hintSlow, "timed out after %s waiting for the server", timeout)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return wrap(NetClosed, true, "try again", "the connection ended before the response was complete")
	}
	// Anything else: the innermost cause, which for system errors is already in words.
	inner := err
	for errors.Unwrap(inner) != nil {
		inner = errors.Unwrap(inner)
	}
	return wrap(NetOther, false, "", "network failure: %s", textfmt.Escape(inner.Error()))
}

// at names the address a dial failed to reach.
func at(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	return "the server"
}
