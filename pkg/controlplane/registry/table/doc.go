// Package table renders the core server's objects as meta.k8s.io/v1
// Tables with the columns kubectl shows, as kube-apiserver's printers
// (pkg/printers/internalversion) do: the server always renders the wide
// columns (priority 1 included) and kubectl hides them unless -o wide.
package table
