// Package user describes an authenticated identity.
package user

// Well-known user and group names.
const (
	Anonymous          = "system:anonymous"
	APIServerUser      = "system:apiserver"
	AllAuthenticated   = "system:authenticated"
	AllUnauthenticated = "system:unauthenticated"
	SystemPrivileged   = "system:masters"
)

// Info is who made a request.
type Info struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether u is a member of group.
func (u *Info) InGroup(group string) bool {
	if u == nil {
		return false
	}
	for _, g := range u.Groups {
		if g == group {
			return true
		}
	}
	return false
}

// IsAnonymous reports whether u is the anonymous user: no user at all, the
// name system:anonymous, or a member of system:unauthenticated.
func (u *Info) IsAnonymous() bool {
	return u == nil || u.Name == Anonymous || u.InGroup(AllUnauthenticated)
}
