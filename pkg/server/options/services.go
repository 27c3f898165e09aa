package options

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// ServiceOptions configure Service IP and port allocation and what the
// `kubernetes` Service in `default` points at.
type ServiceOptions struct {
	// ClusterIPRange is --service-cluster-ip-range (one IPv4 or IPv6 CIDR).
	ClusterIPRange string
	// NodePortRange is --service-node-port-range.
	NodePortRange PortRange
	// AdvertiseAddress is --advertise-address: the IP the `kubernetes`
	// endpoints carry. Empty means --bind-address (or 127.0.0.1 if that is
	// unspecified).
	AdvertiseAddress string
}

// NewServiceOptions returns kube-apiserver's defaults.
func NewServiceOptions() *ServiceOptions {
	return &ServiceOptions{ClusterIPRange: "10.0.0.0/24", NodePortRange: PortRange{Base: 30000, Size: 2768}}
}

// AddFlags adds the service flags to fs.
func (o *ServiceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterIPRange, "service-cluster-ip-range", o.ClusterIPRange, "A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods.")
	fs.Var(&o.NodePortRange, "service-node-port-range", "A port range to reserve for services with NodePort visibility. This must not overlap with the ephemeral port range on nodes. Example: '30000-32767'. Inclusive at both ends of the range.")
	fs.StringVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "The IP address on which to advertise the apiserver to members of the cluster (the endpoints of the kubernetes Service). If blank, the --bind-address will be used.")
}

// ClusterIPPrefix returns the parsed --service-cluster-ip-range.
func (o *ServiceOptions) ClusterIPPrefix() (netip.Prefix, error) {
	p, err := netip.ParsePrefix(o.ClusterIPRange)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("--service-cluster-ip-range %q is not a valid CIDR: %w", o.ClusterIPRange, err)
	}
	return p.Masked(), nil
}

// Validate checks the flags.
func (o *ServiceOptions) Validate() []error {
	var errs []error
	if p, err := o.ClusterIPPrefix(); err != nil {
		errs = append(errs, err)
	} else {
		hostBits := p.Addr().BitLen() - p.Bits()
		if hostBits < 2 {
			errs = append(errs, fmt.Errorf("--service-cluster-ip-range %s is too small: it must leave room for the kubernetes Service and at least one more", o.ClusterIPRange))
		}
		if p.Addr().Is6() && hostBits > 20 {
			// kube-apiserver's limit for IPv6 service ranges (a /108).
			errs = append(errs, fmt.Errorf("--service-cluster-ip-range %s is too large; for 128-bit addresses, the mask must be >= 108", o.ClusterIPRange))
		}
	}
	if o.NodePortRange.Size <= 0 {
		errs = append(errs, fmt.Errorf("--service-node-port-range %s must not be empty", o.NodePortRange.String()))
	}
	if o.AdvertiseAddress != "" && net.ParseIP(o.AdvertiseAddress) == nil {
		errs = append(errs, fmt.Errorf("--advertise-address %q is not a valid IP address", o.AdvertiseAddress))
	}
	return errs
}

// PortRange is a range of ports, Base to Base+Size-1, written as
// "30000-32767" or "30000+2767" (as kube-apiserver's flag).
type PortRange struct {
	Base int
	Size int
}

// String implements pflag.Value.
func (r *PortRange) String() string {
	if r.Size == 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.Base, r.Base+r.Size-1)
}

// Type implements pflag.Value.
func (*PortRange) Type() string { return "portRange" }

// Set implements pflag.Value.
func (r *PortRange) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		*r = PortRange{}
		return nil
	}
	low, high, plus := v, "", false
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		low, high, plus = v[:i], v[i+1:], v[i] == '+'
	} else {
		high = v
	}
	lo, err := strconv.Atoi(low)
	if err != nil {
		return fmt.Errorf("unable to parse port range: %s: %w", v, err)
	}
	hi, err := strconv.Atoi(high)
	if err != nil {
		return fmt.Errorf("unable to parse port range: %s: %w", v, err)
	}
	if plus {
		hi += lo
	}
	if lo < 0 || hi > 65535 || hi < lo {
		return fmt.Errorf("range %s is not valid: ports must be within 0-65535 and low <= high", v)
	}
	*r = PortRange{Base: lo, Size: hi - lo + 1}
	return nil
}
