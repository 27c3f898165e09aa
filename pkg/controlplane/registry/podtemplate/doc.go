// Package podtemplate serves core/v1 podtemplates as kube-apiserver does
// (pkg/registry/core/podtemplate, kubernetes v1.37): the template is
// defaulted (on decode) and validated as a pod spec; its generation
// follows the template.
package podtemplate
