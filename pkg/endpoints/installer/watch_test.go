package installer

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, 5*time.Millisecond, what, cond)
}

type rawEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func openWatch(t *testing.T, ts *testServer, h2 bool, path, accept string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.srv.URL+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := ts.httpClient(h2).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("watch %s: got %d %s", path, resp.StatusCode, b)
	}
	wantProto := "HTTP/1.1"
	if h2 {
		wantProto = "HTTP/2.0"
	}
	if resp.Proto != wantProto {
		t.Fatalf("got protocol %s, want %s", resp.Proto, wantProto)
	}
	return resp, func() { cancel(); resp.Body.Close() }
}

func createCM(t *testing.T, ts *testServer, name string) {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`
	if r := ts.do(t, "POST", "/api/v1/namespaces/ns1/configmaps", []byte(body)); r.code != 201 {
		t.Fatalf("create %s: %d %s", name, r.code, r.body)
	}
}

func TestWatchJSONStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		h2   bool
		path string
	}{
		{"h1 watch=true", false, "/api/v1/namespaces/ns1/configmaps?watch=true"},
		{"h2 watch=true", true, "/api/v1/namespaces/ns1/configmaps?watch=true"},
		{"h1 legacy path", false, "/api/v1/watch/namespaces/ns1/configmaps"},
		{"h2 named", true, "/api/v1/watch/namespaces/ns1/configmaps/b"},
		{"h2 all namespaces", true, "/api/v1/watch/configmaps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t)
			resp, stop := openWatch(t, ts, tc.h2, tc.path, "")
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			createCM(t, ts, "a")
			createCM(t, ts, "b")
			dec := json.NewDecoder(resp.Body)
			var ev rawEvent
			if err := dec.Decode(&ev); err != nil {
				t.Fatal(err)
			}
			var cm corev1.ConfigMap
			if err := json.Unmarshal(ev.Object, &cm); err != nil {
				t.Fatal(err)
			}
			wantName := "a"
			if tc.name == "h2 named" {
				wantName = "b"
			}
			if ev.Type != "ADDED" || cm.Name != wantName || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
				t.Errorf("got %s %s/%s %s, want ADDED v1/ConfigMap %s", ev.Type, cm.APIVersion, cm.Kind, cm.Name, wantName)
			}
			stop()
			// The server's handler returns and stops the storage watch.
			waitFor(t, "the storage watch to stop", func() bool { return ts.cms.activeWatchers() == 0 })
		})
	}
}

func TestWatchProtobufFrames(t *testing.T) {
	ts := startServer(t)
	resp, stop := openWatch(t, ts, true, "/api/v1/namespaces/ns1/configmaps?watch=1", "application/vnd.kubernetes.protobuf")
	defer stop()
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Errorf("Content-Type: got %q", ct)
	}
	createCM(t, ts, "a")
	var n uint32
	if err := binary.Read(resp.Body, binary.BigEndian, &n); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(resp.Body, frame); err != nil {
		t.Fatal(err)
	}
	// Frames are raw protobuf WatchEvents (no envelope); objects inside
	// are enveloped.
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	ev := &metav1.WatchEvent{}
	if _, _, err := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme).Decode(frame, nil, ev); err != nil {
		t.Fatalf("decode frame: %v", err)
	}
	obj, _, err := pb.Decode(ev.Object.Raw, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cm, ok := obj.(*corev1.ConfigMap); ev.Type != "ADDED" || !ok || cm.Name != "a" {
		t.Errorf("got %s %#v, want ADDED ConfigMap a", ev.Type, obj)
	}
}

func TestWatchTable(t *testing.T) {
	ts := startServer(t)
	resp, stop := openWatch(t, ts, false, "/api/v1/namespaces/ns1/configmaps?watch=true", "application/json;as=Table;v=v1;g=meta.k8s.io")
	defer stop()
	createCM(t, ts, "a")
	createCM(t, ts, "b")
	dec := json.NewDecoder(resp.Body)
	for i, wantHeaders := range []bool{true, false} {
		var ev rawEvent
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		var table metav1.Table
		if err := json.Unmarshal(ev.Object, &table); err != nil {
			t.Fatal(err)
		}
		if table.Kind != "Table" || len(table.Rows) != 1 || (len(table.ColumnDefinitions) > 0) != wantHeaders {
			t.Errorf("event %d: got %s with %d rows, %d columns; want a Table with 1 row, headers %v", i, table.Kind, len(table.Rows), len(table.ColumnDefinitions), wantHeaders)
		}
	}
}

func TestWatchInitialEventsAndBookmark(t *testing.T) {
	ts := startServer(t)
	createCM(t, ts, "a")
	resp, stop := openWatch(t, ts, true, "/api/v1/namespaces/ns1/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", "")
	defer stop()
	dec := json.NewDecoder(resp.Body)
	for _, want := range []string{"ADDED", "BOOKMARK"} {
		var ev rawEvent
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != want {
			t.Errorf("got %s, want %s", ev.Type, want)
		}
	}
}

func TestWatchTimeoutEndsStream(t *testing.T) {
	ts := startServer(t)
	resp, stop := openWatch(t, ts, false, "/api/v1/namespaces/ns1/configmaps?watch=true&timeoutSeconds=1", "")
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream ended with %v, want a clean end", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("watch with timeoutSeconds=1 still open after 20s")
	}
}

func TestWatchNotAcceptable(t *testing.T) {
	ts := startServer(t)
	r := ts.do(t, "GET", "/api/v1/namespaces/ns1/configmaps?watch=true", nil, "Accept", "application/yaml")
	// The error itself is written in the YAML asked for.
	var s metav1.Status
	if err := yaml.Unmarshal(r.body, &s); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	want := "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	if r.code != 406 || s.Message != want || s.Reason != metav1.StatusReasonNotAcceptable {
		t.Errorf("got %d %q, want 406 %q", r.code, s.Message, want)
	}
}

// TestWatchTerminated ends a watch the way the server does at shutdown
// (filters.WatchDrainer): the stream ends cleanly, with no error event.
func TestWatchTerminated(t *testing.T) {
	cms := newCMStore()
	g := &APIGroupVersion{
		GroupVersion: schema.GroupVersion{Version: "v1"},
		Storage:      map[string]kapirest.Storage{"configmaps": cms},
		Logger:       slog.New(slog.DiscardHandler),
	}
	h, _, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	d := filters.NewWatchDrainer()
	h = filters.WithWatchTermination(h, d, slog.New(slog.DiscardHandler))
	h = filters.WithRequestInfo(h, request.NewResolver(), slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/v1/namespaces/ns1/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitFor(t, "the watch to start", func() bool { return cms.activeWatchers() == 1 })
	ended := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		ended <- string(b)
	}()
	before, after := d.Wait(10 * time.Second)
	if before != 1 || after != 0 {
		t.Errorf("drain: got before %d after %d, want 1 and 0", before, after)
	}
	select {
	case body := <-ended:
		if body != "" {
			t.Errorf("got body %q after termination, want none", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream still open after the drain")
	}
}
