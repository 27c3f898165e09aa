// Package job is the storage of batch/v1 Jobs and their status
// subresource, with upstream's Job strategy (pkg/registry/batch/job):
// on create the server generates the selector and the controller-uid and
// job-name template labels from the Job's uid and name (unless
// spec.manualSelector), status is written through /status only, and
// deleting a Job through batch/v1 orphans its pods by default, as
// upstream keeps for compatibility.
//
// No Job controller runs in kapi: Jobs stay as written (no pods, no
// status) unless a client updates their status.
package job
