package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"
)

// rawList is the list row's client: a GET of the collection
// (Accept: application/json) over the transport client-go builds for the
// config (the dynamic client's: HTTP/2, and gzip asked for and undone by
// Go's transport, as for any client-go request), whose body is read whole
// and its items counted, without decoding them into maps. The client-go
// dynamic client decoding 2,000 items into Unstructured maps costs more CPU
// in the benchmark's process than a list costs a server, on the same
// cores; the row measures the servers. See docs/performance-history.md,
// "Session 7: consistent lists of custom resources".
type rawList struct {
	client *http.Client
	url    string
}

func newRawList(cfg *rest.Config, path string) (*rawList, error) {
	client, u, err := rawClient(cfg, path)
	if err != nil {
		return nil, err
	}
	return &rawList{client: client, url: u}, nil
}

// rawClient returns an HTTP client on the transport client-go builds for
// cfg (its TLS, credentials and HTTP/2) and the URL of path on cfg's host:
// what the raw rows send their GETs with.
func rawClient(cfg *rest.Config, path string) (*http.Client, string, error) {
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, "", err
	}
	u, err := url.JoinPath(cfg.Host, path)
	if err != nil {
		return nil, "", err
	}
	return &http.Client{Transport: tr}, u, nil
}

// list lists the collection and returns how many items it holds.
func (l *rawList) list(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("list: %s: %.200s", resp.Status, body)
	}
	return countItems(body)
}

// countItems counts the elements of the top-level "items" array of a JSON
// object, checking the structure it walks (strings, nesting) without
// building any value.
func countItems(b []byte) (int, error) {
	depth, count := 0, 0
	var key []byte
	pending := false // the last depth-1 key was "items" and its value has not started
	inItems := false // inside the top-level items array (depth 2)
	want := false    // an element may start here
	found := false
	startValue := func() {
		if inItems && depth == 2 && want {
			count++
			want = false
		}
	}
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return 0, errors.New("unterminated string")
			}
			startValue()
			if depth == 1 {
				key, pending = b[i+1:j], false
			}
			i = j
		case ':':
			if depth == 1 {
				pending = string(key) == "items"
			}
		case '{', '[':
			startValue()
			depth++
			if depth == 2 && c == '[' && pending {
				inItems, want, found = true, true, true
			}
			pending = false
		case '}', ']':
			if depth == 0 {
				return 0, errors.New("unbalanced JSON")
			}
			if inItems && depth == 2 {
				inItems = false
			}
			depth--
		case ',':
			if inItems && depth == 2 {
				want = true
			}
		default:
			startValue()
			if depth == 1 {
				pending = false
			}
		}
	}
	if depth != 0 {
		return 0, errors.New("truncated JSON")
	}
	if !found {
		return 0, errors.New("no items array")
	}
	return count, nil
}
