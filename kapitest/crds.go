package kapitest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// CRDInstallOptions are the CRDs Start installs once the server is ready,
// as envtest's CRDInstallOptions: Start returns when every version of
// each is served (listed by discovery), or fails.
type CRDInstallOptions struct {
	// Paths are files or directories of CRD manifests (.yaml, .yml,
	// .json; YAML files may hold several documents). Directories are
	// read one level deep, as envtest reads them; documents of other
	// kinds are skipped.
	Paths []string
	// ErrorIfPathMissing makes a path that does not exist an error
	// (otherwise it is skipped).
	ErrorIfPathMissing bool
	// CRDs are CRD objects to install besides those in Paths.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// MaxTime bounds the wait for the CRDs to be served (default 10s).
	MaxTime time.Duration
}

// WithCRDs installs CRDs once the server is ready (see CRDInstallOptions).
// The CRDs are part of the state Reset keeps.
func WithCRDs(opts CRDInstallOptions) Option {
	return func(o *Options) {
		o.CRDInstall.Paths = append(o.CRDInstall.Paths, opts.Paths...)
		o.CRDInstall.CRDs = append(o.CRDInstall.CRDs, opts.CRDs...)
		o.CRDInstall.ErrorIfPathMissing = o.CRDInstall.ErrorIfPathMissing || opts.ErrorIfPathMissing
		if opts.MaxTime > 0 {
			o.CRDInstall.MaxTime = opts.MaxTime
		}
	}
}

// WithCRDPaths installs the CRDs in paths (files or directories); a
// missing path is an error.
func WithCRDPaths(paths ...string) Option {
	return WithCRDs(CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true})
}

// ReadCRDs reads the CRDs in the files and directories of o.Paths.
func ReadCRDs(o CRDInstallOptions) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range o.Paths {
		files, err := manifestFiles(p, o.ErrorIfPathMissing)
		if err != nil {
			return nil, fmt.Errorf("CRD path: %w", err)
		}
		for _, f := range files {
			err := eachDocument(f, func(kind, apiVersion string, doc []byte) error {
				if kind != "CustomResourceDefinition" {
					return nil
				}
				if apiVersion != apiextensionsv1.SchemeGroupVersion.String() {
					return fmt.Errorf("apiVersion %q, want %s", apiVersion, apiextensionsv1.SchemeGroupVersion)
				}
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.UnmarshalStrict(doc, crd); err != nil {
					return err
				}
				out = append(out, crd)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("read CRDs from %s: %w", f, err)
			}
		}
	}
	return out, nil
}

// installCRDs creates (or updates) the CRDs of o and waits until every
// served version of each is listed by discovery.
func (s *Server) installCRDs(o CRDInstallOptions) error {
	crds, err := ReadCRDs(o)
	if err != nil {
		return err
	}
	crds = append(crds, o.CRDs...)
	if len(crds) == 0 {
		return nil
	}
	// The aggregator registers an APIService per served group-version
	// soon after; the start state for Reset waits for them.
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				s.expectedKeys = append(s.expectedKeys, s.storage.root()+"/apiregistration.k8s.io/apiservices/"+v.Name+"."+crd.Spec.Group)
			}
		}
	}
	wait := o.MaxTime
	if wait <= 0 {
		wait = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return InstallCRDs(ctx, apiextensionsclient.NewForConfigOrDie(s.Config), crds)
}

// InstallCRDs creates the CRDs (updating those that exist) and waits until
// every served version of each is listed by discovery, or ctx ends.
func InstallCRDs(ctx context.Context, cs apiextensionsclient.Interface, crds []*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range crds {
		crd = crd.DeepCopy()
		crd.ResourceVersion = ""
		_, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *apiextensionsv1.CustomResourceDefinition
			if cur, err = cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{}); err == nil {
				crd.ResourceVersion = cur.ResourceVersion
				_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	return waitCRDsServed(ctx, cs.Discovery(), crds)
}

func waitCRDsServed(ctx context.Context, dc discovery.DiscoveryInterface, crds []*apiextensionsv1.CustomResourceDefinition) error {
	type gvPlural struct{ gv, plural string }
	var pending []gvPlural
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				pending = append(pending, gvPlural{crd.Spec.Group + "/" + v.Name, crd.Spec.Names.Plural})
			}
		}
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		pending = slices.DeleteFunc(pending, func(p gvPlural) bool {
			list, err := dc.ServerResourcesForGroupVersion(p.gv)
			if err != nil {
				return false
			}
			for _, r := range list.APIResources {
				if r.Name == p.plural {
					return true
				}
			}
			return false
		})
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			names := make([]string, len(pending))
			for i, p := range pending {
				names[i] = p.plural + " in " + p.gv
			}
			return fmt.Errorf("CRDs not served: %s: %w", strings.Join(names, ", "), ctx.Err())
		case <-time.After(wait):
		}
	}
}
