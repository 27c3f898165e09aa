package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

var alice = &user.Info{Name: "alice", Groups: []string{user.AllAuthenticated}}

func TestWithAuthentication(t *testing.T) {
	tests := []struct {
		name       string
		header     http.Header
		wantCode   int
		wantUser   string
		wantGroups []string
	}{
		{name: "valid token", header: http.Header{"Authorization": {"Bearer good"}, "X-Remote-User": {"eve"},
			"X-Remote-Extra-Scopes": {"x"}, "X-Remote-Group": {"g"}, "X-Remote-Uid": {"1"}, "Accept": {"application/json"}},
			wantCode: 200, wantUser: "alice", wantGroups: []string{user.AllAuthenticated}},
		{name: "bad token", header: http.Header{"Authorization": {"Bearer bad"}}, wantCode: 401},
		{name: "no credentials is anonymous", wantCode: 200, wantUser: user.Anonymous, wantGroups: []string{user.AllUnauthenticated}},
		{name: "unknown scheme is anonymous", header: http.Header{"Authorization": {"Basic x"}}, wantCode: 200,
			wantUser: user.Anonymous, wantGroups: []string{user.AllUnauthenticated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *user.Info
			var leftHeaders http.Header
			h := WithAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = request.UserFrom(r.Context())
				leftHeaders = r.Header.Clone()
			}), tokenAuthenticator{"good": alice}, nil, discard(), nil)
			req := httptest.NewRequest("GET", "/api", nil)
			for k, v := range tt.header {
				req.Header[k] = v
			}
			sent := req.Header.Clone()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Fatalf("got %d, want %d", rec.Code, tt.wantCode)
			}
			// The caller's map is never changed: the filters outside
			// may read it while a timed-out handler still runs.
			if !reflect.DeepEqual(req.Header, sent) {
				t.Errorf("the caller's headers changed to %v, want %v", req.Header, sent)
			}
			if tt.wantCode == 401 {
				var st metav1.Status
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st.Message != "Unauthorized" || st.Reason != metav1.StatusReasonUnauthorized || st.Code != 401 || st.Kind != "Status" {
					t.Errorf("got %+v, want Unauthorized Status", st)
				}
				return
			}
			if got == nil || got.Name != tt.wantUser || len(got.Groups) != len(tt.wantGroups) || got.Groups[0] != tt.wantGroups[0] {
				t.Errorf("got user %+v, want %s %v", got, tt.wantUser, tt.wantGroups)
			}
			for _, k := range []string{"Authorization", "X-Remote-User", "X-Remote-Group", "X-Remote-Uid", "X-Remote-Extra-Scopes"} {
				if v := leftHeaders.Get(k); v != "" {
					t.Errorf("header %s=%q reached the handler, want it stripped", k, v)
				}
			}
			if want := tt.header.Get("Accept"); leftHeaders.Get("Accept") != want {
				t.Errorf("Accept reached the handler as %q, want %q", leftHeaders.Get("Accept"), want)
			}
		})
	}
}

// Over HTTP/2, anonymous requests and 401s close the connection (GOAWAY);
// authenticated requests keep it. Over HTTP/1.1 nothing changes.
func TestWithAuthenticationHTTP2ConnectionClose(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			h := WithAuthentication(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
				tokenAuthenticator{"good": alice}, nil, discard(), nil)
			srv, c := startTLS(t, h, proto.http2)
			tests := []struct {
				name      string
				token     string
				wantCode  int
				wantClose bool
			}{
				{"authenticated", "good", 200, false},
				{"anonymous", "", 200, proto.http2},
				{"unauthorized", "bad", 401, proto.http2},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					hdr := http.Header{}
					if tt.token != "" {
						hdr.Set("Authorization", "Bearer "+tt.token)
					}
					// Warm a connection, then see whether the next request
					// reuses it.
					get(t, c, srv.URL, http.Header{"Authorization": {"Bearer good"}})
					resp, _ := get(t, c, srv.URL, hdr)
					if resp.StatusCode != tt.wantCode {
						t.Fatalf("got %d, want %d", resp.StatusCode, tt.wantCode)
					}
					if gotProto := resp.ProtoMajor == 2; gotProto != proto.http2 {
						t.Fatalf("got protocol %s", resp.Proto)
					}
					reused := false
					trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
					req, _ := http.NewRequest("GET", srv.URL, nil)
					req.Header.Set("Authorization", "Bearer good")
					resp2, err := c.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
					if err != nil {
						t.Fatal(err)
					}
					resp2.Body.Close()
					if reused == tt.wantClose {
						t.Errorf("got connection reused=%v after the request, want %v", reused, !tt.wantClose)
					}
				})
			}
		})
	}
}
