package storage

import (
	"errors"
	"testing"
)

// TestParseRequestResourceVersion checks the values and errors of request
// resourceVersions. The messages are kube-apiserver v1.37.2's for a list
// with that resourceVersion (400 BadRequest, recorded in session 18 with
// GET /api/v1/namespaces/<ns>/configmaps?resourceVersion=<rv>).
func TestParseRequestResourceVersion(t *testing.T) {
	for _, c := range []struct {
		rv      string
		want    uint64
		message string
	}{
		{rv: "", want: 0},
		{rv: "0", want: 0},
		{rv: "42", want: 42},
		{rv: "abc", message: `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{rv: "-1", message: `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`},
		{rv: "1x", message: `invalid resource version: resourceVersion: Invalid value: "1x": strconv.ParseUint: parsing "1x": invalid syntax`},
	} {
		got, err := ParseRequestResourceVersion("/registry/configmaps/ns", c.rv)
		if c.message == "" {
			if err != nil || got != c.want {
				t.Errorf("%q: got %d, %v; want %d", c.rv, got, err, c.want)
			}
			continue
		}
		var se *StorageError
		if !errors.As(err, &se) || se.Code != ErrCodeInvalidArgument || se.Message != c.message {
			t.Errorf("%q: got %#v, want ErrCodeInvalidArgument %q", c.rv, err, c.message)
		}
	}
}
