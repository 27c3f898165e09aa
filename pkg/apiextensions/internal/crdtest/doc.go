// Package crdtest holds the CustomResourceDefinitions and schemas that
// the tests of the apiextensions packages (the server, cel, schema and
// customresource) share: each test breaks or extends a fresh copy.
package crdtest
