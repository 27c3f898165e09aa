package authenticator

import (
	"errors"
	"net/http"
	"slices"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Request authenticates an HTTP request.
//
// It returns (info, true, nil) when it recognizes the caller, (nil, false,
// nil) when the request carries no credentials it handles, and a non-nil
// error when it carries such credentials but they are invalid. It must be
// safe for concurrent use and must not modify the request.
type Request interface {
	AuthenticateRequest(r *http.Request) (*user.Info, bool, error)
}

// RequestFunc adapts a function to [Request].
type RequestFunc func(r *http.Request) (*user.Info, bool, error)

// AuthenticateRequest calls f(r).
func (f RequestFunc) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	return f(r)
}

// Union returns a Request that tries each authenticator in order; the first
// success wins. If none succeeds, the errors of all that failed are joined
// and returned; if none failed either, the result is (nil, false, nil).
// Nil authenticators are skipped.
func Union(authenticators ...Request) Request {
	var list []Request
	for _, a := range authenticators {
		if a != nil {
			list = append(list, a)
		}
	}
	return unionAuthenticator(list)
}

type unionAuthenticator []Request

func (u unionAuthenticator) AuthenticateRequest(r *http.Request) (*user.Info, bool, error) {
	var errs []error
	for _, a := range u {
		info, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return info, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}

// authenticated returns a copy of u that is in the system:authenticated
// group, as upstream's authenticated-group wrapper adds it to every user
// but system:anonymous.
func authenticated(u *user.Info) *user.Info {
	c := &user.Info{Name: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	if u.Extra != nil {
		c.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			c.Extra[k] = slices.Clone(v)
		}
	}
	if c.Name != user.Anonymous && !slices.Contains(c.Groups, user.AllAuthenticated) {
		c.Groups = append(c.Groups, user.AllAuthenticated)
	}
	return c
}
