package pod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/kubelet"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The connection subresources of pods (upstream's LogREST, ExecREST,
// AttachREST, PortForwardREST and ProxyREST). Each resolves the request
// for a pod into the kubelet (or pod) URL to forward it to, with
// upstream's errors on the way: 404 for a missing pod, 400 for a bad
// container or a pod without a node, 404 for a node that does not exist.

// connecter is what the connection subresources share.
type connecter struct {
	pods    *generic.Store
	kubelet *kubelet.Client
}

func (c *connecter) getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	obj, err := c.pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// Destroy implements rest.Storage: the storage is the pods resource's.
func (*connecter) Destroy() {}

// validateContainer resolves the container a request is for: the only
// one when none is named.
func validateContainer(container string, pod *corev1.Pod) (string, error) {
	if container == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		var names []string
		for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for _, c := range list {
				names = append(names, c.Name)
			}
		}
		for _, c := range pod.Spec.EphemeralContainers {
			names = append(names, c.Name)
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Name == container {
				return container, nil
			}
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == container {
			return container, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
}

// Query parameters, decoded as upstream's url.Values conversions do: a
// boolean is true unless "0" or "false".
func queryBool(q url.Values, name string) bool {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

func queryInt64(q url.Values, name string) (*int64, error) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return nil, nil
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return &n, nil
}

// LogREST serves pods/log: the container's log, streamed from the
// kubelet (204 No Content for a pod not yet scheduled).
type LogREST struct{ connecter }

var _ rest.Connecter = (*LogREST)(nil)

// New implements rest.Storage: pods/log is served as kind Pod.
func (*LogREST) New() runtime.Object { return &corev1.Pod{} }

// ConnectMethods implements rest.Connecter.
func (*LogREST) ConnectMethods() []string { return []string{http.MethodGet} }

var (
	_ rest.GetOptionsConnecter = (*LogREST)(nil)
	_ rest.StorageMetadata     = (*LogREST)(nil)
)

// NewGetOptions implements rest.GetOptionsConnecter: upstream serves
// pods/log as a getter whose options are PodLogOptions.
func (*LogREST) NewGetOptions() runtime.Object { return &corev1.PodLogOptions{} }

// ProducesMIMETypes implements rest.StorageMetadata: logs are plain text.
func (*LogREST) ProducesMIMETypes(string) []string { return []string{"text/plain"} }

// ProducesObject implements rest.StorageMetadata: a log is a string.
func (*LogREST) ProducesObject(string) any { return "" }

func decodeLogOptions(q url.Values) (*corev1.PodLogOptions, error) {
	opts := &corev1.PodLogOptions{
		Container:                    q.Get("container"),
		Follow:                       queryBool(q, "follow"),
		Previous:                     queryBool(q, "previous"),
		Timestamps:                   queryBool(q, "timestamps"),
		InsecureSkipTLSVerifyBackend: queryBool(q, "insecureSkipTLSVerifyBackend"),
	}
	var err error
	if opts.SinceSeconds, err = queryInt64(q, "sinceSeconds"); err != nil {
		return nil, err
	}
	if opts.TailLines, err = queryInt64(q, "tailLines"); err != nil {
		return nil, err
	}
	if opts.LimitBytes, err = queryInt64(q, "limitBytes"); err != nil {
		return nil, err
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		mt := metav1.NewTime(t)
		opts.SinceTime = &mt
	}
	if v, ok := q["stream"]; ok && len(v) > 0 {
		s := v[0]
		opts.Stream = &s
	}
	return opts, nil
}

// validateLogOptions is upstream's ValidatePodLogOptions.
func validateLogOptions(o *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if o.Stream != nil {
		valid := []string{corev1.LogStreamStdout, corev1.LogStreamStderr, corev1.LogStreamAll}
		found := false
		for _, v := range valid {
			found = found || *o.Stream == v
		}
		if !found {
			errs = append(errs, field.NotSupported(field.NewPath("stream"), *o.Stream, valid))
		} else if *o.Stream != corev1.LogStreamAll && o.TailLines != nil {
			errs = append(errs, field.Forbidden(field.NewPath(""), "`tailLines` and specific `stream` are mutually exclusive for now"))
		}
	}
	return errs
}

// Connect implements rest.Connecter.
func (r *LogREST) Connect(ctx context.Context, name string, req *http.Request, fail rest.ErrorWriter) (http.Handler, error) {
	opts, err := decodeLogOptions(req.URL.Query())
	if err != nil {
		return nil, err
	}
	if errs := validateLogOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	pod, err := r.getPod(ctx, name)
	if err != nil {
		return nil, err
	}
	container, err := validateContainer(opts.Container, pod)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" {
		// Upstream's empty location: no content.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }), nil
	}
	loc, err := r.kubelet.Location(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	params := url.Values{}
	if opts.Follow {
		params.Add("follow", "true")
	}
	if opts.Previous {
		params.Add("previous", "true")
	}
	if opts.Timestamps {
		params.Add("timestamps", "true")
	}
	if opts.SinceSeconds != nil {
		params.Add("sinceSeconds", strconv.FormatInt(*opts.SinceSeconds, 10))
	}
	if opts.SinceTime != nil {
		params.Add("sinceTime", opts.SinceTime.Format(time.RFC3339))
	}
	if opts.TailLines != nil {
		params.Add("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.LimitBytes != nil {
		params.Add("limitBytes", strconv.FormatInt(*opts.LimitBytes, 10))
	}
	if opts.Stream != nil {
		params.Add("stream", *opts.Stream)
	}
	loc.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
	loc.RawQuery = params.Encode()
	return &logStreamer{location: loc, transport: r.kubelet.Transport(), follow: opts.Follow, name: name, fail: fail}, nil
}

// logStreamer streams a kubelet's log response to the client (upstream's
// LocationStreamer): text/plain, flushed as it comes when following; a
// kubelet error status is answered with its body as the message.
type logStreamer struct {
	location  *url.URL
	transport *http.Transport
	follow    bool
	name      string
	fail      rest.ErrorWriter
}

func (s *logStreamer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	defer s.transport.CloseIdleConnections()
	out, err := http.NewRequestWithContext(req.Context(), http.MethodGet, s.location.String(), nil)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	resp, err := (&http.Client{Transport: s.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(out)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode > http.StatusPartialContent {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		s.fail(w, req, apierrors.NewGenericServerResponse(resp.StatusCode, "", corev1.Resource("pods/log"), s.name, string(body), 0, false))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if s.follow && flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// streamREST serves pods/exec, attach and portforward: the request is
// forwarded to the kubelet (it must be an upgrade).
type streamREST struct {
	connecter
	kind string
	// path is the kubelet's endpoint ("exec", "attach", "portForward").
	path string
	// withContainer: the endpoint is per container (not portforward).
	withContainer bool
}

// New implements rest.Storage: the options kind of the subresource.
func (r *streamREST) New() runtime.Object {
	switch r.kind {
	case "PodExecOptions":
		return &corev1.PodExecOptions{}
	case "PodAttachOptions":
		return &corev1.PodAttachOptions{}
	}
	return &corev1.PodPortForwardOptions{}
}

// ConnectMethods implements rest.Connecter: GET (WebSocket) and POST
// (SPDY).
func (*streamREST) ConnectMethods() []string { return []string{http.MethodGet, http.MethodPost} }

// Connect implements rest.Connecter.
func (r *streamREST) Connect(ctx context.Context, name string, req *http.Request, fail rest.ErrorWriter) (http.Handler, error) {
	q := req.URL.Query()
	for _, p := range q["ports"] {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	if err := authorizedToCreate(ctx); err != nil {
		return nil, err
	}
	pod, err := r.getPod(ctx, name)
	if err != nil {
		return nil, err
	}
	container := ""
	if r.withContainer {
		if container, err = validateContainer(q.Get("container"), pod); err != nil {
			return nil, err
		}
	}
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	loc, err := r.kubelet.Location(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	params := url.Values{}
	if r.withContainer {
		for _, f := range []string{"stdin", "stdout", "stderr", "tty"} {
			if queryBool(q, f) {
				params.Add(f, "1")
			}
		}
		for _, c := range q["command"] {
			params.Add("command", c)
		}
		loc.Path = fmt.Sprintf("/%s/%s/%s/%s", r.path, pod.Namespace, pod.Name, container)
	} else {
		if ports := q["ports"]; len(ports) > 0 {
			params.Add("port", strings.Join(ports, ","))
		}
		loc.Path = fmt.Sprintf("/%s/%s/%s", r.path, pod.Namespace, pod.Name)
	}
	loc.RawQuery = params.Encode()
	return &kubelet.ProxyHandler{Location: loc, Transport: r.kubelet.Transport(), UpgradeRequired: true, Fail: fail}, nil
}

// ProxyREST serves pods/proxy: requests to the pod's IP
// ("[scheme:]name[:port]" picks the scheme and port; the first container
// port is the default).
type ProxyREST struct{ connecter }

var _ rest.SubpathConnecter = (*ProxyREST)(nil)

// New implements rest.Storage.
func (*ProxyREST) New() runtime.Object { return &corev1.PodProxyOptions{} }

// ConnectSubpath implements rest.SubpathConnecter: pods/{name}/proxy/{path}.
func (*ProxyREST) ConnectSubpath() bool { return true }

// ConnectMethods implements rest.Connecter.
func (*ProxyREST) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
}

// Connect implements rest.Connecter.
func (r *ProxyREST) Connect(ctx context.Context, id string, req *http.Request, fail rest.ErrorWriter) (http.Handler, error) {
	scheme, name, port, ok := kubelet.SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	pod, err := r.getPod(ctx, name)
	if err != nil {
		return nil, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme}
	if loc.Scheme == "" {
		loc.Scheme = "http"
	}
	if port == "" {
		loc.Host = podIP
		if strings.Contains(podIP, ":") {
			loc.Host = "[" + podIP + "]"
		}
	} else {
		loc.Host = net.JoinHostPort(podIP, port)
	}
	loc.Path = kubelet.ProxyPath(req)
	loc.RawQuery = req.URL.RawQuery
	return &kubelet.ProxyHandler{Location: loc, Transport: r.kubelet.Transport(), Fail: fail}, nil
}

// authorizedToCreate makes a GET of exec, attach or portforward (a
// websocket upgrade) also need the create verb, as kube-apiserver v1.37
// does (AuthorizePodWebsocketUpgradeCreatePermission, beta and on since
// v1.35; pkg/registry/core/pod/rest/authorize.go ensureAuthorizedForVerb):
// the request's own attributes with the verb create. A POST was already
// authorized for create. The refusal names the pod with the authorizer's
// reason only, as upstream. A server without authorization checks
// nothing.
func authorizedToCreate(ctx context.Context) error {
	info, ok := request.RequestInfoFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(errors.New("no request info in context"))
	}
	if info.Verb == "create" {
		return nil
	}
	az, ok := request.AuthorizerFrom(ctx)
	if !ok {
		return nil
	}
	attrs, _ := request.AuthorizerAttributes(ctx)
	attrs.Verb = "create"
	d, reason, err := az.Authorize(ctx, attrs)
	if err != nil {
		return err
	}
	if d != authorizer.DecisionAllow {
		return apierrors.NewForbidden(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name, errors.New(reason))
	}
	return nil
}
