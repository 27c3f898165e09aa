// Package serviceaccount is the ServiceAccount admission plugin, as
// upstream's plugin/pkg/admission/serviceaccount (v1.37): a pod without a
// service account gets "default"; a pod whose service account does not
// exist is refused; unless the pod or its service account opts out, every
// container mounts the projected kube-api-access-<suffix> volume (bound
// token, kube-root-ca.crt, namespace) at
// /var/run/secrets/kubernetes.io/serviceaccount; the service account's
// imagePullSecrets are copied to a pod that has none; and when the service
// account is annotated kubernetes.io/enforce-mountable-secrets=true, the pod
// may only reference the secrets it lists. Mirror pods may reference no
// service account, secret or token projection.
package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "ServiceAccount"

// Upstream's constants (plugin/pkg/admission/serviceaccount,
// pkg/serviceaccount).
const (
	DefaultServiceAccountName         = "default"
	VolumeNamePrefix                  = "kube-api-access-"
	DefaultAPITokenMountPath          = "/var/run/secrets/kubernetes.io/serviceaccount"
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	// TokenExpirationSeconds is the projected token's lifetime:
	// WarnOnlyBoundTokenExpirationSeconds (1h7s), which kubelets see as
	// "legacy" and refresh hourly.
	TokenExpirationSeconds int64 = 3607
	// RootCAConfigMap is the configmap holding the cluster CA.
	RootCAConfigMap = "kube-root-ca.crt"
)

// Getter reads objects of a namespace.
type Getter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// Plugin is the ServiceAccount admission plugin.
type Plugin struct {
	accounts Getter
	// MountToken mounts the API token volume (upstream:
	// MountServiceAccountToken, true).
	MountToken bool
	// LimitSecretReferences enforces mountable secrets for every service
	// account (upstream: false; the annotation turns it on per account).
	LimitSecretReferences bool
	// Retry is how long to wait between lookups of the default service
	// account, which its controller may not have created yet (upstream:
	// 100-200ms, 10 attempts). Zero means upstream's.
	Retry func() time.Duration
	// generateName makes the token volume's name.
	generateName func(base string) string
}

// New returns the plugin reading service accounts through accounts.
func New(accounts Getter) *Plugin {
	return &Plugin{
		accounts:     accounts,
		MountToken:   true,
		generateName: func(base string) string { return base + utilrand.String(5) },
	}
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates and updates (ephemeral containers).
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || (a.Subresource != "" && a.Subresource != "ephemeralcontainers") {
		return nil, false
	}
	pod, ok := a.Object.(*corev1.Pod)
	return pod, ok
}

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// Admit sets the service account, the token volume and the pull secrets
// of new pods.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok || a.Operation != admission.Create || isMirror(pod) {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		// Both, as upstream's plugin: admission webhooks after this one
		// see serviceAccount set too.
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // the deprecated alias is kept in step, as upstream
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if p.MountToken && automount(sa, pod) {
		p.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	return nil
}

// Validate refuses pods without an existing service account, mirror pods
// that reference accounts or secrets, and references to secrets the
// account does not allow when it enforces mountable secrets.
// ReadsObjects implements admission.ObjectReader: only pods are checked
// (podOf).
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	return a.Resource.Group == "" && a.Resource.Resource == "pods" && (a.Subresource == "" || a.Subresource == "ephemeralcontainers")
}

func (p *Plugin) Validate(ctx context.Context, a admission.Attributes) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if a.Operation == admission.Update && a.Subresource == "ephemeralcontainers" {
		return p.validateEphemeral(ctx, a, pod)
	}
	if a.Operation != admission.Create {
		return nil
	}
	if isMirror(pod) {
		return validateMirror(a, pod)
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if p.enforceMountable(sa) {
		if err := limitSecretReferences(sa, pod); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

func validateMirror(a admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	if len(secretNames(pod)) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
			}
		}
	}
	return nil
}

// validateEphemeral checks the secrets ephemeral containers reference.
func (p *Plugin) validateEphemeral(ctx context.Context, a admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		return nil
	}
	sa, err := p.serviceAccount(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if !p.enforceMountable(sa) {
		return nil
	}
	allowed := mountable(sa)
	for _, c := range pod.Spec.EphemeralContainers {
		for _, env := range c.Env {
			if env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil && !allowed[env.ValueFrom.SecretKeyRef.Name] {
				return admission.NewForbidden(a, fmt.Errorf("ephemeral container %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", c.Name, env.Name, env.ValueFrom.SecretKeyRef.Name, sa.Name))
			}
		}
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil && !allowed[from.SecretRef.Name] {
				return admission.NewForbidden(a, fmt.Errorf("ephemeral container %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", c.Name, from.SecretRef.Name, sa.Name))
			}
		}
	}
	return nil
}

func (p *Plugin) enforceMountable(sa *corev1.ServiceAccount) bool {
	if p.LimitSecretReferences {
		return true
	}
	v, ok := sa.Annotations[EnforceMountableSecretsAnnotation]
	if !ok {
		return false
	}
	b, _ := strconv.ParseBool(v)
	return b
}

func mountable(sa *corev1.ServiceAccount) map[string]bool {
	m := make(map[string]bool, len(sa.Secrets))
	for _, s := range sa.Secrets {
		m[s.Name] = true
	}
	return m
}

func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	allowed := mountable(sa)
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !allowed[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	check := func(what string, containers []corev1.Container) error {
		for _, c := range containers {
			for _, env := range c.Env {
				if env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil && !allowed[env.ValueFrom.SecretKeyRef.Name] {
					return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, c.Name, env.Name, env.ValueFrom.SecretKeyRef.Name, sa.Name)
				}
			}
			for _, from := range c.EnvFrom {
				if from.SecretRef != nil && !allowed[from.SecretRef.Name] {
					return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, c.Name, from.SecretRef.Name, sa.Name)
				}
			}
		}
		return nil
	}
	if err := check("init container", pod.Spec.InitContainers); err != nil {
		return err
	}
	if err := check("container", pod.Spec.Containers); err != nil {
		return err
	}
	pull := make(map[string]bool, len(sa.ImagePullSecrets))
	for _, s := range sa.ImagePullSecrets {
		pull[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pull[ref.Name] {
			return fmt.Errorf(`imagePullSecrets[%d].name="%s" is not allowed because service account %s does not reference that imagePullSecret`, i, ref.Name, sa.Name)
		}
	}
	return nil
}

// secretNames lists the secrets a pod references (volumes, projections,
// env, envFrom, pull secrets) — enough to tell whether there are any.
func secretNames(pod *corev1.Pod) []string {
	var out []string
	for _, r := range pod.Spec.ImagePullSecrets {
		out = append(out, r.Name)
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			out = append(out, v.Secret.SecretName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					out = append(out, s.Secret.Name)
				}
			}
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			out = append(out, v.CephFS.SecretRef.Name)
		case v.Cinder != nil && v.Cinder.SecretRef != nil:
			out = append(out, v.Cinder.SecretRef.Name)
		case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
			out = append(out, v.FlexVolume.SecretRef.Name)
		case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
			out = append(out, v.ISCSI.SecretRef.Name)
		case v.RBD != nil && v.RBD.SecretRef != nil:
			out = append(out, v.RBD.SecretRef.Name)
		case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
			out = append(out, v.ScaleIO.SecretRef.Name)
		case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
			out = append(out, v.StorageOS.SecretRef.Name)
		case v.AzureFile != nil:
			out = append(out, v.AzureFile.SecretName)
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			out = append(out, v.CSI.NodePublishSecretRef.Name)
		}
	}
	each := func(env []corev1.EnvVar, from []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, f := range from {
			if f.SecretRef != nil {
				out = append(out, f.SecretRef.Name)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		each(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.Containers {
		each(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		each(c.Env, c.EnvFrom)
	}
	return out
}

func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken mounts the kube-api-access volume read-only at the token path
// in every container that has nothing mounted there, adding the volume
// (reusing an existing kube-api-access-* one) if any container needs it.
func (p *Plugin) mountToken(pod *corev1.Pod) {
	volume, has := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix) {
			volume, has = v.Name, true
			break
		}
	}
	if volume == "" {
		volume = p.generateName(VolumeNamePrefix)
	}
	mount := corev1.VolumeMount{Name: volume, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needed := false
	add := func(cs []corev1.Container) {
		for i := range cs {
			mounted := false
			for _, m := range cs[i].VolumeMounts {
				if m.MountPath == DefaultAPITokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	if !has && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name:         volume,
			VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()},
		})
	}
}

// TokenVolumeSource is the projected volume of the API token, as
// upstream's TokenVolumeSource (defaultMode 0644 set explicitly).
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := corev1.ProjectedVolumeSourceDefaultMode
	exp := TokenExpirationSeconds
	return &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}

// serviceAccount reads a service account. The default one is looked up
// up to 10 times (100-200ms apart), since its controller creates it just
// after the namespace, as upstream does.
func (p *Plugin) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	if p.accounts == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = 10
	}
	wait := time.Duration(100+rand.IntN(100)) * time.Millisecond
	if p.Retry != nil {
		wait = p.Retry()
	}
	for i := 0; i < attempts; i++ {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		obj, err := p.accounts.Get(ctx, namespace, name)
		if err == nil {
			sa, ok := obj.(*corev1.ServiceAccount)
			if !ok {
				return nil, fmt.Errorf("serviceaccount: read a %T", obj)
			}
			return sa, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
}
