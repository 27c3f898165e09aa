package cel

import (
	"fmt"
	"math"
	"net/netip"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The CEL types of IP addresses and CIDRs, named as upstream.
var (
	ipType   = cel.ObjectType("net.IP")
	cidrType = cel.ObjectType("net.CIDR")
)

// ipValue is an IP address as a CEL value.
type ipValue struct {
	addr netip.Addr
}

// ConvertToNative implements ref.Val.
func (v ipValue) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.addr).AssignableTo(t) {
		return v.addr, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.addr.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'IP' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v ipValue) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case ipType:
		return v
	case types.TypeType:
		return ipType
	case types.StringType:
		return types.String(v.addr.String())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", ipType, t)
}

// Equal implements ref.Val.
func (v ipValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(ipValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.addr == o.addr)
}

// Type implements ref.Val.
func (ipValue) Type() ref.Type { return ipType }

// Value implements ref.Val.
func (v ipValue) Value() any { return v.addr }

// Size is the address's size in bytes, for the run-time cost.
func (v ipValue) Size() ref.Val { return types.Int(int(math.Ceil(float64(v.addr.BitLen()) / 8))) }

// cidrValue is a network prefix as a CEL value.
type cidrValue struct {
	prefix netip.Prefix
}

// ConvertToNative implements ref.Val.
func (v cidrValue) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.prefix).AssignableTo(t) {
		return v.prefix, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.prefix.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'CIDR' to '%v'", t)
}

// ConvertToType implements ref.Val.
func (v cidrValue) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case cidrType:
		return v
	case types.TypeType:
		return cidrType
	case types.StringType:
		return types.String(v.prefix.String())
	}
	return types.NewErr("type conversion error from '%s' to '%s'", cidrType, t)
}

// Equal implements ref.Val.
func (v cidrValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(cidrValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.prefix == o.prefix)
}

// Type implements ref.Val.
func (cidrValue) Type() ref.Type { return cidrType }

// Value implements ref.Val.
func (v cidrValue) Value() any { return v.prefix }

// Size is the prefix's size in bytes, for the run-time cost.
func (v cidrValue) Size() ref.Val { return types.Int(int(math.Ceil(float64(v.prefix.Bits()) / 8))) }

// netLibrary is upstream's ip and cidr libraries.
func netLibrary() cel.EnvOption {
	return cel.Lib(netLib{})
}

type netLib struct{}

func (netLib) LibraryName() string { return "kubernetes.net" }

func (netLib) ProgramOptions() []cel.ProgramOption { return nil }

func (netLib) CompileOptions() []cel.EnvOption {
	ip, cidr, str, b := ipType, cidrType, cel.StringType, cel.BoolType
	ipPred := func(name, id string, f func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{ip}, b, cel.UnaryBinding(func(v ref.Val) ref.Val {
			a, ok := v.(ipValue)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.Bool(f(a.addr))
		})))
	}
	return []cel.EnvOption{
		cel.Types(ip, cidr),
		cel.Variable(ip.TypeName(), types.NewTypeTypeWithParam(ip)),
		cel.Variable(cidr.TypeName(), types.NewTypeTypeWithParam(cidr)),
		cel.Function("ip",
			cel.Overload("string_to_ip", []*cel.Type{str}, ip, cel.UnaryBinding(stringToIP)),
			cel.MemberOverload("cidr_ip", []*cel.Type{cidr}, ip, cel.UnaryBinding(cidrUnary(func(p netip.Prefix) ref.Val { return ipValue{addr: p.Addr()} })))),
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{str}, b, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := parseIP(string(s))
			return types.Bool(err == nil)
		}))),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{str}, b, cel.UnaryBinding(ipIsCanonical))),
		cel.Function("family", cel.MemberOverload("ip_family", []*cel.Type{ip}, cel.IntType, cel.UnaryBinding(ipFamily))),
		ipPred("isUnspecified", "ip_is_unspecified", netip.Addr.IsUnspecified),
		ipPred("isLoopback", "ip_is_loopback", netip.Addr.IsLoopback),
		ipPred("isLinkLocalMulticast", "ip_is_link_local_multicast", netip.Addr.IsLinkLocalMulticast),
		ipPred("isLinkLocalUnicast", "ip_is_link_local_unicast", netip.Addr.IsLinkLocalUnicast),
		ipPred("isGlobalUnicast", "ip_is_global_unicast", netip.Addr.IsGlobalUnicast),
		cel.Function("string",
			cel.Overload("ip_to_string", []*cel.Type{ip}, str, cel.UnaryBinding(func(v ref.Val) ref.Val { return v.ConvertToType(types.StringType) })),
			cel.Overload("cidr_to_string", []*cel.Type{cidr}, str, cel.UnaryBinding(func(v ref.Val) ref.Val { return v.ConvertToType(types.StringType) }))),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{str}, cidr, cel.UnaryBinding(stringToCIDR))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{str}, b, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := parseCIDR(string(s))
			return types.Bool(err == nil)
		}))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidr, str}, b, cel.BinaryBinding(func(c, s ref.Val) ref.Val { return cidrContainsIP(c, stringToIP(s)) })),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidr, ip}, b, cel.BinaryBinding(cidrContainsIP))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidr, str}, b, cel.BinaryBinding(func(c, s ref.Val) ref.Val { return cidrContainsCIDR(c, stringToCIDR(s)) })),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidr, cidr}, b, cel.BinaryBinding(cidrContainsCIDR))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidr}, cel.IntType,
			cel.UnaryBinding(cidrUnary(func(p netip.Prefix) ref.Val { return types.Int(p.Bits()) })))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidr}, cidr,
			cel.UnaryBinding(cidrUnary(func(p netip.Prefix) ref.Val { return cidrValue{prefix: p.Masked()} })))),
	}
}

// parseIP parses an IP address as upstream: no zone, no IPv4-mapped
// IPv6 address, no leading zeros (netip).
func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %w", s, err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", s)
	}
	if a.Is4In6() {
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return a, nil
}

// parseCIDR parses a CIDR as upstream: no IPv4-mapped IPv6 address;
// bits after the prefix are allowed (see masked).
func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %w", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return p, nil
}

func stringToIP(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	a, err := parseIP(string(s))
	if err != nil {
		return types.NewErr("%v", err)
	}
	return ipValue{addr: a}
}

func stringToCIDR(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	p, err := parseCIDR(string(s))
	if err != nil {
		return types.NewErr("network address parse error during conversion from string: %v", err)
	}
	return cidrValue{prefix: p}
}

func ipIsCanonical(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	a, err := parseIP(string(s))
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.Bool(a.String() == string(s))
}

func ipFamily(v ref.Val) ref.Val {
	a, ok := v.(ipValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	switch {
	case a.addr.Is4():
		return types.Int(4)
	case a.addr.Is6():
		return types.Int(6)
	}
	return types.NewErr("IP address %q is not an IPv4 or IPv6 address", a.addr.String())
}

func cidrUnary(f func(netip.Prefix) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		c, ok := v.(cidrValue)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return f(c.prefix)
	}
}

// cidrContainsIP and cidrContainsCIDR take the result of a
// conversion as their second argument: an error is returned as is.
func cidrContainsIP(c, other ref.Val) ref.Val {
	p, ok := c.(cidrValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(c)
	}
	a, ok := other.(ipValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(p.prefix.Contains(a.addr))
}

func cidrContainsCIDR(c, other ref.Val) ref.Val {
	p, ok := c.(cidrValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(c)
	}
	o, ok := other.(cidrValue)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	sameNet := p.prefix.Masked() == netip.PrefixFrom(o.prefix.Addr(), p.prefix.Bits()).Masked()
	return types.Bool(sameNet && p.prefix.Bits() <= o.prefix.Bits())
}
