// Package flowcontrol is kapi's API Priority and Fairness engine (as
// upstream k8s.io/apiserver/pkg/util/flowcontrol, written anew):
//
//   - classification of a request by the FlowSchemas (matching precedence,
//     then name; subjects, resource and non-resource rules) into a priority
//     level and a flow (the schema plus the user or namespace);
//   - the server's seats split among the priority levels by nominal
//     concurrency shares, with lending and borrowing adjusted periodically
//     (allocation.go);
//   - per priority level, fair queuing with shuffle sharding, queue length
//     limits, Reject or Queue, and requests several seats wide
//     (queueset.go);
//   - the apiserver_flowcontrol_* metrics and the debug dumps.
//
// The engine has no I/O: the config controller (package configcontroller)
// feeds it the objects, and the HTTP filter (pkg/server/filters) asks it
// to admit requests.
package flowcontrol
