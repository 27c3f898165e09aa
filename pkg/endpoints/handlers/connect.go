package handlers

import (
	"net/http"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// ConnectResource serves a connect subresource (rest.Connecter): the
// storage resolves the request for the named object into a handler (a
// stream, a proxy) that answers it; errors are written as API statuses.
func ConnectResource(c rest.Connecter, s *RequestScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, info, _, err := s.requestInfo(req)
		if err != nil {
			s.err(err, w, req)
			return
		}
		if info.Name == "" {
			s.err(errEmptyName, w, req)
			return
		}
		if _, ok := c.(rest.StorageMetadata); ok {
			// pods/log, a get route upstream: its handler negotiates the
			// output first (kube-apiserver v1.37.2 answers a bare
			// "Accept: text/plain" with 406).
			if _, err := s.negotiate(req); err != nil {
				s.err(err, w, req)
				return
			}
		}
		fail := func(w http.ResponseWriter, req *http.Request, err error) { s.err(err, w, req) }
		h, err := c.Connect(ctx, info.Name, req.WithContext(ctx), fail)
		if err != nil {
			s.err(err, w, req)
			return
		}
		h.ServeHTTP(w, req.WithContext(ctx))
	})
}
