package request

import (
	"net/http/httptest"
	"testing"
)

// The verb of a GET follows upstream's request info
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go, v1.37) and the
// `watch` rule of metav1.ListOptions (apimachinery
// pkg/runtime/conversion.go Convert_Slice_string_To_bool): a collection
// GET is a watch unless ?watch= is absent, "0" or "false" in any case; a
// GET of one object is a get whatever ?watch= says.
func TestResolveWatchVerb(t *testing.T) {
	tests := []struct {
		method, target, want string
	}{
		{"GET", "/api/v1/namespaces/ns/configmaps", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=1", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=TRUE", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=yes", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=on", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=abc", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch", "watch"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=false", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=FALSE", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=False", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=0", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=false&watch=true", "list"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true&watch=false", "watch"},
		{"GET", "/api/v1/configmaps?watch=yes", "watch"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=on", "watch"},
		{"HEAD", "/api/v1/namespaces/ns/configmaps?watch=true", "watch"},
		{"GET", "/api/v1/namespaces?watch=true", "watch"},
		// One object: a get, as upstream.
		{"GET", "/api/v1/namespaces/ns/configmaps/a?watch=true", "get"},
		{"GET", "/api/v1/namespaces/ns?watch=true", "get"},
		{"GET", "/api/v1/namespaces/ns/configmaps/a/status?watch=true", "get"},
		// The legacy /watch/ paths.
		{"GET", "/api/v1/watch/namespaces/ns/configmaps", "watch"},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/a", "watch"},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps?watch=false", "watch"},
		// Other verbs ignore ?watch=.
		{"POST", "/api/v1/namespaces/ns/configmaps?watch=true", "create"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps?watch=true", "deletecollection"},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/a", "delete"},
	}
	r := NewResolver()
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			info, err := r.Resolve(httptest.NewRequest(tt.method, tt.target, nil))
			if err != nil {
				t.Fatal(err)
			}
			if info.Verb != tt.want {
				t.Errorf("got verb %q, want %q", info.Verb, tt.want)
			}
		})
	}
}

// The selectors and the name a request gives the authorizers follow
// upstream's request info (k8s.io/apiserver/pkg/endpoints/request/
// requestinfo.go, v1.37.2): selectors only for list, watch and
// deletecollection, not for the legacy /watch/ paths; a collection GET's
// metadata.name field selector names the object when the whole query
// decodes as ListOptions and the name is a path segment. kube-apiserver
// v1.37.2 sent the same names and selectors to an authorization webhook
// (test/e2e TestAuthorizeWithSelectors).
func TestResolveSelectorsAndName(t *testing.T) {
	tests := []struct {
		method, target             string
		verb, name, pathName       string
		fieldSelector, labelSelect string
	}{
		{"GET", "/api/v1/namespaces/ns/pods?fieldSelector=spec.nodeName%3Dn1&labelSelector=a%3Db", "list", "", "", "spec.nodeName=n1", "a=b"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1&fieldSelector=x%3Dy&fieldSelector=z%3Dw", "watch", "", "", "x=y", ""},
		{"DELETE", "/api/v1/namespaces/ns/pods?labelSelector=a", "deletecollection", "", "", "", "a"},
		{"GET", "/api/v1/watch/namespaces/ns/pods?fieldSelector=x%3Dy&labelSelector=a", "watch", "", "", "", ""},
		{"GET", "/api/v1/namespaces/ns/pods/p?fieldSelector=x%3Dy&labelSelector=a", "get", "p", "p", "", ""},
		{"DELETE", "/api/v1/namespaces/ns/pods/p?labelSelector=a", "delete", "p", "p", "", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc", "list", "c", "", "metadata.name=c", ""},
		{"GET", "/api/v1/configmaps?watch=true&fieldSelector=metadata.name%3D%3Dc", "watch", "c", "", "metadata.name==c", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc&limit=abc", "list", "", "", "metadata.name=c", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3D..", "list", "", "", "metadata.name=..", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name!%3Dc", "list", "", "", "metadata.name!=c", ""},
		{"GET", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da,metadata.name%3Db", "list", "a", "", "metadata.name=a,metadata.name=b", ""},
		{"DELETE", "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dc", "deletecollection", "", "", "metadata.name=c", ""},
		{"GET", "/api/v1/watch/namespaces/ns/configmaps/c", "watch", "c", "c", "", ""},
	}
	r := NewResolver()
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			info, err := r.Resolve(httptest.NewRequest(tt.method, tt.target, nil))
			if err != nil {
				t.Fatal(err)
			}
			if info.Verb != tt.verb || info.Name != tt.name || info.PathName() != tt.pathName ||
				info.FieldSelector != tt.fieldSelector || info.LabelSelector != tt.labelSelect {
				t.Errorf("got verb %q name %q path name %q selectors %q %q, want %q %q %q %q %q", info.Verb, info.Name, info.PathName(),
					info.FieldSelector, info.LabelSelector, tt.verb, tt.name, tt.pathName, tt.fieldSelector, tt.labelSelect)
			}
		})
	}
}
