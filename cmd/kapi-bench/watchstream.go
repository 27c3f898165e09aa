package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// rawWatch is one watch of the bench's collection read as a raw JSON
// stream (one WatchEvent per line, as kube-apiserver and kapi frame
// them): the client decodes nothing but the send time stamped in the
// object's annotation. With 1,000 watchers in the benchmark's process a
// dynamic client's full JSON decoding of every event competed with the
// server for the two cores and was itself the bottleneck; this reader
// costs the same for kapi and the reference.
type rawWatch struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// startRawWatch starts a watch of the bench namespace's objects from
// resourceVersion rv over client (the transport client-go uses for cfg:
// the same HTTP/2 connections as a typed or dynamic client).
func startRawWatch(ctx context.Context, client *http.Client, cfg *rest.Config, rv string) (*rawWatch, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	u.Path = fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", benchGVR.Group, benchGVR.Version, benchNamespace, benchGVR.Resource)
	u.RawQuery = url.Values{"watch": {"true"}, "resourceVersion": {rv}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		return nil, fmt.Errorf("watch: %s: %s", resp.Status, msg)
	}
	return &rawWatch{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}, nil
}

func (w *rawWatch) Close() error { return w.body.Close() }

var (
	errWatchError = errors.New("the watch sent an ERROR event")
	sentKey       = []byte(`"` + sentAnnotation + `":"`)
	errorType     = []byte(`{"type":"ERROR"`)
)

// next reads events until one carries the send stamp and returns it with
// the time the event was read; events without it (updates of earlier
// rows) are skipped.
func (w *rawWatch) next() (sent, received time.Time, err error) {
	for {
		line, err := w.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A longer event than the buffer: it cannot be one of ours
			// (a few hundred bytes); skip to its end.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = w.r.ReadSlice('\n')
			}
			if err != nil {
				return time.Time{}, time.Time{}, err
			}
			continue
		}
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		now := time.Now()
		if bytes.HasPrefix(line, errorType) {
			return time.Time{}, time.Time{}, fmt.Errorf("%w: %s", errWatchError, bytes.TrimSpace(line))
		}
		if ns, ok := sentStamp(line); ok {
			return time.Unix(0, ns), now, nil
		}
	}
}

// sentStamp extracts the send time (Unix nanoseconds) from one encoded
// event's bench annotation.
func sentStamp(line []byte) (int64, bool) {
	i := bytes.Index(line, sentKey)
	if i < 0 {
		return 0, false
	}
	rest := line[i+len(sentKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return ns, err == nil
}
