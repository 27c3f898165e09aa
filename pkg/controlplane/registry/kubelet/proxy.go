package kubelet

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ProxyHandler forwards a request to Location, as upstream's
// UpgradeAwareHandler: an upgrade request (SPDY, WebSocket) is dialed and
// both connections are joined; other requests go through a reverse proxy,
// unless UpgradeRequired (exec, attach, portforward), which answers 400.
// Errors are answered with Fail.
type ProxyHandler struct {
	Location        *url.URL
	Transport       *http.Transport
	UpgradeRequired bool
	Fail            rest.ErrorWriter
}

func isUpgradeRequest(req *http.Request) bool {
	for _, v := range req.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

func (h *ProxyHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if isUpgradeRequest(req) {
		h.serveUpgrade(w, req)
		return
	}
	if h.UpgradeRequired {
		h.Fail(w, req, apierrors.NewBadRequest("Upgrade request required"))
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = h.Location.Scheme
			r.Out.URL.Host = h.Location.Host
			r.Out.URL.Path = h.Location.Path
			r.Out.URL.RawPath = ""
			r.Out.URL.RawQuery = h.Location.RawQuery
			r.Out.Host = h.Location.Host
		},
		Transport:     h.Transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			h.Fail(w, req, err)
		},
	}
	rp.ServeHTTP(w, req)
}

// serveUpgrade dials the backend, sends it the request and, when it
// switches protocols, joins the client's connection to it.
func (h *ProxyHandler) serveUpgrade(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	out := req.Clone(ctx)
	out.URL = &url.URL{Scheme: h.Location.Scheme, Host: h.Location.Host, Path: h.Location.Path, RawQuery: h.Location.RawQuery}
	out.Host = h.Location.Host
	out.RequestURI = ""
	backend, err := h.dial(ctx)
	if err != nil {
		h.Fail(w, req, fmt.Errorf("error dialing backend: %w", err))
		return
	}
	defer backend.Close()
	if err := out.Write(backend); err != nil {
		h.Fail(w, req, fmt.Errorf("error sending request: %w", err))
		return
	}
	br := bufio.NewReader(backend)
	resp, err := http.ReadResponse(br, out)
	if err != nil {
		h.Fail(w, req, fmt.Errorf("error reading response: %w", err))
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		h.Fail(w, req, errors.New("unable to upgrade: the connection cannot be hijacked"))
		return
	}
	client, cbuf, err := hj.Hijack()
	if err != nil {
		h.Fail(w, req, fmt.Errorf("unable to upgrade: %w", err))
		return
	}
	defer client.Close()
	if err := resp.Write(client); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(backend, io.MultiReader(bufferedReader(cbuf.Reader), client))
		if c, ok := backend.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, br)
		if c, ok := client.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// bufferedReader is what a hijacked connection's reader already holds.
func bufferedReader(r *bufio.Reader) io.Reader {
	n := r.Buffered()
	if n == 0 {
		return strings.NewReader("")
	}
	b, _ := r.Peek(n)
	return strings.NewReader(string(b))
}

func (h *ProxyHandler) dial(ctx context.Context) (net.Conn, error) {
	host := h.Location.Host
	if h.Location.Port() == "" {
		port := "80"
		if h.Location.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(h.Location.Hostname(), port)
	}
	d := &net.Dialer{Timeout: dialTimeout}
	if h.Location.Scheme != "https" {
		return d.DialContext(ctx, "tcp", host)
	}
	cfg := h.Transport.TLSClientConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = h.Location.Hostname()
	}
	// The upgraded connection speaks HTTP/1.1.
	cfg.NextProtos = []string{"http/1.1"}
	td := &tls.Dialer{NetDialer: d, Config: cfg}
	return td.DialContext(ctx, "tcp", host)
}

// ProxyPath is the path below {resource}/{name}/proxy in the request (pods
// or nodes; "/" when none), keeping a trailing slash.
func ProxyPath(req *http.Request) string {
	info, ok := request.RequestInfoFrom(req.Context())
	if !ok || len(info.Parts) <= 3 {
		return "/"
	}
	p := "/" + strings.Join(info.Parts[3:], "/")
	if strings.HasSuffix(req.URL.Path, "/") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// SplitSchemeNamePort splits the name of a proxied pod or node,
// "[scheme:]name[:port]" (scheme http or https).
func SplitSchemeNamePort(id string) (scheme, name, port string, ok bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", "", false
	}
	if name == "" || scheme != "" && scheme != "http" && scheme != "https" {
		return "", "", "", false
	}
	return scheme, name, port, true
}
