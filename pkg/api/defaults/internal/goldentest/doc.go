// Package goldentest runs the golden defaulting corpus of a
// pkg/api/defaults/<group><version> package: each testdata/<case>.in.yaml
// is decoded as the API server decodes it and compared with
// testdata/<case>.want.yaml. It is imported only by tests.
package goldentest
