package identitylease

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
)

// What upstream names and how long it holds (k8s.io/kubernetes
// pkg/controlplane/apiserver/server.go, v1.37.2: IdentityLeaseGCPeriod,
// IdentityLeaseDurationSeconds, IdentityLeaseRenewIntervalPeriod,
// IdentityLeaseComponentLabelKey, KubeAPIServer).
const (
	// ComponentLabelKey marks a Lease as an API server's identity Lease
	// and names the component holding it.
	ComponentLabelKey = "apiserver.kubernetes.io/identity"
	// KubeAPIServer is the component kapi stands for.
	KubeAPIServer = "kube-apiserver"

	// DefaultDurationSeconds is how long an identity Lease is valid
	// without being renewed.
	DefaultDurationSeconds = 3600
	// DefaultRenewInterval is how often a server renews its Lease.
	DefaultRenewInterval = 10 * time.Second
	// DefaultGCPeriod is how often expired identity Leases are collected.
	DefaultGCPeriod = 3600 * time.Second
)

// ID is the API server identity of a server on the host hostname: the
// name of its Lease, "apiserver-" and the lower-case unpadded base32 of
// the first 16 bytes of the SHA-256 of the host name and "kube-apiserver",
// each preceded by its length as two big-endian bytes (k8s.io/apiserver
// pkg/server/config.go NewConfig, v0.37.2; the component is always
// "kube-apiserver" there). Servers on one host share it, as upstream's do.
func ID(hostname string) (string, error) {
	var data []byte
	for _, s := range []string{hostname, KubeAPIServer} {
		if len(s) > math.MaxUint16 {
			return "", fmt.Errorf("apiserver identity: host name of %d bytes", len(s))
		}
		data = binary.BigEndian.AppendUint16(data, uint16(len(s)))
		data = append(data, s...)
	}
	sum := sha256.Sum256(data)
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16])), nil
}

// PeerAddress is the kubernetes.io/peer-advertise-address of a server
// advertising address and serving on port (upstream's getPeerAddress
// without --peer-advertise-ip/port, which kapi does not have).
func PeerAddress(address net.IP, port int) string {
	return net.JoinHostPort(address.String(), strconv.Itoa(port))
}

// Heartbeat returns what upstream's labelAPIServerHeartbeatFunc asserts
// on every create and renewal of the Lease: the component and host name
// labels, and (UnknownVersionInteroperabilityProxy, beta and on by default
// since v1.36) the peer address annotation unless it is empty.
func Heartbeat(component, hostname, peerAddress string) func(*coordinationv1.Lease) error {
	return func(l *coordinationv1.Lease) error {
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Labels[ComponentLabelKey] = component
		l.Labels[corev1.LabelHostname] = hostname
		if peerAddress != "" {
			l.Annotations[corev1.AnnotationPeerAdvertiseAddress] = peerAddress
		}
		return nil
	}
}
