package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
)

// bootstrapCreator creates the RBAC bootstrap policy's objects with the
// request the loopback client's typed create sends (the same method, path,
// headers, token, user agent and protobuf body), served by the head's
// whole handler chain as every in-process request is, so that
// authentication, audit, priority and fairness, authorization, admission
// and managed fields see the same request. What it leaves out is the
// client: no client-go request building, no goroutine and pipe per
// request, and the response is not decoded unless it is an error (the
// reconciler reads nothing back). With ~140 creates on the path readiness
// waits for, the client side was about a tenth of a start's CPU.
func (c *Config) bootstrapCreator(cfg *rest.Config) (rbac.Creator, error) {
	info, ok := runtime.SerializerInfoForMediaType(clientscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, fmt.Errorf("rbac bootstrap: no protobuf serializer")
	}
	enc := clientscheme.Codecs.EncoderForVersion(info.Serializer, rbacv1.SchemeGroupVersion)
	dec := clientscheme.Codecs.UniversalDeserializer()
	userAgent := cfg.UserAgent
	if userAgent == "" {
		userAgent = rest.DefaultKubernetesUserAgent()
	}
	host, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("rbac bootstrap: loopback host: %w", err)
	}
	t := c.inProcess
	return func(ctx context.Context, obj runtime.Object) error {
		var resource, namespace string
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			resource = "clusterroles"
		case *rbacv1.ClusterRoleBinding:
			resource = "clusterrolebindings"
		case *rbacv1.Role:
			resource, namespace = "roles", o.Namespace
		case *rbacv1.RoleBinding:
			resource, namespace = "rolebindings", o.Namespace
		default:
			return fmt.Errorf("rbac bootstrap: cannot create a %T", obj)
		}
		p := "/apis/" + rbacv1.GroupName + "/" + rbacv1.SchemeGroupVersion.Version
		if namespace != "" {
			p = path.Join(p, "namespaces", namespace)
		}
		p = path.Join(p, resource)
		var body bytes.Buffer
		if err := enc.Encode(obj, &body); err != nil {
			return fmt.Errorf("rbac bootstrap: encode: %w", err)
		}
		u := *host
		u.Path = p
		// Every server of the process creates these objects alike: their
		// managed fields are computed once per process (the stored
		// objects are the same, TestInProcessLoopbackStoresWhatTheNetworkDoes).
		req, err := http.NewRequestWithContext(handlers.WithRepeatedCreate(ctx), http.MethodPost, u.String(), &body)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", info.MediaType)
		req.Header.Set("Accept", info.MediaType+", "+runtime.ContentTypeJSON)
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		status, respBody, err := t.serve(req)
		if err != nil {
			return err
		}
		if status >= 200 && status < 300 {
			return nil
		}
		out, _, err := dec.Decode(respBody, nil, nil)
		if st, ok := out.(*metav1.Status); ok && err == nil {
			return apierrors.FromObject(st)
		}
		return apierrors.NewGenericServerResponse(status, http.MethodPost, rbacv1.Resource(resource), "", string(respBody), 0, false)
	}, nil
}
