package apiextensions

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// A Webhook conversion strategy is accepted but not honoured yet: the
// client is told so with a warning on create and update.
func TestWebhookConversionWarns(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter},
	}}
	for name, got := range map[string][]string{
		"create": crdStrategy{}.WarningsOnCreate(context.Background(), crd),
		"update": crdStrategy{}.WarningsOnUpdate(context.Background(), crd, crd),
	} {
		if len(got) != 1 || !strings.Contains(got[0], "Webhook conversion is not supported") {
			t.Errorf("%s: got %q", name, got)
		}
	}
	crd.Spec.Conversion.Strategy = apiextensionsv1.NoneConverter
	if got := (crdStrategy{}).WarningsOnCreate(context.Background(), crd); got != nil {
		t.Errorf("strategy None: got %q, want no warning", got)
	}
}
