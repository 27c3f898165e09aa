package apiextensions

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/apiextensions/cel"
	"github.com/kapi-dev/kapi/pkg/apiextensions/customresource"
	structuralschema "github.com/kapi-dev/kapi/pkg/apiextensions/schema"
)

// printerColumnTypes and printerColumnFormats are what a printer column
// may declare (upstream's lists).
var (
	printerColumnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	printerColumnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// allowedAtStatusRoot are the root schema fields allowed when a version has
// the status subresource (upstream's list, by JSON name).
var allowedAtStatusRoot = map[string]bool{
	"description": true, "type": true, "format": true, "title": true, "maximum": true,
	"exclusiveMaximum": true, "minimum": true, "exclusiveMinimum": true, "maxLength": true,
	"minLength": true, "pattern": true, "maxItems": true, "minItems": true, "uniqueItems": true,
	"multipleOf": true, "required": true, "items": true, "properties": true, "externalDocs": true,
	"example": true, "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": true,
}

// validateCRD validates a CRD on create (metadata is the store's, but for
// the name rule, which needs the spec).
func validateCRD(crd *apiextensionsv1.CustomResourceDefinition, m *cel.Metrics) field.ErrorList {
	errs := append(validateCRDCommon(crd), structuralschema.ValidateSchemas(crd, nil)...)
	return append(errs, validateCELRules(crd, nil, m)...)
}

// validateCRDCommon is what create and update both check in full.
func validateCRDCommon(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	var errs field.ErrorList
	if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	errs = append(errs, validateSpec(&crd.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateStatus(&crd.Status, field.NewPath("status"))...)
	errs = append(errs, validateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	return errs
}

// validateCRDUpdate validates an update: everything validateCRD checks
// (the schema and rule checks only on versions whose schema changed),
// group and names.plural immutable, scope and names.kind immutable once
// the CRD is established.
func validateCRDUpdate(crd, old *apiextensionsv1.CustomResourceDefinition, m *cel.Metrics) field.ErrorList {
	errs := append(validateCRDCommon(crd), structuralschema.ValidateSchemas(crd, old)...)
	errs = append(errs, validateCELRules(crd, old, m)...)
	spec := field.NewPath("spec")
	if isConditionTrue(old, apiextensionsv1.Established) {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Scope, old.Spec.Scope, spec.Child("scope"))...)
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Names.Kind, old.Spec.Names.Kind, spec.Child("names", "kind"))...)
	}
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Group, old.Spec.Group, spec.Child("group"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(crd.Spec.Names.Plural, old.Spec.Names.Plural, spec.Child("names", "plural"))...)
	return errs
}

// validateCELRules compiles the rules of every version's schema as the
// CRD validation does (types, static cost, oldSelf placement). On update
// (old not nil) a version whose schema did not change is not checked
// again, as by structuralschema.ValidateSchemas: CRDs stored before these
// checks keep working (their rules that do not compile fail the values
// they check). Nor are the rules of a version whose schema fails the
// schema checks (structuralschema.RulesCheckable).
//
// m (nil: none) observes a compilation per schema node with rules, as
// upstream's CRD validation, which compiles the rules of unchanged
// schemas too: with m, those are compiled for it and their errors
// dropped.
func validateCELRules(crd, old *apiextensionsv1.CustomResourceDefinition, m *cel.Metrics) field.ErrorList {
	var errs field.ErrorList
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		p, report := structuralschema.SchemaPath(&crd.Spec, i)
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || !report || !structuralschema.RulesCheckable(crd, old, i) {
			continue
		}
		unchanged := old != nil && structuralschema.Unchanged(v, old)
		if unchanged && m == nil {
			continue
		}
		_, celErrs := cel.NewValidatorWithOptions(v.Schema.OpenAPIV3Schema, p, cel.Options{Metrics: m})
		if !unchanged {
			errs = append(errs, celErrs...)
			if len(celErrs) == 0 {
				errs = append(errs, validateCELDefaults(v.Schema.OpenAPIV3Schema, p)...)
			}
		}
	}
	return errs
}

// validateCELDefaults checks every default below s (at p) against the
// rules of its schema node and of the nodes below it, as upstream's CRD
// validation does once the defaults passed the schema checks (which
// RulesCheckable has made sure of). kapi accepted a default its own
// rules refuse before session 25 (the reference: "properties[a].default:
// Invalid value: 7: a must be under 5").
func validateCELDefaults(s *apiextensionsv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Default != nil {
		var val any
		if err := utiljson.Unmarshal(s.Default.Raw, &val); err == nil {
			// Compile errors are validateCELRules' to report.
			if v, _ := cel.NewValidator(s, p); v != nil {
				errs = append(errs, v.ValidateDefault(p.Child("default"), val)...)
			}
		}
	}
	// Defaults are not allowed under additionalProperties.
	if items := structuralschema.Items(s); items != nil {
		errs = append(errs, validateCELDefaults(items, p.Child("items"))...)
	}
	for k, prop := range s.Properties {
		errs = append(errs, validateCELDefaults(&prop, p.Child("properties").Key(k))...)
	}
	return errs
}

// validateStatusUpdate validates a /status update: the accepted names.
func validateStatusUpdate(crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return validateStatus(&crd.Status, field.NewPath("status"))
}

func validateSpec(spec *apiextensionsv1.CustomResourceDefinitionSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(p.Child("group"), ""))
	case len(utilvalidation.IsDNS1123Subdomain(spec.Group)) > 0:
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, strings.Join(utilvalidation.IsDNS1123Subdomain(spec.Group), ",")))
	case !strings.Contains(spec.Group, "."):
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, "should be a domain with at least one dot"))
	}

	scopes := []string{string(apiextensionsv1.ClusterScoped), string(apiextensionsv1.NamespaceScoped)}
	switch {
	case spec.Scope == "":
		errs = append(errs, field.Required(p.Child("scope"), ""))
	case !slices.Contains(scopes, string(spec.Scope)):
		errs = append(errs, field.NotSupported(p.Child("scope"), spec.Scope, scopes))
	}

	storage := 0
	seen := map[string]bool{}
	unique := true
	for i := range spec.Versions {
		v := &spec.Versions[i]
		vp := p.Child("versions").Index(i)
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := utilvalidation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		errs = append(errs, validateVersion(spec, i, vp)...)
	}
	if !unique {
		errs = append(errs, field.Invalid(p.Child("versions"), internalVersions(spec), "must contain unique version names"))
	}
	if storage != 1 {
		// No versions at all is this error too (upstream: "Invalid value:
		// null"), not a Required one.
		errs = append(errs, field.Invalid(p.Child("versions"), internalVersions(spec), "must have exactly one version marked as storage version"))
	}

	np := p.Child("names")
	if spec.Names.Plural == "" {
		errs = append(errs, field.Required(np.Child("plural"), ""))
	}
	if spec.Names.Singular == "" {
		errs = append(errs, field.Required(np.Child("singular"), ""))
	}
	if spec.Names.Kind == "" {
		errs = append(errs, field.Required(np.Child("kind"), ""))
	}
	if spec.Names.ListKind == "" {
		errs = append(errs, field.Required(np.Child("listKind"), ""))
	}
	errs = append(errs, validateNames(&spec.Names, np)...)
	errs = append(errs, validateConversion(spec.Conversion, spec.PreserveUnknownFields, p.Child("conversion"))...)
	return errs
}

// internalVersions is spec.versions as upstream's validation holds them:
// the internal CustomResourceDefinitionVersions of the converted spec, with
// what every version has alike (schema, subresources, printer columns,
// selectable fields) moved up to the spec, printed with Go field names
// (kube-apiserver v1.37.2 answers [{"Name":"v1","Served":true,...,
// "Schema":null,...}]).
func internalVersions(spec *apiextensionsv1.CustomResourceDefinitionSpec) any {
	var out apiextensions.CustomResourceDefinitionSpec
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec(spec.DeepCopy(), &out, nil); err != nil {
		return spec.Versions
	}
	return out.Versions
}

// validateVersion validates version i of spec at p. The schema, the
// subresources, the printer columns and the selectable fields that every
// version has alike are reported once, at their path in spec (upstream
// validates its internal version, into which it moves them then; see
// structuralschema.SchemaPath).
func validateVersion(spec *apiextensionsv1.CustomResourceDefinitionSpec, i int, p *field.Path) field.ErrorList {
	v := &spec.Versions[i]
	var errs field.ErrorList
	if !v.Deprecated && v.DeprecationWarning != nil {
		errs = append(errs, field.Invalid(p.Child("deprecationWarning"), *v.DeprecationWarning, "can only be set for deprecated versions"))
	}
	at := func(f func(*apiextensionsv1.CustomResourceDefinitionVersion) any, name ...string) (*field.Path, bool) {
		if structuralschema.VersionsAgree(spec, f) {
			return field.NewPath("spec").Child(name[0], name[1:]...), i == 0
		}
		return p.Child(name[0], name[1:]...), true
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		errs = append(errs, field.Required(p.Child("schema", "openAPIV3Schema"), ""))
	} else if sp, report := structuralschema.SchemaPath(spec, i); report {
		errs = append(errs, validateRootSchema(v.Schema.OpenAPIV3Schema, v.Subresources != nil && v.Subresources.Status != nil, sp)...)
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		if sp, report := at(func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.Subresources }, "subresources", "scale"); report {
			errs = append(errs, validateScale(v.Subresources.Scale, sp)...)
		}
	}
	if cp, report := at(func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.AdditionalPrinterColumns }, "additionalPrinterColumns"); report {
		for j := range v.AdditionalPrinterColumns {
			errs = append(errs, validateColumn(&v.AdditionalPrinterColumns[j], cp.Index(j))...)
		}
	}
	if fp, report := at(func(v *apiextensionsv1.CustomResourceDefinitionVersion) any { return v.SelectableFields }, "selectableFields"); report {
		errs = append(errs, customresource.ValidateSelectableFields(v, fp)...)
	}
	return errs
}

// validateRootSchema checks the structural rules of the root of a schema
// (the full structural-schema validation of every level is not done).
func validateRootSchema(s *apiextensionsv1.JSONSchemaProps, statusEnabled bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case s.Type == "" && !s.XIntOrString && (s.XPreserveUnknownFields == nil || !*s.XPreserveUnknownFields):
		errs = append(errs, field.Required(p.Child("type"), "must not be empty at the root"))
	case s.Type != "" && s.Type != "object":
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
	}
	if s.Nullable {
		errs = append(errs, field.Forbidden(p.Child("nullable"), "nullable cannot be true at the root"))
	}
	if statusEnabled {
		for _, f := range setSchemaFields(s) {
			if !allowedAtStatusRoot[f] {
				errs = append(errs, field.Invalid(p, f, fmt.Sprintf("only %s fields are allowed at the root of the schema if the status subresource is enabled", allowedAtStatusRootList())))
				break
			}
		}
	}
	if md, ok := s.Properties["metadata"]; ok {
		mp := p.Child("properties").Key("metadata")
		if md.Type != "object" {
			errs = append(errs, field.Invalid(mp.Child("type"), md.Type, "must be object"))
		}
		for name := range md.Properties {
			if name != "name" && name != "generateName" {
				errs = append(errs, field.Forbidden(mp, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
				break
			}
		}
	}
	for _, name := range []string{"kind", "apiVersion"} {
		if f, ok := s.Properties[name]; ok && f.Type != "string" {
			errs = append(errs, field.Invalid(p.Child("properties").Key(name).Child("type"), f.Type, "must be string"))
		}
	}
	return errs
}

// setSchemaFields lists the JSON names of the fields s sets.
func setSchemaFields(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if v.Field(i).IsZero() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

func allowedAtStatusRootList() string {
	names := make([]string, 0, len(allowedAtStatusRoot))
	for n := range allowedAtStatusRoot {
		names = append(names, n)
	}
	slices.Sort(names)
	return "[" + strings.Join(names, " ") + "]"
}

func validateScale(s *apiextensionsv1.CustomResourceSubresourceScale, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(path string, fp *field.Path, prefixes ...string) {
		if path == "" {
			errs = append(errs, field.Required(fp, ""))
			return
		}
		if e := validateSimpleJSONPath(path, fp); len(e) > 0 {
			errs = append(errs, e...)
			return
		}
		for _, pre := range prefixes {
			if strings.HasPrefix(path, pre) {
				return
			}
		}
		under := strings.Join(trimDots(prefixes), " or ")
		errs = append(errs, field.Invalid(fp, path, "should be a json path under "+under))
	}
	check(s.SpecReplicasPath, p.Child("specReplicasPath"), ".spec.")
	check(s.StatusReplicasPath, p.Child("statusReplicasPath"), ".status.")
	if s.LabelSelectorPath != nil && *s.LabelSelectorPath != "" {
		check(*s.LabelSelectorPath, p.Child("labelSelectorPath"), ".spec.", ".status.")
	}
	return errs
}

func trimDots(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.TrimSuffix(s, ".")
	}
	return out
}

func validateSimpleJSONPath(s string, p *field.Path) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Invalid(p, s, "must not be empty")}
	case s[0] != '.':
		return field.ErrorList{field.Invalid(p, s, "must be a simple json path starting with .")}
	}
	return nil
}

func validateColumn(c *apiextensionsv1.CustomResourceColumnDefinition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	types := strings.Join(printerColumnTypes, ",")
	switch {
	case c.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must be one of "+types))
	case !slices.Contains(printerColumnTypes, c.Type):
		errs = append(errs, field.Invalid(p.Child("type"), c.Type, "must be one of "+types))
	}
	if c.Format != "" && !slices.Contains(printerColumnFormats, c.Format) {
		errs = append(errs, field.Invalid(p.Child("format"), c.Format, "must be one of "+strings.Join(printerColumnFormats, ",")))
	}
	if c.JSONPath == "" {
		errs = append(errs, field.Required(p.Child("JSONPath"), ""))
	} else {
		errs = append(errs, validateSimpleJSONPath(c.JSONPath, p.Child("JSONPath"))...)
	}
	return errs
}

// validateNames checks the names of spec.names or status.acceptedNames.
func validateNames(n *apiextensionsv1.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(value string, fp *field.Path, lower bool) {
		v := value
		if lower {
			v = strings.ToLower(v)
		}
		if value == "" {
			return
		}
		if msgs := utilvalidation.IsDNS1035Label(v); len(msgs) > 0 {
			msg := strings.Join(msgs, ",")
			if lower {
				msg = "may have mixed case, but should otherwise match: " + msg
			}
			errs = append(errs, field.Invalid(fp, value, msg))
		}
	}
	label(n.Plural, p.Child("plural"), false)
	label(n.Singular, p.Child("singular"), false)
	label(n.Kind, p.Child("kind"), true)
	label(n.ListKind, p.Child("listKind"), true)
	for i, s := range n.ShortNames {
		if msgs := utilvalidation.IsDNS1035Label(s); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("shortNames").Index(i), s, strings.Join(msgs, ",")))
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, c := range n.Categories {
		if msgs := utilvalidation.IsDNS1035Label(c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("categories").Index(i), c, strings.Join(msgs, ",")))
		}
	}
	return errs
}

func validateConversion(c *apiextensionsv1.CustomResourceConversion, preserveUnknown bool, p *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	strategies := []string{string(apiextensionsv1.NoneConverter), string(apiextensionsv1.WebhookConverter)}
	switch {
	case c.Strategy == "":
		errs = append(errs, field.Required(p.Child("strategy"), ""))
	case !slices.Contains(strategies, string(c.Strategy)):
		errs = append(errs, field.NotSupported(p.Child("strategy"), c.Strategy, strategies))
	case c.Strategy == apiextensionsv1.WebhookConverter:
		if c.Webhook == nil {
			errs = append(errs, field.Required(p.Child("webhook"), "should be defined when strategy is set to Webhook"))
		}
		if preserveUnknown {
			errs = append(errs, field.Invalid(p.Child("strategy"), c.Strategy, "must be None if spec.preserveUnknownFields is true"))
		}
	case c.Webhook != nil:
		errs = append(errs, field.Forbidden(p.Child("webhook"), "should not be set when strategy is not set to Webhook"))
	}
	return errs
}

func validateStatus(s *apiextensionsv1.CustomResourceDefinitionStatus, p *field.Path) field.ErrorList {
	return validateNames(&s.AcceptedNames, p.Child("acceptedNames"))
}

// validateStoredVersions: at least one, the storage version among them,
// and none that is no longer in spec.versions.
func validateStoredVersions(stored []string, versions []apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path) field.ErrorList {
	if len(stored) == 0 {
		return field.ErrorList{field.Invalid(p, stored, "must have at least one stored version")}
	}
	var errs field.ErrorList
	index := map[string]int{}
	for i, v := range stored {
		index[v] = i
	}
	for _, v := range versions {
		_, ok := index[v.Name]
		if v.Storage && !ok {
			errs = append(errs, field.Invalid(p, stored, "must have the storage version "+v.Name))
		}
		delete(index, v.Name)
	}
	for i, v := range stored {
		if _, missing := index[v]; missing {
			errs = append(errs, field.Invalid(p.Index(i), v, fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)))
		}
	}
	return errs
}
