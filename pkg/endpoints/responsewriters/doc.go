// Package responsewriters writes API errors as metav1.Status and plain-text
// errors the way kube-apiserver does (serving.md §D).
package responsewriters
