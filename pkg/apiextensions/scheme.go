package apiextensions

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// The apiextensions.k8s.io/v1 kinds (with their defaults: conversion
// strategy None, singular and listKind from kind) are added to the shared
// scheme once, before anything can read it concurrently.
func init() {
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme.Scheme))
}
