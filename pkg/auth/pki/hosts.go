package pki

import (
	"log/slog"
	"net"
	"os"
	"strings"
)

// defaultHosts are covered by every generated serving certificate, besides
// the machine's host name and Config.Hosts (where the app adds the bind
// address and the first service IP, the "kubernetes" Service's ClusterIP).
// The kubernetes* names are those in-cluster clients dial: kube-apiserver's
// self-signed certificate carries the first three (alternateDNS in
// cmd/kube-apiserver/app/options), and kubeadm adds the fully qualified
// kubernetes.default.svc.<dns-domain> with the default domain cluster.local.
var defaultHosts = []string{
	"localhost", "127.0.0.1", "::1",
	"kubernetes", "kubernetes.default", "kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// servingHosts returns the de-duplicated, normalized SANs of the serving
// certificate: the defaults, os.Hostname() and extra.
func servingHosts(extra []string, log *slog.Logger) []string {
	candidates := append([]string{}, defaultHosts[:3]...)
	if name, err := os.Hostname(); err != nil {
		log.Warn("serving certificate will not cover the host name", "err", err)
	} else {
		candidates = append(candidates, name)
	}
	candidates = append(candidates, defaultHosts[3:]...)
	candidates = append(candidates, extra...)

	seen := make(map[string]bool, len(candidates))
	var hosts []string
	for _, c := range candidates {
		h, ok := normalizeHost(c)
		if !ok {
			if strings.TrimSpace(c) != "" {
				log.Warn("serving certificate will not cover host: not an IP or DNS name", "host", c)
			}
			continue
		}
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		hosts = append(hosts, h)
	}
	return hosts
}

// normalizeHost returns the canonical IP or lower-case DNS name of h, ""
// for hosts to skip silently (empty, unspecified IP), and false for hosts
// that cannot be a SAN.
func normalizeHost(h string) (string, bool) {
	h = strings.TrimSpace(h)
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", true
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsUnspecified() {
			return "", true
		}
		return ip.String(), true
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_', r == '*':
		default:
			return "", false
		}
	}
	return h, true
}

// splitHosts separates normalized hosts into IP and DNS SANs.
func splitHosts(hosts []string) ([]net.IP, []string) {
	var ips []net.IP
	var names []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	return ips, names
}
