package filters

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// WithHSTS adds `Strict-Transport-Security: <directives joined by "; ">`
// unless the header is already present (serving.md 21). No directives: no
// filter.
func WithHSTS(handler http.Handler, directives []string) http.Handler {
	if len(directives) == 0 {
		return handler
	}
	value := strings.Join(directives, "; ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.Header()["Strict-Transport-Security"]; !ok {
			w.Header().Set("Strict-Transport-Security", value)
		}
		handler.ServeHTTP(w, r)
	})
}

// ValidateHSTSDirectives accepts only max-age=<n>, includeSubDomains and
// preload.
func ValidateHSTSDirectives(directives []string) error {
	var errs []error
	for _, d := range directives {
		switch {
		case strings.TrimSpace(d) == "":
			errs = append(errs, errors.New("empty value in strict-transport-security-directives"))
		case d == "includeSubDomains" || d == "preload":
		default:
			v, ok := strings.CutPrefix(d, "max-age=")
			if _, err := strconv.ParseUint(v, 10, 64); !ok || err != nil {
				errs = append(errs, fmt.Errorf("--strict-transport-security-directives invalid value %q, allowed values: "+
					"max-age=expireTime, includeSubDomains, preload. see https://tools.ietf.org/html/rfc6797#section-6.1 for more information", d))
			}
		}
	}
	return errors.Join(errs...)
}
