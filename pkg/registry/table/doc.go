// Package table renders objects as meta.k8s.io/v1 Tables with the
// columns kubectl shows, as kube-apiserver's printers
// (pkg/printers/internalversion) do: a [Convertor] per kind, the Name and
// Age columns every kind shares, and kubectl's age format. The server
// always renders the wide columns (priority 1 included) and kubectl hides
// them unless -o wide. Any server's resources use it (built-in ones and
// the aggregator's APIServices).
package table
