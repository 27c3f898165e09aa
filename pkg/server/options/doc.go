// Package options holds the command-line flag groups of kapi, one type per
// concern (serving, run, storage, audit), each with AddFlags and Validate.
// Flag names and defaults follow kube-apiserver where the flag exists there
// (DESIGN.md §7).
package options
