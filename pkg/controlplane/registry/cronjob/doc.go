// Package cronjob is the storage of batch/v1 CronJobs and their status
// subresource, with upstream's CronJob strategy
// (pkg/registry/batch/cronjob): status is written through /status only,
// the generation bumps on spec changes, and the schedule, time zone and
// job template are validated as upstream.
//
// No CronJob controller runs in kapi: CronJobs create no Jobs (`kubectl
// create job --from=cronjob/x` creates one from the template, client
// side).
package cronjob
