package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEtcdCounters: the counters -per-op reads from etcd's /metrics, summed
// over the label sets of each (every grpc_code of Range and Txn), other
// methods and metrics ignored.
func TestEtcdCounters(t *testing.T) {
	const metrics = `# HELP grpc_server_handled_total Total number of RPCs completed on the server.
# TYPE grpc_server_handled_total counter
grpc_server_handled_total{grpc_code="OK",grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 120
grpc_server_handled_total{grpc_code="NotFound",grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 3
grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",grpc_service="etcdserverpb.KV",grpc_type="unary"} 7e+03
grpc_server_handled_total{grpc_code="OK",grpc_method="Put",grpc_service="etcdserverpb.KV",grpc_type="unary"} 99
grpc_server_msg_received_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 5
grpc_server_msg_sent_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",grpc_type="bidi_stream"} 4000
grpc_server_msg_sent_total{grpc_method="Range",grpc_service="etcdserverpb.KV",grpc_type="unary"} 123
etcd_network_client_grpc_received_bytes_total 1.5e+06
etcd_network_client_grpc_sent_bytes_total 2500
etcd_network_client_grpc_sent_bytes_total_other 1
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(metrics))
	}))
	defer srv.Close()
	got, err := etcdCounters(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"range": 123, "txn": 7000, "watchIn": 5, "watchOut": 4000, "rx": 1.5e6, "tx": 2500}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
}

// TestStatCPU: utime+stime (fields 14 and 15 of /proc/PID/stat, in clock
// ticks) of a stat line whose command name holds spaces and parentheses.
func TestStatCPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	line := "1234 (kapi (etcd) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 12 0 100 0 0\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := statCPU(path), 2870*time.Millisecond; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := statCPU(filepath.Join(t.TempDir(), "gone")); got != 0 {
		t.Errorf("missing file: got %v, want 0", got)
	}
}
