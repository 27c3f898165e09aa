package apiextensions

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// Table output of custom resources: includeObject None, Metadata (the
// default) and Object on get and list, and Table watch events (headers
// on the first only).
func TestTableIncludeObject(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	ri := serveWidgets(t, ts)
	eventually(t, waitTimeout, "widgets served", func() bool {
		_, err := ri.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	if _, err := ri.Create(ctx, widget("example.com/v1", "Widget", "w", map[string]any{"name": "x", "size": int64(5)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const list = "/apis/example.com/v1/namespaces/ns/widgets"
	for _, tc := range []struct {
		name, query string
		path        string
		code        int
		wantKind    string // of the row's object; "" for none
		wantAPI     string
	}{
		{"list default", "", list, 200, "PartialObjectMetadata", "meta.k8s.io/v1"},
		{"list metadata", "?includeObject=Metadata", list, 200, "PartialObjectMetadata", "meta.k8s.io/v1"},
		{"list object", "?includeObject=Object", list, 200, "Widget", "example.com/v1"},
		{"list none", "?includeObject=None", list, 200, "", ""},
		{"get object", "?includeObject=Object", list + "/w", 200, "Widget", "example.com/v1"},
		{"get none", "?includeObject=None", list + "/w", 200, "", ""},
		{"bad value", "?includeObject=All", list, 400, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, http.MethodGet, tc.path+tc.query, "", "Accept", tableAccept)
			if code != tc.code {
				t.Fatalf("got %d %s, want %d", code, body, tc.code)
			}
			if code != 200 {
				return
			}
			var table struct {
				Kind string `json:"kind"`
				Rows []struct {
					Cells  []any          `json:"cells"`
					Object map[string]any `json:"object"`
				} `json:"rows"`
			}
			if err := json.Unmarshal(body, &table); err != nil {
				t.Fatal(err)
			}
			if table.Kind != "Table" || len(table.Rows) != 1 {
				t.Fatalf("got %s, want a Table with one row", body)
			}
			obj := table.Rows[0].Object
			if tc.wantKind == "" {
				if obj != nil {
					t.Fatalf("row object: got %v, want none", obj)
				}
				return
			}
			if obj["kind"] != tc.wantKind || obj["apiVersion"] != tc.wantAPI {
				t.Fatalf("row object: got %v %v, want %s %s", obj["apiVersion"], obj["kind"], tc.wantAPI, tc.wantKind)
			}
			if tc.wantKind == "Widget" {
				if spec, _ := obj["spec"].(map[string]any); spec["size"] != float64(5) {
					t.Fatalf("row object lacks spec: %v", obj)
				}
			}
		})
	}

	// Watch as Table: every event's object is a Table with the printer
	// columns (kubectl get -w).
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.srv.URL+list+"?watch=true&resourceVersion=0&includeObject=Object", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", tableAccept)
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch as Table: got %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("watch ended: %v", lines.Err())
		}
		var ev map[string]any
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	// Only the first event carries the column definitions, as upstream.
	check := func(ev map[string]any, typ, name string, size float64, headers bool) {
		t.Helper()
		obj, _ := ev["object"].(map[string]any)
		if ev["type"] != typ || obj["kind"] != "Table" {
			t.Fatalf("got event %v, want %s of a Table", ev, typ)
		}
		b, _ := json.Marshal(obj)
		if got := strings.Contains(string(b), `"name":"Size"`); got != headers {
			t.Fatalf("watch Table has the Size column: got %v, want %v: %s", got, headers, b)
		}
		rows, _ := obj["rows"].([]any)
		row, _ := rows[0].(map[string]any)
		cells, _ := row["cells"].([]any)
		if len(cells) != 2 || cells[0] != name || cells[1] != size {
			t.Fatalf("row cells: got %v, want [%s %v]", cells, name, size)
		}
		if o, _ := row["object"].(map[string]any); o["kind"] != "Widget" {
			t.Fatalf("row object: got %v, want the Widget", row["object"])
		}
	}
	check(next(), "ADDED", "w", 5, true)
	u, err := ri.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"].(map[string]any)["size"] = int64(7)
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check(next(), "MODIFIED", "w", 7, false)
}
