package handlers

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// Prefixes of the YAML decoder's strict errors, split into one warning per
// line as upstream does.
const (
	yamlShortPrefix = "yaml: unmarshal errors:\n"
	yamlLongPrefix  = "error converting YAML to JSON: yaml: unmarshal errors:\n"
)

// fieldValidation returns the effective directive: Warn when unset.
func fieldValidation(directive string) string {
	if directive == "" {
		return metav1.FieldValidationWarn
	}
	return directive
}

// decodeBody decodes a request body into into (the resource's type) from
// the negotiated input serializer. Under fieldValidation Warn or Strict the
// strict decoder finds unknown and duplicate fields: Warn adds one Warning
// header per problem (`unknown field "spec.foo"`), Strict fails with 400
// `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding
// error: unknown field "spec.foo"`. The body's group-version must be the
// scope's, or one the storage accepts (AcceptsGroupVersion).
//
// A panic while decoding is a 400 (guard). Values no later step can handle
// are refused here too, both of which only a protobuf body can carry: an
// IntOrString of another type than int or string, and an object nested
// deeper than the JSON and YAML decoders allow (400).
func (s *RequestScope) decodeBody(ctx context.Context, in runtime.SerializerInfo, body []byte, into runtime.Object, validation string) (obj runtime.Object, err error) {
	err = guard(s.logger(), "decoding the request body", func() error {
		obj, err = s.decode(ctx, in, body, into, validation)
		return err
	})
	return obj, err
}

func (s *RequestScope) decode(ctx context.Context, in runtime.SerializerInfo, body []byte, into runtime.Object, validation string) (runtime.Object, error) {
	directive := fieldValidation(validation)
	dec := in.Serializer
	if (directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict) && in.StrictSerializer != nil {
		dec = in.StrictSerializer
	}
	defaultGVK := s.Kind
	gv := s.Kind.GroupVersion()
	obj, gvk, err := s.Serializer.DecoderToVersion(dec, gv).Decode(body, &defaultGVK, into)
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case isStrict && obj != nil && directive == metav1.FieldValidationWarn:
			addWarnings(ctx, strictErr.Errors())
		default:
			return nil, s.transformDecodeError(err, into, gvk, body)
		}
	}
	if gvk == nil {
		return nil, apierrors.NewBadRequest("the object provided is unrecognized")
	}
	if objGV := gvk.GroupVersion(); objGV != gv && (s.AcceptsGroupVersion == nil || !s.AcceptsGroupVersion(objGV)) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", objGV, gv))
	}
	if errs := checkIntOrStrings(obj); len(errs) > 0 {
		return nil, s.transformDecodeError(errs.ToAggregate(), into, gvk, body)
	}
	if err := checkNestingDepth(obj); err != nil {
		return nil, s.transformDecodeError(err, into, gvk, body)
	}
	if err := s.checkConversion(obj); err != nil {
		return nil, s.transformDecodeError(err, into, gvk, body)
	}
	audit.LogRequestObject(ctx, obj, gv, s.Resource, s.Subresource, s.Serializer)
	return obj, nil
}

// checkConversion returns the error upstream's conversion of obj to its
// internal version would (nil: none, or no such conversion).
func (s *RequestScope) checkConversion(obj runtime.Object) error {
	if s.CheckConversion == nil {
		return nil
	}
	return s.CheckConversion(obj)
}

// addWarnings adds one Warning header per strict decoding problem.
func addWarnings(ctx context.Context, errs []error) {
	for _, e := range errs {
		for _, w := range splitYAMLWarnings(e.Error()) {
			warning.AddWarning(ctx, w)
		}
	}
}

func splitYAMLWarnings(msg string) []string {
	var rest string
	switch {
	case strings.HasPrefix(msg, yamlShortPrefix):
		rest = strings.TrimPrefix(msg, yamlShortPrefix)
	case strings.HasPrefix(msg, yamlLongPrefix):
		rest = strings.TrimPrefix(msg, yamlLongPrefix)
	default:
		return []string{msg}
	}
	lines := strings.Split(rest, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return lines
}

// transformDecodeError is upstream's 400 for an undecodable body.
func (s *RequestScope) transformDecodeError(baseErr error, into runtime.Object, gvk *schema.GroupVersionKind, body []byte) error {
	kind := s.Kind.Kind
	if kinds, _, err := s.Typer.ObjectKinds(into); err == nil && len(kinds) > 0 {
		kind = kinds[0].Kind
	}
	if gvk != nil && gvk.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, kind, baseErr))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, baseErr, summarizeData(body, 30)))
}

func summarizeData(data []byte, maxLength int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > maxLength {
			return string(data[:maxLength]) + " ..."
		}
		return string(data)
	default:
		if len(data) > maxLength {
			return hex.EncodeToString(data[:maxLength]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}

// managerOrUserAgent is the field manager of a write: the fieldManager
// parameter, else the User-Agent up to its first "/", printable runes only,
// at most 128 bytes.
func managerOrUserAgent(manager string, req *http.Request) string {
	if manager != "" {
		return manager
	}
	ua, _, _ := strings.Cut(req.UserAgent(), "/")
	var b strings.Builder
	for _, r := range ua {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+len(string(r)) > 128 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
