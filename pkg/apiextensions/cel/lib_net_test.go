package cel

import "testing"

func TestCELIPLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "isIP('127.0.0.1') && isIP('::1') && !isIP('127.0.0.256') && !isIP(':::1') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0') && !isIP('01.2.3.4')"},
		{rule: "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6"},
		{rule: "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd') && !ip.isCanonical('2001:DB8::ABCD') && !ip.isCanonical('2001:db8::0:0:0:abcd')"},
		{rule: "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && !ip('127.0.0.1').isUnspecified()"},
		{rule: "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('192.168.0.1').isLoopback()"},
		{rule: "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()"},
		{rule: "ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast() && !ip('fd80::1').isLinkLocalUnicast()"},
		{rule: "ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()"},
		{rule: "string(ip('2001:DB8::0:0:ABCD')) == '2001:db8::abcd' && ip('1.2.3.4') == ip('1.2.3.4') && !(ip('1.2.3.4') == ip('1.2.3.5'))"},
		{rule: "type(ip('1.2.3.4')) == net.IP && type(cidr('1.2.3.0/24')) == net.CIDR"},
		{rule: "ip(self.name).family() == 4", spec: map[string]any{"name": "::1"}, want: "false"},
		{rule: "ip(self.name).family() == 4", spec: map[string]any{"name": "1.2.3"}, want: `IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short`},
		{rule: "ip('::ffff:1.2.3.4').family() == 6", want: `IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed`},
		{rule: "ip('fe80::1%eth0').family() == 6", want: `IP address "fe80::1%eth0" with zone value is not allowed`},
		{rule: "ip.isCanonical('x')", want: `IP Address "x" parse error during conversion from string: ParseAddr("x"): unable to parse IP`},
	})
}

func TestCELCIDRLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "isCIDR('192.168.0.0/16') && isCIDR('::1/128') && !isCIDR('192.168.0.0/33') && !isCIDR('192.168.0.0') && !isCIDR('::ffff:1.2.3.4/120')"},
		{rule: "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')) && cidr('192.168.0.0/24').containsIP('192.168.0.255') && !cidr('192.168.0.0/24').containsIP('192.168.1.1')"},
		{rule: "cidr('2001:db8::/32').containsIP('2001:db8::1') && !cidr('2001:db8::/32').containsIP('1.2.3.4')"},
		{rule: "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25')) && cidr('192.168.0.0/24').containsCIDR('192.168.0.128/25') && cidr('192.168.0.0/24').containsCIDR('192.168.0.0/24')"},
		{rule: "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23') && !cidr('192.168.0.0/24').containsCIDR('192.168.1.0/24') && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')"},
		{rule: "cidr('192.168.0.1/24').ip() == ip('192.168.0.1') && cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24') && cidr('192.168.0.1/24').prefixLength() == 24"},
		{rule: "string(cidr('192.168.0.1/24')) == '192.168.0.1/24' && string(cidr('2001:DB8::/32')) == '2001:db8::/32' && cidr('::1/128').ip().family() == 6"},
		{rule: "cidr(self.name).containsIP('10.0.0.1')", spec: map[string]any{"name": "10.0.0.0/8"}},
		{rule: "cidr(self.name).containsIP('10.0.0.1')", spec: map[string]any{"name": "11.0.0.0/8"}, want: "false"},
		{rule: "cidr('1.2.3.4').prefixLength() > 0",
			want: `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("1.2.3.4"): no '/'`},
		{rule: "cidr('10.0.0.0/8').containsIP('x')", want: `IP Address "x" parse error during conversion from string: ParseAddr("x"): unable to parse IP`},
	})
}
