package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestWithRequestDeadline(t *testing.T) {
	const T = time.Minute
	tests := []struct {
		name        string
		target      string
		max         time.Duration
		want        time.Duration // 0: no deadline
		wantBadBody string
	}{
		{name: "default T", target: "/api/v1/pods", max: T, want: T},
		{name: "shorter timeout", target: "/api/v1/pods?timeout=10s", max: T, want: 10 * time.Second},
		{name: "zero keeps T", target: "/api/v1/pods?timeout=0s", max: T, want: T},
		{name: "negative keeps T", target: "/api/v1/pods?timeout=-1s", max: T, want: T},
		{name: "longer keeps T", target: "/api/v1/pods?timeout=2m", max: T, want: T},
		{name: "equal keeps T", target: "/api/v1/pods?timeout=1m", max: T, want: T},
		{name: "long-running has none", target: "/api/v1/pods?watch=true&timeout=1s", max: T},
		{name: "no server maximum", target: "/api/v1/pods", max: 0},
		{name: "no server maximum, user timeout", target: "/api/v1/pods?timeout=5s", max: 0, want: 5 * time.Second},
		{name: "unparsable", target: "/api/v1/pods?timeout=abc", max: T,
			wantBadBody: `invalid timeout specified in the request URL - time: invalid duration "abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			received := time.Now().Add(-time.Second)
			var got time.Time
			var has, served bool
			h := withInfo(WithRequestDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served = true
				got, has = r.Context().Deadline()
			}), tt.max, DefaultLongRunning, discard()))
			req := httptest.NewRequest("GET", tt.target, nil)
			req = req.WithContext(request.WithReceivedTimestamp(req.Context(), received))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.wantBadBody != "" {
				if served || rec.Code != 400 {
					t.Fatalf("got code %d served %v, want 400", rec.Code, served)
				}
				var st metav1.Status
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st.Reason != metav1.StatusReasonBadRequest || st.Message != tt.wantBadBody {
					t.Errorf("got %s %q, want BadRequest %q", st.Reason, st.Message, tt.wantBadBody)
				}
				return
			}
			if tt.want == 0 {
				if has {
					t.Errorf("got deadline %v, want none", got)
				}
				return
			}
			if !has || !got.Equal(received.Add(tt.want)) {
				t.Errorf("got deadline %v (%v), want received+%v", got, has, tt.want)
			}
		})
	}
}
