package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// rawGetter is the raw get row's client: a GET of one object
// (Accept: application/json) over the transport client-go builds for the
// config — the same HTTP/2 connection, TLS and bearer token as the dynamic
// client's — whose body is read whole and checked to name the object, not
// decoded into a map. It is to the get row what rawList is to the list
// row: the dynamic client's JSON decoding into Unstructured costs the
// benchmark's process about as much CPU per get as a kapi server spends
// (session 21's per-op rows: kapi-bench 110 µs against kapi's 118 µs per
// get), on the same two cores, so the get row measures the client nearly as
// much as the servers. Both rows are printed.
type rawGetter struct {
	client *http.Client
	base   string // the collection's URL, ending in "/"
}

func newRawGetter(cfg *rest.Config, collection string) (*rawGetter, error) {
	client, u, err := rawClient(cfg, collection)
	if err != nil {
		return nil, err
	}
	return &rawGetter{client: client, base: u + "/"}, nil
}

// bodyBufs recycles the raw get row's response buffers.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// get reads object name and checks that the answer is 200 and holds
// "name":"<name>".
func (g *rawGetter) get(ctx context.Context, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+name, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer bodyBufs.Put(buf)
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s: %.200s", name, resp.Status, buf.Bytes())
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"name":"`+name+`"`)) {
		return fmt.Errorf("get %s: the answer does not name the object: %.200s", name, buf.Bytes())
	}
	return nil
}
