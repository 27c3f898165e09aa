package conversion

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

var loopback = []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}

func TestWebhookConvertObject(t *testing.T) {
	ca := newTestCA(t)
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTab "
	tests := []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request, review map[string]any)
		wantErr string // exact message; empty for success
		check   func(t *testing.T, got *unstructured.Unstructured)
	}{
		{
			name:   "converted",
			handle: convertAll(nil),
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if h, _, _ := unstructured.NestedString(got.Object, "spec", "hostname"); h != "example.com" {
					t.Errorf("got spec.hostname %q, want example.com", h)
				}
				if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 3 {
					t.Errorf("got spec.replicas %d, want 3", r)
				}
			},
		},
		{
			name: "label and annotation changes kept",
			handle: convertAll(func(_ int, o map[string]any) {
				md := o["metadata"].(map[string]any)
				md["labels"] = map[string]any{"app": "b", "new": "x"}
				md["annotations"] = map[string]any{"note": "converted"}
			}),
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if l := got.GetLabels(); len(l) != 2 || l["app"] != "b" || l["new"] != "x" {
					t.Errorf("got labels %v, want app=b new=x", l)
				}
				if a := got.GetAnnotations(); a["note"] != "converted" {
					t.Errorf("got annotations %v, want note=converted", a)
				}
			},
		},
		{
			name: "labels removed",
			handle: convertAll(func(_ int, o map[string]any) {
				delete(o["metadata"].(map[string]any), "labels")
			}),
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if l := got.GetLabels(); len(l) != 0 {
					t.Errorf("got labels %v, want none", l)
				}
			},
		},
		{
			name: "other metadata restored",
			handle: convertAll(func(_ int, o map[string]any) {
				md := o["metadata"].(map[string]any)
				md["resourceVersion"] = "99"
				md["finalizers"] = []any{"x/y"}
				md["generation"] = int64(5)
			}),
			check: func(t *testing.T, got *unstructured.Unstructured) {
				if got.GetResourceVersion() != "7" || len(got.GetFinalizers()) != 0 || got.GetGeneration() != 0 {
					t.Errorf("got resourceVersion %q finalizers %v generation %d, want 7, none, 0", got.GetResourceVersion(), got.GetFinalizers(), got.GetGeneration())
				}
			},
		},
		{
			name: "name changed",
			handle: convertAll(func(_ int, o map[string]any) {
				o["metadata"].(map[string]any)["name"] = "other"
			}),
			wantErr: prefix + "returned invalid object: must have the same name: a != other",
		},
		{
			name: "namespace changed",
			handle: convertAll(func(_ int, o map[string]any) {
				o["metadata"].(map[string]any)["namespace"] = "kube-system"
			}),
			wantErr: prefix + "returned invalid object: must have the same namespace: default != kube-system",
		},
		{
			name: "uid changed",
			handle: convertAll(func(_ int, o map[string]any) {
				o["metadata"].(map[string]any)["uid"] = "x"
			}),
			wantErr: prefix + "returned invalid object: must have the same UID: uid-a != x",
		},
		{
			name: "invalid label",
			handle: convertAll(func(_ int, o map[string]any) {
				o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "not valid!"}
			}),
			wantErr: prefix + `returned invalid metadata: metadata.labels: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		},
		{
			name: "label not a string",
			handle: convertAll(func(_ int, o map[string]any) {
				o["metadata"].(map[string]any)["labels"] = map[string]any{"app": int64(1)}
			}),
			wantErr: prefix + "returned invalid metadata: metadata.labels[app] must be a string, but is int64 in converted object",
		},
		{
			name: "metadata missing",
			handle: convertAll(func(_ int, o map[string]any) {
				delete(o, "metadata")
			}),
			wantErr: prefix + "returned invalid object: must have the same name: a != ",
		},
		{
			name: "wrong apiVersion",
			handle: convertAll(func(_ int, o map[string]any) {
				o["apiVersion"] = gvV1.String()
			}),
			wantErr: prefix + "returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v1)",
		},
		{
			name: "wrong kind",
			handle: convertAll(func(_ int, o map[string]any) {
				o["kind"] = "Other"
			}),
			wantErr: prefix + "returned invalid object at index 0: invalid kind (expected CronTab, received Other)",
		},
		{
			name: "failure with message",
			handle: func(w http.ResponseWriter, _ *http.Request, review map[string]any) {
				uid, _, _ := reviewRequest(review)
				respond(w, review, uid, metav1.Status{Status: metav1.StatusFailure, Message: "cannot convert host"}, nil)
			},
			wantErr: prefix + "failed: cannot convert host",
		},
		{
			name: "failure without message",
			handle: func(w http.ResponseWriter, _ *http.Request, review map[string]any) {
				uid, _, _ := reviewRequest(review)
				respond(w, review, uid, metav1.Status{Status: metav1.StatusFailure}, nil)
			},
			wantErr: prefix + "failed: response.result.status was 'Failure', not 'Success'",
		},
		{
			name: "wrong uid",
			handle: func(w http.ResponseWriter, r *http.Request, review map[string]any) {
				review["request"].(map[string]any)["uid"] = "not-the-uid"
				convertAll(nil)(w, r, review)
			},
			wantErr: `^` + regexp.QuoteMeta(prefix+`failed: expected response.uid="`) + `[0-9a-f-]{36}` + regexp.QuoteMeta(`", got "not-the-uid"`) + `$`,
		},
		{
			name: "too many objects",
			handle: func(w http.ResponseWriter, _ *http.Request, review map[string]any) {
				uid, _, objs := reviewRequest(review)
				for _, o := range objs {
					o["apiVersion"] = gvV2.String()
				}
				respond(w, review, uid, metav1.Status{Status: metav1.StatusSuccess}, append(objs, objs...))
			},
			wantErr: prefix + "returned 2 objects, expected 1",
		},
		{
			name: "no objects",
			handle: func(w http.ResponseWriter, _ *http.Request, review map[string]any) {
				uid, _, _ := reviewRequest(review)
				respond(w, review, uid, metav1.Status{Status: metav1.StatusSuccess}, nil)
			},
			wantErr: prefix + "returned 0 objects, expected 1",
		},
		{
			name: "response without kind",
			handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				_, _ = w.Write([]byte(`{"response":{}}`))
			},
			wantErr: prefix + "failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got /, Kind=",
		},
		{
			name: "response without response",
			handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				_, _ = w.Write([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`))
			},
			wantErr: prefix + "failed: no response provided",
		},
		{
			name: "HTTP 500 text",
			handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				http.Error(w, "webhook broke", http.StatusInternalServerError)
			},
			wantErr: prefix + `failed: an error on the server ("webhook broke") has prevented the request from succeeding`,
		},
		{
			name: "HTTP 404",
			handle: func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
				http.NotFound(w, r)
			},
			wantErr: prefix + "failed: the server could not find the requested resource",
		},
		{
			name: "HTTP 403 Status",
			handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"not allowed","reason":"Forbidden","code":403}`))
			},
			wantErr: prefix + "failed: not allowed",
		},
		{
			name: "not JSON",
			handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
				_, _ = w.Write([]byte(`<html>`))
			},
			wantErr: prefix + "failed: decode webhook response: invalid character '<' looking for beginning of value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr := tt.wantErr
			s := newHookServer(t, ca, nil, loopback, tt.handle)
			c, err := New(webhookCRD(urlConfig(s, ca)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			in := cronTab(gvV1, "a")
			before := in.DeepCopy()
			got, err := c.ConvertObject(context.Background(), in, gvV2)
			if !equalObjects(in, before) {
				t.Errorf("input was mutated: got %v, want %v", in.Object, before.Object)
			}
			if wantErr != "" {
				if err == nil {
					t.Fatalf("got no error, want %q", wantErr)
				}
				var ce *Error
				if !errors.As(err, &ce) {
					t.Errorf("got error of type %T, want *Error", err)
				}
				if wantErr[0] == '^' {
					if !regexp.MustCompile(wantErr).MatchString(err.Error()) {
						t.Fatalf("got error %q, want one matching %q", err, wantErr)
					}
					return
				}
				if err.Error() != wantErr {
					t.Fatalf("got error\n%q\nwant\n%q", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetAPIVersion() != gvV2.String() || got.GetKind() != "CronTab" || got.GetName() != "a" || got.GetNamespace() != "default" || string(got.GetUID()) != "uid-a" {
				t.Errorf("got %v, want a stable.example.com/v2 CronTab default/a uid-a", got.Object)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
			if n := s.calls.Load(); n != 1 {
				t.Errorf("got %d webhook calls, want 1", n)
			}
		})
	}
}

func TestWebhookRequest(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name        string
		versions    []string
		wantVersion string
	}{
		{name: "v1", versions: []string{"v1"}, wantVersion: "apiextensions.k8s.io/v1"},
		{name: "v1beta1 first", versions: []string{"v1beta1", "v1"}, wantVersion: "apiextensions.k8s.io/v1beta1"},
		{name: "unknown skipped", versions: []string{"v9", "v1"}, wantVersion: "apiextensions.k8s.io/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHookServer(t, ca, nil, loopback, convertAll(nil))
			c, err := New(webhookCRD(urlConfig(s, ca), tt.versions...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ConvertObject(context.Background(), cronTab(gvV2, "a"), gvV1)
			if err != nil {
				t.Fatal(err)
			}
			if h, _, _ := unstructured.NestedString(got.Object, "spec", "host"); h != "example.com" || got.GetAPIVersion() != gvV1.String() {
				t.Errorf("got %v, want a v1 CronTab with spec.host", got.Object)
			}
			req := s.lastRequest(t)
			if av := req.review["apiVersion"]; av != tt.wantVersion || req.review["kind"] != "ConversionReview" {
				t.Errorf("got review %v %v, want %s ConversionReview", av, req.review["kind"], tt.wantVersion)
			}
			uid, desired, objs := reviewRequest(req.review)
			if _, err := uuid.Parse(uid); err != nil {
				t.Errorf("got request.uid %q, want a UUID: %v", uid, err)
			}
			if desired != gvV1.String() {
				t.Errorf("got desiredAPIVersion %q, want %q", desired, gvV1)
			}
			if len(objs) != 1 || objs[0]["apiVersion"] != gvV2.String() {
				t.Errorf("got objects %v, want the v2 object", objs)
			}
			if req.path != "/convert" || req.query.Get("timeout") != "30s" {
				t.Errorf("got path %q query %v, want /convert timeout=30s", req.path, req.query)
			}
			// Loopback URLs may use HTTP/2, as upstream.
			if req.proto != 2 {
				t.Errorf("got HTTP/%d, want HTTP/2 to a loopback URL", req.proto)
			}
		})
	}
}

func TestWebhookUIDsDiffer(t *testing.T) {
	ca := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, convertAll(nil))
	c, err := New(webhookCRD(urlConfig(s, ca)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	u1, _, _ := reviewRequest(s.requests[0].review)
	u2, _, _ := reviewRequest(s.requests[1].review)
	s.mu.Unlock()
	if u1 == u2 {
		t.Errorf("got the same request.uid %q twice, want a fresh one per call", u1)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("got %d connections for 2 calls, want 1 (connection reuse)", n)
	}
}

func TestWebhookNoCall(t *testing.T) {
	ca := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, convertAll(nil))
	// v3 is not a review version kapi knows: calls fail, but nothing that
	// needs no call does.
	c, err := New(webhookCRD(urlConfig(s, ca), "v3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := cronTab(gvV2, "a")
	got, err := c.ConvertObject(ctx, in, gvV2)
	if err != nil || got != in {
		t.Errorf("same version: got %p, %v, want the input %p", got, err, in)
	}
	empty := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvV1.String(), "kind": "CronTab"}}
	got, err = c.ConvertObject(ctx, empty, gvV2)
	if err != nil || got.GetAPIVersion() != gvV2.String() {
		t.Errorf("empty object: got %v, %v, want a v2 empty object", got, err)
	}
	list, err := c.Convert(ctx, []*unstructured.Unstructured{cronTab(gvV2, "a"), cronTab(gvV2, "b")}, gvV2)
	if err != nil || len(list) != 2 {
		t.Errorf("list in version: got %v, %v, want 2 objects", list, err)
	}
	_, err = c.ConvertObject(ctx, cronTab(gvV1, "a"), gvV2)
	if want := "no supported conversion review versions"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
	if n := s.calls.Load(); n != 0 {
		t.Errorf("got %d webhook calls, want 0", n)
	}
}

func TestWebhookList(t *testing.T) {
	ca := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, convertAll(nil))
	c, err := New(webhookCRD(urlConfig(s, ca)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	already := cronTab(gvV2, "b")
	objs := []*unstructured.Unstructured{cronTab(gvV1, "a"), already, cronTab(gvV1, "c")}
	got, err := c.Convert(ctx, objs, gvV2)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Fatalf("got %d webhook calls, want 1 for the whole list", n)
	}
	_, _, sent := reviewRequest(s.lastRequest(t).review)
	if len(sent) != 2 {
		t.Fatalf("got %d objects sent, want 2 (the one in v2 is not sent)", len(sent))
	}
	wantNames := []string{"a", "b", "c"}
	for i, o := range got {
		if o.GetName() != wantNames[i] || o.GetAPIVersion() != gvV2.String() {
			t.Errorf("item %d: got %s %s, want %s %s", i, o.GetAPIVersion(), o.GetName(), gvV2, wantNames[i])
		}
	}
	if got[1] != already {
		t.Errorf("item already in v2: got a new object, want the input")
	}

	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": gvV1.String(), "kind": "CronTabList"}}
	for _, o := range objs {
		list.Items = append(list.Items, *o)
	}
	gotList, err := c.ConvertList(ctx, list, gvV2)
	if err != nil {
		t.Fatal(err)
	}
	if gotList.GetAPIVersion() != gvV2.String() || len(gotList.Items) != 3 {
		t.Errorf("got list %s with %d items, want %s with 3", gotList.GetAPIVersion(), len(gotList.Items), gvV2)
	}
	if n := s.calls.Load(); n != 2 {
		t.Errorf("got %d webhook calls after ConvertList, want 2", n)
	}
}

func TestWebhookListErrors(t *testing.T) {
	ca := newTestCA(t)
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTabList "
	tests := []struct {
		name    string
		mutate  func(i int, o map[string]any)
		wantErr string
	}{
		{
			name: "name changed at index 1",
			mutate: func(i int, o map[string]any) {
				if i == 1 {
					o["metadata"].(map[string]any)["name"] = "x"
				}
			},
			wantErr: prefix + "returned invalid converted object at index 1: must have the same name: c != x",
		},
		{
			name: "wrong apiVersion",
			mutate: func(i int, o map[string]any) {
				o["apiVersion"] = "other.io/v2"
			},
			wantErr: prefix + "returned invalid converted object at index 0: invalid groupVersion (expected stable.example.com/v2, received other.io/v2)",
		},
		{
			name: "invalid annotation",
			mutate: func(i int, o map[string]any) {
				o["metadata"].(map[string]any)["annotations"] = map[string]any{"bad key!": "v"}
			},
			wantErr: prefix + "returned invalid metadata in object at index 0: metadata.annotation: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHookServer(t, ca, nil, loopback, convertAll(tt.mutate))
			c, err := New(webhookCRD(urlConfig(s, ca)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": gvV1.String(), "kind": "CronTabList"}}
			list.Items = []unstructured.Unstructured{*cronTab(gvV1, "a"), *cronTab(gvV2, "b"), *cronTab(gvV1, "c")}
			_, err = c.ConvertList(context.Background(), list, gvV2)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("got error\n%v\nwant\n%s", err, tt.wantErr)
			}
		})
	}
}

func TestWebhookTLS(t *testing.T) {
	ca := newTestCA(t)
	other := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, convertAll(nil))
	tests := []struct {
		name     string
		caBundle []byte
		wantErr  string
	}{
		{name: "trusted caBundle", caBundle: ca.PEM},
		{name: "caBundle of another CA", caBundle: other.PEM, wantErr: "x509: certificate signed by unknown authority"},
		{name: "no caBundle: system roots", wantErr: "x509: certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := urlConfig(s, ca)
			cc.CABundle = tt.caBundle
			c, err := New(webhookCRD(cc), Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := fmt.Sprintf("conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post %q: tls: failed to verify certificate: %s", s.URL+"/convert?timeout=30s", tt.wantErr)
			if err == nil || err.Error() != want {
				t.Fatalf("got error\n%v\nwant\n%s", err, want)
			}
		})
	}
}

func TestWebhookTimeout(t *testing.T) {
	ca := newTestCA(t)
	release := make(chan struct{})
	s := newHookServer(t, ca, nil, loopback, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c, err := New(webhookCRD(urlConfig(s, ca)), Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2)
	if err == nil {
		t.Fatal("got no error, want a timeout")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("got error %v, want a timeout", err)
	}
	want := fmt.Sprintf("conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post %q: ", s.URL+"/convert?timeout=200ms")
	if !contains(err.Error(), want) {
		t.Errorf("got error %q, want one starting with %q", err, want)
	}

	// The caller's context bounds the call too.
	c, err = New(webhookCRD(urlConfig(s, ca)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.ConvertObject(ctx, cronTab(gvV1, "a"), gvV2)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got error %v, want context.Canceled", err)
	}
}

func TestWebhookService(t *testing.T) {
	ca := newTestCA(t)
	// The certificate names the service only: the TLS server name must be
	// <name>.<namespace>.svc, not the resolved address.
	s := newHookServer(t, ca, []string{"hook.webhooks.svc"}, nil, convertAll(nil))
	addr := s.Listener.Addr().String()
	tests := []struct {
		name     string
		port     *int32
		path     *string
		resolver staticResolver
		wantSeen string
		wantHost string
		wantPath string
		wantErr  string
	}{
		{name: "port and path", port: ptr.To[int32](8443), path: ptr.To("/convert"), resolver: staticResolver{addr: addr},
			wantSeen: "webhooks/hook:8443", wantHost: "hook.webhooks.svc:8443", wantPath: "/convert"},
		{name: "default port and path", resolver: staticResolver{addr: addr},
			wantSeen: "webhooks/hook:443", wantHost: "hook.webhooks.svc:443", wantPath: "/"},
		{name: "resolver fails", resolver: staticResolver{err: errors.New(`service "hook" not found`)},
			wantSeen: "webhooks/hook:443",
			wantErr:  `conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "https://hook.webhooks.svc:443/?timeout=30s": service "hook" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			r := tt.resolver
			r.mu, r.seen = &mu, &seen
			cc := apiextensionsv1.WebhookClientConfig{
				Service:  &apiextensionsv1.ServiceReference{Namespace: "webhooks", Name: "hook", Port: tt.port, Path: tt.path},
				CABundle: ca.PEM,
			}
			c, err := New(webhookCRD(cc), Options{ServiceResolver: r})
			if err != nil {
				t.Fatal(err)
			}
			calls := s.calls.Load()
			got, err := c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2)
			mu.Lock()
			if len(seen) != 1 || seen[0] != tt.wantSeen {
				t.Errorf("got resolutions %v, want [%s]", seen, tt.wantSeen)
			}
			mu.Unlock()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error\n%v\nwant\n%s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetAPIVersion() != gvV2.String() {
				t.Errorf("got apiVersion %q, want %q", got.GetAPIVersion(), gvV2)
			}
			if n := s.calls.Load() - calls; n != 1 {
				t.Fatalf("got %d calls, want 1", n)
			}
			req := s.lastRequest(t)
			if req.host != tt.wantHost || req.path != tt.wantPath {
				t.Errorf("got Host %q path %q, want %q %q", req.host, req.path, tt.wantHost, tt.wantPath)
			}
			if req.proto != 1 {
				t.Errorf("got HTTP/%d, want HTTP/1.1 to a service, as upstream", req.proto)
			}
		})
	}
}

func TestWebhookConcurrent(t *testing.T) {
	ca := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, convertAll(nil))
	c, err := New(webhookCRD(urlConfig(s, ca)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			name := fmt.Sprintf("o%d", i)
			got, err := c.ConvertObject(context.Background(), cronTab(gvV1, name), gvV2)
			if err == nil && got.GetName() != name {
				err = fmt.Errorf("got name %q, want %q", got.GetName(), name)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestWebhookResponseLimits(t *testing.T) {
	ca := newTestCA(t)
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTab failed: "
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name     string
		maxBytes int64
		handle   func(w http.ResponseWriter, r *http.Request, review map[string]any)
		wantErr  string
	}{
		{name: "answer over the limit", maxBytes: 100, handle: convertAll(nil),
			wantErr: prefix + "webhook response is larger than 100 bytes"},
		{name: "error text cut at 2048 bytes", handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			http.Error(w, long, http.StatusBadGateway)
		}, wantErr: prefix + `an error on the server ("` + long[:2048] + `") has prevented the request from succeeding`},
		{name: "binary error body", handle: func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, wantErr: prefix + "the server is currently unable to handle the request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHookServer(t, ca, nil, loopback, tt.handle)
			c, err := New(webhookCRD(urlConfig(s, ca)), Options{MaxResponseBytes: tt.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("got error\n%v\nwant\n%s", err, tt.wantErr)
			}
		})
	}
}

// TestWebhookV1beta1Lenient checks that, as upstream, v1beta1 answers are
// not checked for uid, apiVersion or kind.
func TestWebhookV1beta1Lenient(t *testing.T) {
	ca := newTestCA(t)
	s := newHookServer(t, ca, nil, loopback, func(w http.ResponseWriter, r *http.Request, review map[string]any) {
		review["request"].(map[string]any)["uid"] = "other"
		delete(review, "apiVersion")
		convertAll(nil)(w, r, review)
	})
	tests := []struct {
		name     string
		versions []string
		wantErr  bool
	}{
		{name: "v1beta1", versions: []string{"v1beta1"}},
		{name: "v1", versions: []string{"v1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(webhookCRD(urlConfig(s, ca), tt.versions...), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ConvertObject(context.Background(), cronTab(gvV1, "a"), gvV2)
			if tt.wantErr {
				if err == nil {
					t.Fatal("got no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetAPIVersion() != gvV2.String() {
				t.Errorf("got apiVersion %q, want %q", got.GetAPIVersion(), gvV2)
			}
		})
	}
}
