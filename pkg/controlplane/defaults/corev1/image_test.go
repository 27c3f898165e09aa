package corev1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Expected pull policies follow upstream's SetDefaults_Container with
// parsers.ParseImageName (distribution/reference's ParseNormalizedNamed):
// Always only for the tag "latest", given or implied.
func TestPullPolicyFromImage(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	cases := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"library/nginx", corev1.PullAlways},
		{"docker.io/library/nginx:latest", corev1.PullAlways},
		{"index.docker.io/nginx", corev1.PullAlways},
		{"registry.k8s.io/pause:3.10", corev1.PullIfNotPresent},
		{"localhost/app", corev1.PullAlways},
		{"localhost:5000/app:v1", corev1.PullIfNotPresent},
		{"[::1]:5000/app", corev1.PullAlways},
		{"registry.example.com:5000/team/app", corev1.PullAlways},
		{"nginx@" + digest, corev1.PullIfNotPresent},
		{"nginx:latest@" + digest, corev1.PullAlways},
		{"nginx:1.25@" + digest, corev1.PullIfNotPresent},
		{"nginx:Latest", corev1.PullIfNotPresent},
		// Unparsable references: the error is ignored, IfNotPresent.
		{"", corev1.PullIfNotPresent},
		{"Nginx", corev1.PullIfNotPresent},
		{"nginx@sha256:short", corev1.PullIfNotPresent},
		{"nginx@sha256:" + strings.Repeat("AB", 32), corev1.PullIfNotPresent},
		{"nginx@md5:" + strings.Repeat("ab", 16), corev1.PullIfNotPresent},
		{strings.Repeat("ab", 32), corev1.PullIfNotPresent},
		{"nginx:" + strings.Repeat("t", 129), corev1.PullIfNotPresent},
		{"a/" + strings.Repeat("b", 260), corev1.PullIfNotPresent},
		{"nginx::1", corev1.PullIfNotPresent},
		{"-nginx", corev1.PullIfNotPresent},
		{"my_registry/app", corev1.PullAlways},
		{"foo--bar/baz", corev1.PullAlways},
		{" nginx", corev1.PullIfNotPresent},
	}
	for _, c := range cases {
		ctr := corev1.Container{Image: c.image}
		SetDefaults_Container(&ctr)
		if ctr.ImagePullPolicy != c.want {
			t.Errorf("image %q: got pull policy %s, want %s", c.image, ctr.ImagePullPolicy, c.want)
		}
	}
	// A policy given is kept.
	ctr := corev1.Container{Image: "nginx", ImagePullPolicy: corev1.PullNever}
	SetDefaults_Container(&ctr)
	if ctr.ImagePullPolicy != corev1.PullNever {
		t.Errorf("got %s, want the given Never", ctr.ImagePullPolicy)
	}
}
