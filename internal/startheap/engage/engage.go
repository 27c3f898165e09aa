// Package engage engages package startheap at package initialisation, as
// early as the Go's initialisation order lets it (it depends on the
// standard library alone): import it for its side effect, in a binary's
// main package only.
package engage

import "github.com/kapi-dev/kapi/internal/startheap"

func init() { startheap.Engage() }
