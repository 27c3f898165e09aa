package cel

import "testing"

func TestCELFormatLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "!format.dns1123Label().validate('my-label-name').hasValue() && format.dns1123Label().validate('My_Label').hasValue()"},
		{rule: "format.dns1123Label().validate('a_b').value() == [\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"]"},
		{rule: "!format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue() && format.dns1123Subdomain().validate('A.b').hasValue()"},
		{rule: "!format.dns1035Label().validate('my-label-name').hasValue() && format.dns1035Label().validate('1abc').hasValue()"},
		{rule: "!format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue() && format.qualifiedName().validate('a/b/c').hasValue()"},
		{rule: "!format.dns1123LabelPrefix().validate('my-label-prefix-').hasValue() && format.dns1123LabelPrefix().validate('-x').hasValue()"},
		{rule: "!format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-').hasValue() && !format.dns1035LabelPrefix().validate('my-label-prefix-').hasValue()"},
		{rule: "!format.labelValue().validate('my-value').hasValue() && format.labelValue().validate('-bad').hasValue()"},
		{rule: "!format.uri().validate('http://example.com').hasValue() && format.uri().validate('x y').value() == ['parse \"x y\": invalid URI for request']"},
		{rule: "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue() && format.uuid().validate('x').value() == ['does not match the UUID format']"},
		{rule: "!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('!').value() == ['invalid base64']"},
		{rule: "!format.date().validate('2021-01-01').hasValue() && format.date().validate('2021-13-01').value() == ['invalid date']"},
		{rule: "!format.datetime().validate('2021-01-01T00:00:00Z').hasValue() && format.datetime().validate('yesterday').value() == ['invalid datetime']"},
		{rule: "format.named('dns1123Label').hasValue() && !format.named('nope').hasValue() && format.named('uuid').value().validate('x').hasValue()"},
		{rule: "self.tags.all(t, format.named('dns1123Label').value().validate(t).hasValue())", spec: map[string]any{"tags": []any{"Bad", "ok"}}, want: "false"},
		{rule: "self.tags.all(t, !format.named('dns1123Label').value().validate(t).hasValue())", spec: map[string]any{"tags": []any{"a", "ok"}}},
		{rule: "!format.dns1123Label().validate(self.labels['k']).hasValue()", spec: map[string]any{"labels": map[string]any{"k": "Not_OK"}}, want: "false"},
	})
}
