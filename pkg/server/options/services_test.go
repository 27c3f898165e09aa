package options

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestPortRangeFlag(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     PortRange
		wantErr  bool
		wantText string
	}{
		{in: "30000-32767", want: PortRange{Base: 30000, Size: 2768}, wantText: "30000-32767"},
		{in: "30000+2767", want: PortRange{Base: 30000, Size: 2768}, wantText: "30000-32767"},
		{in: "8080", want: PortRange{Base: 8080, Size: 1}, wantText: "8080-8080"},
		{in: "2-1", wantErr: true},
		{in: "1-70000", wantErr: true},
		{in: "a-b", wantErr: true},
		{in: "-", wantErr: true},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o := NewServiceOptions()
		o.AddFlags(fs)
		err := fs.Parse([]string{"--service-node-port-range=" + tc.in})
		if tc.wantErr {
			if err == nil {
				t.Errorf("%q: got %v, want an error", tc.in, o.NodePortRange)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if o.NodePortRange != tc.want || o.NodePortRange.String() != tc.wantText {
			t.Errorf("%q: got %+v (%s), want %+v (%s)", tc.in, o.NodePortRange, o.NodePortRange.String(), tc.want, tc.wantText)
		}
	}
}

func TestServiceOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		cidr, advertise string
		wantErrs        int
	}{
		{cidr: "10.0.0.0/24", wantErrs: 0},
		{cidr: "10.96.0.0/12", advertise: "192.168.1.10", wantErrs: 0},
		{cidr: "fd00::/108", wantErrs: 0},
		{cidr: "fd00::/64", wantErrs: 1},
		{cidr: "10.0.0.0/31", wantErrs: 1},
		{cidr: "nonsense", wantErrs: 1},
		{cidr: "10.0.0.0/24", advertise: "host", wantErrs: 1},
	} {
		o := NewServiceOptions()
		o.ClusterIPRange, o.AdvertiseAddress = tc.cidr, tc.advertise
		if got := o.Validate(); len(got) != tc.wantErrs {
			t.Errorf("%s %q: got errors %v, want %d", tc.cidr, tc.advertise, got, tc.wantErrs)
		}
	}
}
