package apiservice

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

func remote(mut func(*apiregistrationv1.APIService)) *apiregistrationv1.APIService {
	svc := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: "wardle.example.com", Version: "v1alpha1",
			Service:              &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api", Port: ptr.To[int32](443)},
			CABundle:             []byte("pem"),
			GroupPriorityMinimum: 1000, VersionPriority: 15,
		},
	}
	if mut != nil {
		mut(svc)
	}
	return svc
}

func local(mut func(*apiregistrationv1.APIService)) *apiregistrationv1.APIService {
	return remote(func(s *apiregistrationv1.APIService) {
		s.Spec.Service = nil
		s.Spec.CABundle = nil
		if mut != nil {
			mut(s)
		}
	})
}

func summarize(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	sort.Strings(out)
	return out
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		svc  *apiregistrationv1.APIService
		want []string
	}{
		{"remote ok", remote(nil), nil},
		{"local ok", local(nil), nil},
		{"legacy v1", local(func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Group, s.Spec.Version = "v1.", "", "v1" }), nil},
		{"insecure ok", remote(func(s *apiregistrationv1.APIService) { s.Spec.CABundle, s.Spec.InsecureSkipTLSVerify = nil, true }), nil},
		{"name mismatch", remote(func(s *apiregistrationv1.APIService) { s.Name = "v1.wardle.example.com" }), []string{"FieldValueInvalid metadata.name"}},
		{"name not a path segment", remote(func(s *apiregistrationv1.APIService) { s.Name = "a/b" }), []string{"FieldValueInvalid metadata.name"}},
		{"empty group not v1", local(func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Group = "v1alpha1.", "" }), []string{"FieldValueRequired spec.group"}},
		{"group not dns", local(func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Group = "v1alpha1.Bad_Group", "Bad_Group" }), []string{"FieldValueInvalid spec.group"}},
		{"version not dns1035", local(func(s *apiregistrationv1.APIService) { s.Name, s.Spec.Version = "1v.wardle.example.com", "1v" }), []string{"FieldValueInvalid spec.version"}},
		{"group priority 0", remote(func(s *apiregistrationv1.APIService) { s.Spec.GroupPriorityMinimum = 0 }), []string{"FieldValueInvalid spec.groupPriorityMinimum"}},
		{"group priority 20001", remote(func(s *apiregistrationv1.APIService) { s.Spec.GroupPriorityMinimum = 20001 }), []string{"FieldValueInvalid spec.groupPriorityMinimum"}},
		{"group priority 20000", remote(func(s *apiregistrationv1.APIService) { s.Spec.GroupPriorityMinimum = 20000 }), nil},
		{"version priority 1001", remote(func(s *apiregistrationv1.APIService) { s.Spec.VersionPriority = 1001 }), []string{"FieldValueInvalid spec.versionPriority"}},
		{"version priority -1", remote(func(s *apiregistrationv1.APIService) { s.Spec.VersionPriority = -1 }), []string{"FieldValueInvalid spec.versionPriority"}},
		{"local caBundle", local(func(s *apiregistrationv1.APIService) { s.Spec.CABundle = []byte("x") }), []string{"FieldValueInvalid spec.caBundle"}},
		{"local insecure", local(func(s *apiregistrationv1.APIService) { s.Spec.InsecureSkipTLSVerify = true }), []string{"FieldValueInvalid spec.insecureSkipTLSVerify"}},
		{"service without name and namespace", remote(func(s *apiregistrationv1.APIService) { s.Spec.Service.Name, s.Spec.Service.Namespace = "", "" }),
			[]string{"FieldValueRequired spec.service.name", "FieldValueRequired spec.service.namespace"}},
		{"port 0", remote(func(s *apiregistrationv1.APIService) { s.Spec.Service.Port = ptr.To[int32](0) }), []string{"FieldValueInvalid spec.service.port"}},
		{"port 65536", remote(func(s *apiregistrationv1.APIService) { s.Spec.Service.Port = ptr.To[int32](65536) }), []string{"FieldValueInvalid spec.service.port"}},
		{"caBundle and insecure", remote(func(s *apiregistrationv1.APIService) { s.Spec.InsecureSkipTLSVerify = true }), []string{"FieldValueInvalid spec.insecureSkipTLSVerify"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(Validate(tt.svc))
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	errs := Validate(remote(func(s *apiregistrationv1.APIService) { s.Name = "v1.wardle.example.com" }))
	if got, want := errs.ToAggregate().Error(), "metadata.name: Invalid value: \"v1.wardle.example.com\": must be `spec.version+\".\"+spec.group`: \"v1alpha1.wardle.example.com\""; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	errs = Validate(remote(func(s *apiregistrationv1.APIService) { s.Spec.Service.Port = ptr.To[int32](0) }))
	if got, want := errs[0].Detail, "port is not valid: must be between 1 and 65535, inclusive"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestValidateStatus(t *testing.T) {
	st := &apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{
		{Type: apiregistrationv1.Available, Status: "True"},
		{Type: "Other", Status: "Maybe"},
	}}
	if got, want := summarize(ValidateStatus(st, field.NewPath("status"))), []string{"FieldValueNotSupported status.conditions[1].status"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestDefaultPort(t *testing.T) {
	svc := remote(func(s *apiregistrationv1.APIService) { s.Spec.Service.Port = nil })
	scheme.Scheme.Default(svc)
	if got := svc.Spec.Service.Port; got == nil || *got != 443 {
		t.Errorf("got port %v, want 443", got)
	}
}

// FuzzValidate feeds arbitrary JSON APIServices (as a client would send
// them) to validation: it must never panic, an object it accepts must
// have a name matching its spec, priorities in range, and a valid port.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"v1.a.b"},"spec":{"group":"a.b","version":"v1","groupPriorityMinimum":1,"versionPriority":1}}`))
	f.Add([]byte(`{"metadata":{"name":"v1."},"spec":{"version":"v1","groupPriorityMinimum":18000,"versionPriority":1}}`))
	f.Add([]byte(`{"metadata":{"name":"v1.x"},"spec":{"group":"x","version":"v1","service":{"namespace":"n","name":"s","port":70000},"insecureSkipTLSVerify":true,"caBundle":"AA==","groupPriorityMinimum":1,"versionPriority":1}}`))
	f.Add([]byte(`{"metadata":{"name":".."},"spec":{"group":".","version":"","service":{}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		svc := &apiregistrationv1.APIService{}
		if err := json.Unmarshal(data, svc); err != nil {
			return
		}
		scheme.Scheme.Default(svc)
		errs := Validate(svc)
		fieldsErrs := ValidateFields(svc)
		if len(errs) == 0 && len(fieldsErrs) > 0 {
			t.Fatalf("ValidateFields found %v but Validate nothing", fieldsErrs)
		}
		if len(errs) > 0 {
			return
		}
		if want := svc.Spec.Version + "." + svc.Spec.Group; svc.Name != want {
			t.Fatalf("accepted name %q, want %q", svc.Name, want)
		}
		if p := svc.Spec.GroupPriorityMinimum; p < 1 || p > 20000 {
			t.Fatalf("accepted groupPriorityMinimum %d", p)
		}
		if p := svc.Spec.VersionPriority; p < 1 || p > 1000 {
			t.Fatalf("accepted versionPriority %d", p)
		}
		if s := svc.Spec.Service; s != nil {
			if *s.Port < 1 || *s.Port > 65535 || s.Name == "" || s.Namespace == "" {
				t.Fatalf("accepted service %+v", s)
			}
			if svc.Spec.InsecureSkipTLSVerify && len(svc.Spec.CABundle) > 0 {
				t.Fatal("accepted insecureSkipTLSVerify with a caBundle")
			}
		} else if len(svc.Spec.CABundle) > 0 || svc.Spec.InsecureSkipTLSVerify {
			t.Fatal("accepted a local APIService with TLS settings")
		}
		if strings.Contains(svc.Name, "/") {
			t.Fatalf("accepted name %q", svc.Name)
		}
	})
}
