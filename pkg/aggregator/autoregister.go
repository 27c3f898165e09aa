package aggregator

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
)

// The label of auto-registered APIServices and its values (upstream's):
// "onstart" ones (built-in group-versions) are synced once, at start;
// "true" ones (CRD group-versions) for as long as they are served.
const (
	AutoManagedLabel    = "kube-aggregator.kubernetes.io/automanaged"
	ManageOnStart       = "onstart"
	ManageContinuously  = "true"
	autoRegisterRetry   = time.Second
	autoRegisterManager = "kube-apiserver-autoregistration"
)

// autoRegistration is the state of the autoregistration controller.
type autoRegistration struct {
	// atStart are the APIServices that existed when it started.
	atStart map[string]bool
	// synced are the desired APIServices synced successfully once.
	synced map[string]bool
}

// runAutoRegistration keeps one local APIService per group-version the
// chain serves (kube-apiserver-autoregistration, with upstream's
// crdregistration controller folded in): created whenever missing (also a
// deleted built-in one, see syncAutoRegistered), updated if its spec
// drifted, deleted once no longer served; never touching APIServices
// without the automanaged label.
//
// A pass syncs every name at start, after a list of the APIServices and
// after a failed pass; otherwise only the names that changed since the
// last pass (the group-versions discovery added or removed, the
// APIServices the informer saw change), so that adding one CRD costs the
// work of its group-versions, not of every one served. A name that did
// not change would sync to the same result: the sync of a name reads
// only its desired APIService, its current one and whether it synced
// before.
func (a *Aggregator) runAutoRegistration(ctx context.Context, changed <-chan struct{}, takeNames func() (map[string]bool, bool)) {
	discChanged, takeGVs, cancel := a.cfg.Discovery.SubscribeChanges()
	defer cancel()
	if !a.informer.waitSynced(ctx) {
		return
	}
	st := &autoRegistration{atStart: map[string]bool{}, synced: map[string]bool{}}
	for _, svc := range a.informer.list() {
		st.atStart[svc.Name] = true
	}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	all := true
	for {
		names, listed := takeNames()
		gvs := takeGVs()
		var ok bool
		if all || listed {
			ok = a.syncAutoRegistration(ctx, st)
		} else {
			for _, gv := range gvs {
				if names == nil {
					names = map[string]bool{}
				}
				names[apiservice.Name(gv)] = true
			}
			ok = a.syncAutoRegistrationOf(ctx, st, names)
		}
		all = !ok
		if !ok && ctx.Err() == nil {
			retry.Reset(autoRegisterRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-discChanged:
		case <-retry.C:
		}
	}
}

// desiredAPIServices returns the APIService wanted for every local
// group-version, by name.
func (a *Aggregator) desiredAPIServices() map[string]*apiregistrationv1.APIService {
	out := map[string]*apiregistrationv1.APIService{}
	for _, gv := range a.cfg.Discovery.LocalGroupVersions() {
		if svc := a.desiredAPIService(gv); svc != nil {
			out[svc.Name] = svc
		}
	}
	return out
}

// desiredAPIService returns the APIService wanted for the local
// group-version gv (nil for the aggregator's own group, which has none,
// as upstream).
func (a *Aggregator) desiredAPIService(gv schema.GroupVersion) *apiregistrationv1.APIService {
	if gv.Group == apiregistrationv1.GroupName {
		return nil
	}
	p := discovery.DefaultPriority(gv)
	manage := ManageContinuously
	if a.builtin[gv] {
		manage = ManageOnStart
	}
	name := apiservice.Name(gv)
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AutoManagedLabel: manage}},
		Spec: apiregistrationv1.APIServiceSpec{
			Group:                gv.Group,
			Version:              gv.Version,
			GroupPriorityMinimum: p.Group,
			VersionPriority:      p.Version,
		},
	}
}

// syncAutoRegistration does one pass over every name; false if some
// write failed.
func (a *Aggregator) syncAutoRegistration(ctx context.Context, st *autoRegistration) bool {
	ok := true
	desired := a.desiredAPIServices()
	names := map[string]bool{}
	for n := range desired {
		names[n] = true
	}
	for _, svc := range a.informer.list() {
		names[svc.Name] = true
	}
	for name := range names {
		if !a.syncAutoRegisteredName(ctx, st, name, desired[name]) {
			ok = false
		}
	}
	return ok
}

// syncAutoRegistrationOf does a pass over names only (APIService names,
// <version>.<group>); false if some write failed.
func (a *Aggregator) syncAutoRegistrationOf(ctx context.Context, st *autoRegistration, names map[string]bool) bool {
	ok := true
	for name := range names {
		version, group, _ := strings.Cut(name, ".")
		gv := schema.GroupVersion{Group: group, Version: version}
		var desired *apiregistrationv1.APIService
		if a.cfg.Discovery.HasLocal(gv) {
			desired = a.desiredAPIService(gv)
		}
		if !a.syncAutoRegisteredName(ctx, st, name, desired) {
			ok = false
		}
	}
	return ok
}

// syncAutoRegisteredName syncs name towards desired (nil: none wanted)
// and records it synced; false if a write failed.
func (a *Aggregator) syncAutoRegisteredName(ctx context.Context, st *autoRegistration, name string, desired *apiregistrationv1.APIService) bool {
	if err := a.syncAutoRegistered(ctx, st, name, desired, a.informer.get(name)); err != nil {
		if ctx.Err() == nil {
			a.logger.Warn("autoregister apiservice", "apiservice", name, "err", err)
		}
		return false
	}
	if desired != nil {
		st.synced[name] = true
	}
	return true
}

// syncAutoRegistered reconciles one name, as upstream's autoregister
// controller does, but for one case: a missing APIService this server
// wants is always created, "onstart" ones included.
//
// Upstream creates an "onstart" (built-in) APIService only once per
// process: deleted afterwards, it stays gone, and its group drops out of
// discovery until kube-apiserver restarts (kubernetes/kubernetes#75704).
// kapi recreates it instead (issue 12 point 12). The "once" rule stays
// for updates and deletions, which is what keeps servers of different
// versions sharing one storage from undoing each other's changes: a newer
// server that no longer serves a group deletes its APIService once, at
// start; an older one still serving it recreates it while it runs, which
// matches what that older server serves.
func (a *Aggregator) syncAutoRegistered(ctx context.Context, st *autoRegistration, name string, desired, cur *apiregistrationv1.APIService) error {
	sctx := systemContext(ctx)
	switch {
	case cur == nil && desired == nil:
		return nil
	case cur == nil:
		obj, err := a.asAPIServer(a.store.New(), desired)
		if err != nil {
			return err
		}
		_, err = a.store.Create(sctx, obj, nil, &metav1.CreateOptions{FieldManager: autoRegisterManager})
		if apierrors.IsAlreadyExists(err) {
			return nil // seen again through the informer
		}
		return err
	case desired != nil && desired.Labels[AutoManagedLabel] == ManageOnStart && st.synced[name]:
		return nil // "onstart" ones are updated once
	}
	manage, managed := cur.Labels[AutoManagedLabel]
	switch {
	case !managed:
		return nil // a user's APIService
	case manage == ManageOnStart && !st.atStart[name]:
		return nil
	case manage == ManageOnStart && st.synced[name]:
		return nil
	case desired == nil:
		uid := cur.UID
		_, _, err := a.store.Delete(sctx, name, nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && (apierrors.IsNotFound(err) || apierrors.IsConflict(err)) {
			return nil
		}
		return err
	case equality.Semantic.DeepEqual(cur.Spec, desired.Spec):
		return nil
	}
	_, _, err := a.store.Update(sctx, name, recordedMutation{a: a, m: func(svc *apiregistrationv1.APIService) {
		svc.Spec = desired.Spec
	}}, nil, nil, false, &metav1.UpdateOptions{FieldManager: autoRegisterManager})
	if err != nil && (apierrors.IsNotFound(err) || apierrors.IsConflict(err)) {
		return nil
	}
	return err
}

// apiserverManager is the field manager upstream's autoregistration writes
// as: its client's user agent is kube-apiserver/<version>.
const apiserverManager = "kube-apiserver"

// asAPIServer returns obj with its managed fields updated for a write by
// kube-apiserver over live, as upstream's autoregistration controller's
// writes through its client record them (a.store is written directly). A
// create repeated by a later server of the process reuses the entry the
// first computed (UpdateRepeatedCreate): every start creates them.
func (a *Aggregator) asAPIServer(live, obj runtime.Object) (runtime.Object, error) {
	fm, err := fieldmanager.ForStorage(a.store, apiregistrationv1.SchemeGroupVersion.WithKind("APIService"))
	if err != nil {
		return nil, err
	}
	return fm.UpdateRepeatedCreate(live, obj, apiserverManager), nil
}

// recordedMutation is a mutation recorded in the managed fields as
// kube-apiserver's write.
type recordedMutation struct {
	a *Aggregator
	m mutation
}

func (r recordedMutation) Preconditions() *metav1.Preconditions { return nil }

func (r recordedMutation) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := r.m.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	return r.a.asAPIServer(old, obj)
}
