// Package nsloop is the work loop shared by the controllers that keep one
// named object in every namespace (the serviceaccount controller and the
// root CA publisher): a rate-limited queue of namespace names, filled from
// the namespace informer and from the controller's own informer of the
// named object, drained by one worker once both informers are synced.
package nsloop
