package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	base := options{starts: 1, objects: 1, conc: 1, watchEvents: 1}
	for _, tc := range []struct {
		name    string
		mutate  func(*options)
		wantErr string
	}{
		{"defaults", func(*options) {}, ""},
		{"loopback etcd", func(o *options) { o.etcd = "http://127.0.0.1:2379" }, ""},
		{"localhost etcd", func(o *options) { o.etcd = "http://localhost:2379" }, ""},
		{"ipv6 loopback etcd", func(o *options) { o.etcd = "http://[::1]:2379" }, ""},
		{"remote etcd", func(o *options) { o.etcd = "http://10.1.2.3:2379" }, "only loopback"},
		{"named etcd", func(o *options) { o.etcd = "http://etcd.example.com:2379" }, "only loopback"},
		{"reference without etcd", func(o *options) { o.reference = "/bin/true" }, "needs -etcd"},
		{"no starts", func(o *options) { o.starts = 0 }, "must be positive"},
		{"known targets", func(o *options) { o.targets = []string{"memory", "reference"} }, ""},
		{"unknown target", func(o *options) { o.targets = []string{"memory", "upstream"} }, `unknown target "upstream"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.mutate(&o)
			err := o.validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// The ratio column says how many times better kapi is: higher rates are
// divided by the reference's, lower times and sizes divide it.
func TestTableRatios(t *testing.T) {
	o := options{objects: 10, writes: 5, conc: 32, watchers: []int{2}}
	kapi := &result{name: "kapi", start: 100 * time.Millisecond, create: 300, list: 8,
		watch: []watchResult{{watchers: 2, p99: 10 * time.Millisecond, delivered: 4, expected: 4}}}
	ref := &result{name: "reference", start: 300 * time.Millisecond, create: 100, list: 2,
		watch: []watchResult{{watchers: 2, p99: 20 * time.Millisecond, delivered: 4, expected: 4}}}
	var out bytes.Buffer
	printTable(&out, o, []*result{kapi, ref}, true)
	for _, want := range []string{
		"start → /readyz 200 (median)", "100 ms", "300 ms", "3.00×", // start: 300/100
		"create c=32 (custom resources)", "300/s", "100/s", // 3.00× too
		"consistent list of 10", "8.0/s", "2.0/s", "4.00×",
		"watch, 2 watchers, p99 from send", "2.00×",
		"Ratios:",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	printTable(&out, o, []*result{kapi}, false)
	if strings.Contains(out.String(), "×") || strings.Contains(out.String(), "vs ref") {
		t.Errorf("a table without a reference has ratios:\n%s", out.String())
	}
}
