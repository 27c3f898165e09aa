package podsecurity

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

// restrictedPod passes every check of every level.
func restrictedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "c", Image: "i",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes: []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func csc(p *corev1.Pod) *corev1.SecurityContext { return p.Spec.Containers[0].SecurityContext }

// TestChecks runs each check on a failing pod: the expected reason and
// detail are upstream's texts, from the ForbiddenReason/ForbiddenDetail of
// kubernetes v1.37 staging/src/k8s.io/pod-security-admission/policy/check_<id>.go
// and the expectations of its check_<id>_test.go.
func TestChecks(t *testing.T) {
	latest := LatestVersion()
	tests := []struct {
		id      string
		mutate  func(p *corev1.Pod)
		version Version
		reason  string
		detail  string
	}{
		{"appArmorProfile", func(p *corev1.Pod) {
			p.Spec.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
		}, latest, "forbidden AppArmor profiles",
			`pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/c="unconfined""`},
		{"appArmorProfile", func(p *corev1.Pod) {
			csc(p).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, latest, "forbidden AppArmor profile", `container "c" must not set AppArmor profile type to "Unconfined"`},
		{"capabilities_baseline", func(p *corev1.Pod) {
			csc(p).Capabilities.Add = []corev1.Capability{"SYS_ADMIN", "CHOWN", "NET_RAW", "SYS_ADMIN"}
		}, latest, "non-default capabilities", `container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add`},
		{"hostNamespaces", func(p *corev1.Pod) { p.Spec.HostNetwork, p.Spec.HostIPC = true, true }, latest,
			"host namespaces", "hostNetwork=true, hostIPC=true"},
		{"hostPathVolumes", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes,
				corev1.Volume{Name: "a", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
				corev1.Volume{Name: "b", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, Version{minor: 10}, "hostPath volumes", `volumes "a", "b"`},
		{"hostPorts", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 81, HostPort: 8081}}
		}, latest, "hostPort", `container "c" uses hostPorts 8080, 8081`},
		{"hostProbesAndHostLifecycle", func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "evil.example"}}}
		}, latest, "probe or lifecycle host", `container "c" uses probe or lifecycle host "evil.example"`},
		{"privileged", func(p *corev1.Pod) { csc(p).Privileged = ptr(true) }, latest,
			"privileged", `container "c" must not set securityContext.privileged=true`},
		{"procMount", func(p *corev1.Pod) { csc(p).ProcMount = ptr(corev1.UnmaskedProcMount) }, latest,
			"procMount", `container "c" must not set securityContext.procMount to "Unmasked"`},
		{"seLinuxOptions", func(p *corev1.Pod) {
			p.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "bad_t", User: "u"}
		}, latest, "seLinuxOptions", `pod set forbidden securityContext.seLinuxOptions: type "bad_t"; user may not be set`},
		{"seLinuxOptions container_engine_t before v1.31", func(p *corev1.Pod) {
			csc(p).SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
		}, Version{minor: 30}, "seLinuxOptions", `container "c" set forbidden securityContext.seLinuxOptions: type "container_engine_t"`},
		{"seccompProfile_baseline", func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}, Version{minor: 20}, "seccompProfile", `pod must not set securityContext.seccompProfile.type to "Unconfined"`},
		{"sysctls", func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.msgmax"}, {Name: "net.ipv4.tcp_rmem"}}
		}, latest, "forbidden sysctls", "kernel.msgmax"},
		{"sysctls (tcp_rmem before v1.32)", func(p *corev1.Pod) {
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.tcp_rmem"}}
		}, Version{minor: 31}, "forbidden sysctls", "net.ipv4.tcp_rmem"},
		{"windowsHostProcess", func(p *corev1.Pod) {
			p.Spec.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}
			csc(p).WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}
		}, latest, "hostProcess", `pod and container "c" must not set securityContext.windowsOptions.hostProcess=true`},
		{"allowPrivilegeEscalation", func(p *corev1.Pod) { csc(p).AllowPrivilegeEscalation = nil }, latest,
			"allowPrivilegeEscalation != false", `container "c" must set securityContext.allowPrivilegeEscalation=false`},
		{"capabilities_restricted", func(p *corev1.Pod) {
			csc(p).Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "CHOWN"}}
		}, latest, "unrestricted capabilities",
			`container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "CHOWN" in securityContext.capabilities.add`},
		{"restrictedVolumes", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes,
				corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
				corev1.Volume{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}})
		}, latest, "restricted volume types", `volumes "h", "n" use restricted volume types "hostPath", "nfs"`},
		{"runAsNonRoot", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsNonRoot = nil }, latest,
			"runAsNonRoot != true", `pod or container "c" must set securityContext.runAsNonRoot=true`},
		{"runAsNonRoot explicit", func(p *corev1.Pod) { csc(p).RunAsNonRoot = ptr(false) }, latest,
			"runAsNonRoot != true", `container "c" must not set securityContext.runAsNonRoot=false`},
		{"runAsUser", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr(int64(0)) }, latest,
			"runAsUser=0", "pod must not set runAsUser=0"},
		{"seccompProfile_restricted", func(p *corev1.Pod) { p.Spec.SecurityContext.SeccompProfile = nil }, latest,
			"seccompProfile", `pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`},
		{"seccompProfile_restricted explicit", func(p *corev1.Pod) {
			csc(p).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, latest, "seccompProfile", `container "c" must not set securityContext.seccompProfile.type to "Unconfined"`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			// Each check runs at its own level.
			id, _, _ := strings.Cut(tt.id, " ")
			i := slices.IndexFunc(checks, func(c check) bool { return c.id == id })
			if i < 0 {
				t.Fatalf("no check %s", id)
			}
			lv := LevelVersion{checks[i].level, tt.version}
			pod := restrictedPod()
			if rs := evaluate(lv, &pod.ObjectMeta, &pod.Spec); len(rs) != 0 {
				t.Fatalf("the restricted pod fails: %v", rs)
			}
			tt.mutate(pod)
			rs := evaluate(lv, &pod.ObjectMeta, &pod.Spec)
			if len(rs) != 1 {
				t.Fatalf("got %d failed checks, want 1: %+v", len(rs), rs)
			}
			if rs[0].reason != tt.reason || rs[0].detail != tt.detail {
				t.Errorf("got\n  %s (%s)\nwant\n  %s (%s)", rs[0].reason, rs[0].detail, tt.reason, tt.detail)
			}
		})
	}
}

// TestLevels checks which level catches what, the restricted overrides
// and the version gates.
func TestLevels(t *testing.T) {
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if rs := evaluate(LevelVersion{LevelBaseline, LatestVersion()}, &bare.ObjectMeta, &bare.Spec); len(rs) != 0 {
		t.Errorf("baseline fails a bare pod: %v", rs)
	}
	// Upstream's message for a bare pod at restricted:latest (its e2e and
	// docs: https://kubernetes.io/docs/tutorials/security/ns-level-pss/).
	rs := evaluate(LevelVersion{LevelRestricted, LatestVersion()}, &bare.ObjectMeta, &bare.Spec)
	want := `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
		`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
		`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if got := message(rs); got != want {
		t.Errorf("restricted message\n got %s\nwant %s", got, want)
	}
	if got, want := reasons(rs), "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"; got != want {
		t.Errorf("reasons %q, want %q", got, want)
	}
	// v1.21 predates capabilities_restricted (v1.22).
	if got := len(evaluate(LevelVersion{LevelRestricted, Version{minor: 21}}, &bare.ObjectMeta, &bare.Spec)); got != 3 {
		t.Errorf("restricted:v1.21 failed %d checks, want 3", got)
	}
	// A hostPath volume is one failure at restricted (restrictedVolumes
	// overrides hostPathVolumes), listed before restricted checks at baseline.
	hp := restrictedPod()
	hp.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	if rs := evaluate(LevelVersion{LevelRestricted, LatestVersion()}, &hp.ObjectMeta, &hp.Spec); len(rs) != 1 || rs[0].reason != "restricted volume types" {
		t.Errorf("restricted hostPath: %+v", rs)
	}
	if rs := evaluate(LevelVersion{LevelBaseline, LatestVersion()}, &hp.ObjectMeta, &hp.Spec); len(rs) != 1 || rs[0].reason != "hostPath volumes" {
		t.Errorf("baseline hostPath: %+v", rs)
	}
	// Windows pods skip the Linux-only restricted checks from v1.25.
	win := bare.DeepCopy()
	win.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	if got := reasons(evaluate(LevelVersion{LevelRestricted, LatestVersion()}, &win.ObjectMeta, &win.Spec)); got != "runAsNonRoot != true" {
		t.Errorf("windows pod: %q", got)
	}
	if got := len(evaluate(LevelVersion{LevelRestricted, Version{minor: 24}}, &win.ObjectMeta, &win.Spec)); got != 4 {
		t.Errorf("windows pod at v1.24: %d failures, want 4", got)
	}
	// From v1.35 user-namespaced pods may run as root (runAsNonRoot and
	// runAsUser skip them) and, at baseline only, set any procMount:
	// restricted's procMount_restricted (v1.35+) overrides the relaxed
	// baseline check and still forbids it. Before v1.35 nothing is relaxed.
	userns := restrictedPod()
	userns.Spec.HostUsers = ptr(false)
	userns.Spec.SecurityContext.RunAsNonRoot = nil
	userns.Spec.SecurityContext.RunAsUser = ptr(int64(0))
	userns.Spec.Containers[0].SecurityContext.ProcMount = ptr(corev1.UnmaskedProcMount)
	for _, tc := range []struct {
		lv   LevelVersion
		want string
	}{
		{LevelVersion{LevelRestricted, LatestVersion()}, "procMount"},
		{LevelVersion{LevelRestricted, Version{minor: 35}}, "procMount"},
		{LevelVersion{LevelBaseline, LatestVersion()}, ""},
		{LevelVersion{LevelBaseline, Version{minor: 35}}, ""},
		{LevelVersion{LevelRestricted, Version{minor: 34}}, "procMount, runAsNonRoot != true, runAsUser=0"},
		{LevelVersion{LevelBaseline, Version{minor: 34}}, "procMount"},
	} {
		if got := reasons(evaluate(tc.lv, &userns.ObjectMeta, &userns.Spec)); got != tc.want {
			t.Errorf("user namespace pod at %s: %q, want %q", tc.lv, got, tc.want)
		}
	}
	// Ephemeral and init containers are checked, init first.
	eph := bare.DeepCopy()
	eph.Spec.InitContainers = []corev1.Container{{Name: "i", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}
	eph.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)}}}}
	if got := message(evaluate(LevelVersion{LevelBaseline, LatestVersion()}, &eph.ObjectMeta, &eph.Spec)); got != `privileged (containers "i", "e" must not set securityContext.privileged=true)` {
		t.Errorf("init/ephemeral: %s", got)
	}
	engine := restrictedPod()
	engine.Spec.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_engine_t"}
	if rs := evaluate(LevelVersion{LevelRestricted, Version{minor: 31}}, &engine.ObjectMeta, &engine.Spec); len(rs) != 0 {
		t.Errorf("container_engine_t at v1.31: %+v", rs)
	}
	if rs := evaluate(LevelVersion{LevelPrivileged, LatestVersion()}, &eph.ObjectMeta, &eph.Spec); rs != nil {
		t.Errorf("privileged level failed checks: %v", rs)
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		err  bool
	}{{"latest", "latest", false}, {"v1.0", "v1.0", false}, {"v1.25", "v1.25", false}, {"v1.99", "v1.99", false},
		{"v1.025", "latest", true}, {"v2.1", "latest", true}, {"1.25", "latest", true}, {"v1.-1", "latest", true}, {"", "latest", true}} {
		v, err := ParseVersion(tt.in)
		if v.String() != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseVersion(%q) = %s, %v", tt.in, v, err)
		}
	}
	pol, errs := policyFromLabels(map[string]string{
		EnforceLevelLabel: "bogus", AuditLevelLabel: "bogus", WarnLevelLabel: "baseline", WarnVersionLabel: "v1.x",
	}, Policy{})
	if len(errs) != 3 || pol.Enforce.Level != LevelRestricted || pol.Audit.Level != LevelPrivileged || pol.Warn.String() != "baseline:latest" {
		t.Errorf("invalid labels: %+v %v", pol, errs)
	}
	if got := errs[0].Error(); got != `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted` {
		t.Errorf("error text: %s", got)
	}
}
