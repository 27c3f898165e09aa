package accessreview

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// review is one access check: what the authorizer is asked, and the
// selector parse errors that end up in status.evaluationError.
type review struct {
	attrs authorizer.Attributes
	// selectorErrs are upstream's "... ignored due to parse error" notes.
	selectorErrs []string
}

// subjectFrom is the user a SubjectAccessReviewSpec asks about.
func subjectFrom(spec authorizationv1.SubjectAccessReviewSpec) *user.Info {
	u := &user.Info{Name: spec.User, UID: spec.UID, Groups: slices.Clone(spec.Groups)}
	if spec.Extra != nil {
		u.Extra = make(map[string][]string, len(spec.Extra))
		for k, v := range spec.Extra {
			u.Extra[k] = slices.Clone([]string(v))
		}
	}
	return u
}

// reviewFrom builds the check of u against exactly one of ra and nra
// (validation made sure of that), as upstream's ResourceAttributesFrom:
// an empty version is every version ("*"); the selectors are handed to
// the authorizer with whatever requirements parsed.
func reviewFrom(u *user.Info, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) review {
	if ra == nil {
		return review{attrs: authorizer.Attributes{User: u, Verb: nra.Verb, Path: nra.Path}}
	}
	version := ra.Version
	if version == "" {
		version = "*"
	}
	r := review{attrs: authorizer.Attributes{
		User:            u,
		Verb:            ra.Verb,
		ResourceRequest: true,
		Namespace:       ra.Namespace,
		APIGroup:        ra.Group,
		APIVersion:      version,
		Resource:        ra.Resource,
		Subresource:     ra.Subresource,
		Name:            ra.Name,
	}}
	if s := ra.FieldSelector; s != nil {
		r.attrs.FieldSelector, r.attrs.FieldSelectorErr = fieldRequirements(s)
		if err := r.attrs.FieldSelectorErr; err != nil {
			r.selectorErrs = append(r.selectorErrs, ignoredNote("fieldSelector", len(r.attrs.FieldSelector)))
		}
	}
	if s := ra.LabelSelector; s != nil {
		r.attrs.LabelSelector, r.attrs.LabelSelectorErr = labelRequirements(s)
		if err := r.attrs.LabelSelectorErr; err != nil {
			r.selectorErrs = append(r.selectorErrs, ignoredNote("labelSelector", len(r.attrs.LabelSelector)))
		}
	}
	return r
}

func ignoredNote(selector string, usable int) string {
	if usable > 0 {
		return "spec.resourceAttributes." + selector + " partially ignored due to parse error"
	}
	return "spec.resourceAttributes." + selector + " ignored due to parse error"
}

// status turns the authorizer's answer into a review status.
func (r review) status(d authorizer.Decision, reason string, err error) authorizationv1.SubjectAccessReviewStatus {
	st := authorizationv1.SubjectAccessReviewStatus{
		Allowed: d == authorizer.DecisionAllow,
		Denied:  d == authorizer.DecisionDeny,
		Reason:  reason,
	}
	var notes []string
	if err != nil {
		notes = append(notes, err.Error())
	}
	st.EvaluationError = strings.Join(append(notes, r.selectorErrs...), "; ")
	return st
}

// fieldRequirements is a field selector's requirements as upstream
// interprets them: requirements win over rawSelector; In and NotIn take
// exactly one value (In is =, NotIn !=); other operators are not
// supported. err is non-nil when some part was not usable; the usable
// requirements come with it.
func fieldRequirements(s *authorizationv1.FieldSelectorAttributes) (fields.Requirements, error) {
	if len(s.Requirements) == 0 {
		if s.RawSelector == "" {
			return nil, nil
		}
		sel, err := fields.ParseSelector(s.RawSelector)
		if err != nil {
			return nil, err
		}
		return sel.Requirements(), nil
	}
	var reqs fields.Requirements
	var errs []error
	for _, r := range s.Requirements {
		if len(r.Values) > 1 {
			errs = append(errs, errors.New("fieldSelectors do not yet support multiple values"))
			continue
		}
		var op selection.Operator
		switch r.Operator {
		case metav1.FieldSelectorOpIn:
			op = selection.Equals
		case metav1.FieldSelectorOpNotIn:
			op = selection.NotEquals
		case metav1.FieldSelectorOpExists, metav1.FieldSelectorOpDoesNotExist:
			errs = append(errs, fmt.Errorf("fieldSelectors do not yet support %v", r.Operator))
			continue
		default:
			errs = append(errs, fmt.Errorf("%q is not a valid field selector operator", r.Operator))
			continue
		}
		if len(r.Values) != 1 {
			word := "in"
			if op == selection.NotEquals {
				word = "not in"
			}
			errs = append(errs, fmt.Errorf("fieldSelectors %s must have one value", word))
			continue
		}
		reqs = append(reqs, fields.Requirement{Field: r.Key, Operator: op, Value: r.Values[0]})
	}
	return reqs, utilerrors.NewAggregate(errs)
}

var labelOps = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

// labelRequirements is fieldRequirements for label selectors (every
// operator of a label selector is supported).
func labelRequirements(s *authorizationv1.LabelSelectorAttributes) (labels.Requirements, error) {
	if len(s.Requirements) == 0 {
		if s.RawSelector == "" {
			return nil, nil
		}
		sel, err := labels.Parse(s.RawSelector)
		if err != nil {
			return nil, err
		}
		reqs, _ := sel.Requirements()
		return reqs, nil
	}
	var reqs labels.Requirements
	var errs []error
	for _, r := range s.Requirements {
		op, ok := labelOps[r.Operator]
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not a valid label selector operator", r.Operator))
			continue
		}
		values := r.Values
		if len(values) == 0 {
			values = nil
		}
		req, err := labels.NewRequirement(r.Key, op, values)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reqs = append(reqs, *req)
	}
	return reqs, utilerrors.NewAggregate(errs)
}
