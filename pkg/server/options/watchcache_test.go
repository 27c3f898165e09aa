package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWatchCacheOptions(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	deploys := schema.GroupResource{Group: "apps", Resource: "deployments"}
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	// kube-apiserver v1.37.2's DefaultWatchCacheSizes
	// (pkg/kubeapiserver/default_storage_factory_builder.go): both events
	// resources 0, unless a size of their own is given.
	events := schema.GroupResource{Resource: "events"}
	newEvents := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	tests := []struct {
		args    []string
		wantErr string
		want    map[schema.GroupResource]int
	}{
		{nil, "", map[schema.GroupResource]int{pods: 100, deploys: 100, events: 0, newEvents: 0}},
		{[]string{"--default-watch-cache-size=7"}, "", map[schema.GroupResource]int{pods: 7, events: 0, newEvents: 0}},
		{[]string{"--watch-cache-sizes=events#50"}, "", map[schema.GroupResource]int{pods: 100, events: 50, newEvents: 0}},
		{[]string{"--watch-cache=false", "--watch-cache-sizes=events#50"}, "", map[schema.GroupResource]int{events: 0}},
		{[]string{"--watch-cache-sizes=pods#0,deployments.apps#500"}, "", map[schema.GroupResource]int{pods: 0, deploys: 500, leases: 100}},
		{[]string{"--default-watch-cache-size=0", "--watch-cache-sizes=pods#10"}, "", map[schema.GroupResource]int{pods: 10, deploys: 0}},
		{[]string{"--watch-cache=false", "--watch-cache-sizes=pods#10"}, "", map[schema.GroupResource]int{pods: 0, deploys: 0}},
		{[]string{"--watch-cache-sizes=pods"}, "invalid value of watch cache size: pods", nil},
		{[]string{"--watch-cache-sizes=pods#x"}, "invalid size of watch cache size: pods#x", nil},
		{[]string{"--watch-cache-sizes=pods#-1"}, "watch cache size cannot be negative: pods#-1", nil},
		{[]string{"--default-watch-cache-size=-1"}, "--default-watch-cache-size cannot be negative", nil},
		{[]string{"--watch-cache-max-events=0"}, "--watch-cache-max-events must be positive", nil},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := NewWatchCacheOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatalf("parse: %v", err)
			}
			errs := o.Validate()
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) {
					t.Fatalf("errors %v, want one containing %q", errs, tc.wantErr)
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			for r, want := range tc.want {
				if got := o.Size(r); got != want {
					t.Errorf("size of %s: got %d, want %d", r, got, want)
				}
			}
		})
	}
}

// TestKubeCaches: which resources kube-apiserver serves from its watch
// cache with the flags given: all but events by default (its
// DefaultWatchCacheSizes), a size of its own deciding, nothing with
// --watch-cache=false.
func TestKubeCaches(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	events := schema.GroupResource{Resource: "events"}
	newEvents := schema.GroupResource{Group: "events.k8s.io", Resource: "events"}
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	tests := []struct {
		name   string
		adjust func(*WatchCacheOptions)
		want   map[schema.GroupResource]bool
	}{
		{"defaults", func(*WatchCacheOptions) {}, map[schema.GroupResource]bool{pods: true, widgets: true, events: false, newEvents: false}},
		{"disabled", func(o *WatchCacheOptions) { o.Enabled = false }, map[schema.GroupResource]bool{pods: false, events: false}},
		{"events sized", func(o *WatchCacheOptions) { o.Sizes = []string{"events#100", "pods#0"} }, map[schema.GroupResource]bool{pods: false, events: true, newEvents: false, widgets: true}},
		{"default size 0", func(o *WatchCacheOptions) { o.DefaultSize = 0; o.Sizes = []string{"widgets.example.com#5"} }, map[schema.GroupResource]bool{pods: false, widgets: true, events: false}},
	}
	for _, tt := range tests {
		o := NewWatchCacheOptions()
		tt.adjust(o)
		for gr, want := range tt.want {
			if got := o.KubeCaches(gr); got != want {
				t.Errorf("%s: KubeCaches(%s) = %v, want %v", tt.name, gr, got, want)
			}
		}
	}
}
