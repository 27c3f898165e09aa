package eviction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// MaxDisruptedPodSize is how many pending evictions a budget may record in
// status.disruptedPods; past it evictions are refused until its controller
// catches up.
const MaxDisruptedPodSize = 2000

// Retries of a conflicting pod or budget write: upstream's backoff (20
// steps of 500 ms, with jitter), so a busy budget is retried for up to ten
// seconds.
const (
	retrySteps    = 20
	retryInterval = 500 * time.Millisecond
)

// tooManyRequestsMessage is upstream's message for an eviction a budget
// refuses.
const tooManyRequestsMessage = "Cannot evict pod as it would violate the pod's disruption budget."

// Pods is the pods resource: reads and (graceful) deletes.
type Pods interface {
	rest.Getter
	rest.GracefulDeleter
}

// Budgets is the poddisruptionbudgets resource: lists.
type Budgets interface {
	rest.Lister
}

// REST serves pods/eviction.
type REST struct {
	pods        Pods
	podStatus   rest.Updater
	budgets     Budgets
	budgetState rest.Updater
	now         func() time.Time
	wait        func(ctx context.Context, d time.Duration) error
}

var (
	_ rest.Storage                  = (*REST)(nil)
	_ rest.Creater                  = (*REST)(nil)
	_ rest.GroupVersionKindProvider = (*REST)(nil)
)

// NewREST returns pods/eviction over the pods resource, the pods/status
// subresource (which adds the DisruptionTarget condition), the budgets and
// the poddisruptionbudgets/status subresource.
func NewREST(pods Pods, podStatus rest.Updater, budgets Budgets, budgetStatus rest.Updater) *REST {
	return &REST{pods: pods, podStatus: podStatus, budgets: budgets, budgetState: budgetStatus, now: time.Now, wait: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var evictionKind = policyv1.SchemeGroupVersion.WithKind("Eviction")

// New implements rest.Storage.
func (r *REST) New() runtime.Object { return &policyv1.Eviction{} }

// AcceptsGroupVersion implements rest.GroupVersionAcceptor: a
// policy/v1beta1 Eviction body is taken too (converted to policy/v1), as
// upstream's EvictionREST accepts both.
func (r *REST) AcceptsGroupVersion(gv schema.GroupVersion) bool {
	return gv == policyv1.SchemeGroupVersion || gv == policyv1beta1.SchemeGroupVersion
}

// Destroy implements rest.Storage: the stores are the pods' and budgets'.
func (r *REST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: policy/v1
// Eviction, whatever the pods' group-version.
func (r *REST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind { return evictionKind }

// Create implements rest.Creater: it evicts the pod the request names.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	eviction, ok := obj.(*policyv1.Eviction)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", obj))
	}
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || info.Name == "" {
		return nil, apierrors.NewBadRequest("name parameter required.")
	}
	if info.Name != eviction.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	deleteOptions, err := mergeDryRun(eviction, options)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if createValidation != nil {
		if err := createValidation(ctx, eviction.DeepCopyObject()); err != nil {
			return nil, err
		}
	}

	// A pod no budget guards is deleted at once, retrying conflicts unless
	// the client pinned a resourceVersion.
	var pod *corev1.Pod
	deleted := false
	retryable := apierrors.IsConflict
	if !resourceVersionUnset(deleteOptions) {
		retryable = func(error) bool { return false }
	}
	err = r.retry(ctx, retryable, func() error {
		pod, err = r.getPod(ctx, eviction.Name)
		if err != nil {
			return err
		}
		if !canIgnoreBudgets(pod) {
			return nil
		}
		opts := deleteOptions
		if pinPodVersion(pod) && resourceVersionUnset(deleteOptions) {
			opts = withResourceVersion(deleteOptions, pod.ResourceVersion)
		}
		if err := r.deletePod(ctx, eviction.Name, opts); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if deleted {
		return success(), nil
	}

	budget, pinned, err := r.consumeBudget(ctx, pod, isDryRun(deleteOptions.DryRun))
	if err != nil {
		return nil, err
	}
	opts := deleteOptions
	if pinned {
		// The pod was unready when the budget let it go: delete it only
		// if it has not become ready since.
		opts = withResourceVersion(deleteOptions, pod.ResourceVersion)
	}
	if err := r.deletePod(ctx, eviction.Name, opts); err != nil {
		if apierrors.IsConflict(err) && pinned && resourceVersionUnset(deleteOptions) {
			return nil, stillProcessing(budget)
		}
		return nil, err
	}
	return success(), nil
}

func success() *metav1.Status { return &metav1.Status{Status: metav1.StatusSuccess} }

// consumeBudget checks the pod's budget and, when the pod is healthy (or
// the budget needs it), takes one disruption from it. It returns the
// budget's name and whether the pod's deletion must be pinned to the
// resourceVersion read (an unready pod let go without consuming the
// budget). A pod without budget passes.
func (r *REST) consumeBudget(ctx context.Context, pod *corev1.Pod, dryRun bool) (string, bool, error) {
	budgets, err := r.matchingBudgets(ctx, pod)
	if err != nil {
		return "", false, err
	}
	switch len(budgets) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", false, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    500,
			Reason:  metav1.StatusReasonInternalError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
		}}
	}
	pdb := budgets[0]
	if !podReady(pod) {
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
			return pdb.Name, true, nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			// The application is not disrupted now: an unready pod may go.
			return pdb.Name, true, nil
		}
	}
	refresh := false
	err = r.retry(ctx, apierrors.IsConflict, func() error {
		if refresh {
			latest, err := r.budgetNamed(ctx, pod.Namespace, pdb.Name)
			if err != nil {
				return err
			}
			pdb = latest
		}
		refresh = true
		return r.checkAndDecrement(ctx, pod.Name, pdb, dryRun)
	})
	// Conflicts past the retries are returned as they are (409), as
	// upstream's retry does.
	return pdb.Name, false, err
}

// checkAndDecrement takes one disruption from pdb (unless dry-run) and
// records the pod as disrupted, or says why it cannot.
func (r *REST) checkAndDecrement(ctx context.Context, podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return stillProcessing(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, errors.New("pdb disruptions allowed is negative"))
	}
	if len(pdb.Status.DisruptedPods) > MaxDisruptedPodSize {
		return apierrors.NewForbidden(policyv1.Resource("poddisruptionbudget"), pdb.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests(tooManyRequestsMessage, 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    policyv1.DisruptionBudgetCause,
			Message: deniedMessage(pdb),
		})
		return err
	}
	if dryRun {
		return nil
	}
	updated := pdb.DeepCopy()
	updated.Status.DisruptionsAllowed--
	if updated.Status.DisruptionsAllowed == 0 {
		setDisruptionAllowedCondition(updated, r.now())
	}
	if updated.Status.DisruptedPods == nil {
		updated.Status.DisruptedPods = map[string]metav1.Time{}
	}
	// The disruption controller drops the pod from the map once it is gone
	// (or after a timeout, if it never goes).
	updated.Status.DisruptedPods[podName] = metav1.NewTime(r.now())
	_, _, err := r.budgetState.Update(budgetContext(ctx, pdb.Namespace), pdb.Name, replace{obj: updated},
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// deniedMessage explains why a budget allows no disruption, from its
// DisruptionAllowed condition and counts, as upstream.
func deniedMessage(pdb *policyv1.PodDisruptionBudget) string {
	cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	falseWithMessage := cond != nil && cond.Status == metav1.ConditionFalse && cond.Message != ""
	switch {
	case falseWithMessage && cond.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, cond.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case falseWithMessage:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, cond.Reason, cond.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// setDisruptionAllowedCondition is component-helpers'
// UpdateDisruptionAllowedCondition for a budget with no disruption left:
// DisruptionAllowed=False, reason InsufficientPods.
func setDisruptionAllowedCondition(pdb *policyv1.PodDisruptionBudget, now time.Time) {
	apimeta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             policyv1.InsufficientPodsReason,
		ObservedGeneration: pdb.Status.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(now),
	})
}

// stillProcessing is the 429 for a budget whose controller has not caught
// up (or a pod that changed under the eviction).
func stillProcessing(name string) error {
	err := apierrors.NewTooManyRequests(tooManyRequestsMessage, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name),
	})
	return err
}

// matchingBudgets returns the budgets of the pod's namespace whose selector
// matches its labels (a budget with an invalid selector matches nothing).
func (r *REST) matchingBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	obj, err := r.budgets.List(budgetContext(ctx, pod.Namespace), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*policyv1.PodDisruptionBudgetList)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("listing budgets returned %T", obj))
	}
	var out []*policyv1.PodDisruptionBudget
	for i := range list.Items {
		pdb := &list.Items[i]
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

func (r *REST) budgetNamed(ctx context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error) {
	getter, ok := r.budgets.(rest.Getter)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("budgets cannot be read one by one"))
	}
	obj, err := getter.Get(budgetContext(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pdb, ok := obj.(*policyv1.PodDisruptionBudget)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading a budget returned %T", obj))
	}
	return pdb, nil
}

// budgetContext is ctx for a request on the budgets of namespace (errors
// then name poddisruptionbudgets, not pods).
func budgetContext(ctx context.Context, namespace string) context.Context {
	ctx = request.WithNamespace(ctx, namespace)
	return request.WithRequestInfo(ctx, &request.RequestInfo{
		IsResourceRequest: true,
		APIPrefix:         "apis",
		APIGroup:          policyv1.GroupName,
		APIVersion:        "v1",
		Namespace:         namespace,
		Resource:          "poddisruptionbudgets",
	})
}

func (r *REST) getPod(ctx context.Context, name string) (*corev1.Pod, error) {
	obj, err := r.pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading a pod returned %T", obj))
	}
	return pod, nil
}

// deletePod marks the pod DisruptionTarget=True (through pods/status,
// unless dry-run) and deletes it with options. A resourceVersion
// precondition is checked against the pod before the condition is added,
// and then moved to the version the condition wrote.
func (r *REST) deletePod(ctx context.Context, name string, options *metav1.DeleteOptions) error {
	if !isDryRun(options.DryRun) {
		out, _, err := r.podStatus.Update(ctx, name, disruptionTarget{options: options, now: r.now},
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if !resourceVersionUnset(options) {
			m, err := apimeta.Accessor(out)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			options = withResourceVersion(options, m.GetResourceVersion())
		}
	}
	_, _, err := r.pods.Delete(ctx, name, rest.ValidateAllObjectFunc, options)
	return err
}

// retry runs fn until it succeeds, fails with an error retryable does not
// accept, or the retries run out (the last error is returned).
func (r *REST) retry(ctx context.Context, retryable func(error) bool, fn func() error) error {
	var err error
	for step := range retrySteps {
		if err = fn(); err == nil || !retryable(err) {
			return err
		}
		if step == retrySteps-1 {
			break
		}
		if werr := r.wait(ctx, retryInterval); werr != nil {
			return err
		}
	}
	return err
}

// mergeDryRun returns the delete options of the eviction with the
// request's dry-run: either may set it, both must then agree.
func mergeDryRun(eviction *policyv1.Eviction, options *metav1.CreateOptions) (*metav1.DeleteOptions, error) {
	if eviction.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: options.DryRun}, nil
	}
	if len(eviction.DeleteOptions.DryRun) == 0 {
		eviction.DeleteOptions.DryRun = options.DryRun
		return eviction.DeleteOptions, nil
	}
	if len(options.DryRun) == 0 {
		return eviction.DeleteOptions, nil
	}
	if !slices.Equal(options.DryRun, eviction.DeleteOptions.DryRun) {
		return nil, fmt.Errorf("Non-matching dry-run options in request and content: %v and %v", options.DryRun, eviction.DeleteOptions.DryRun)
	}
	return eviction.DeleteOptions, nil
}

func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }

// canIgnoreBudgets: a terminal, pending or terminating pod disrupts
// nothing more by going.
func canIgnoreBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// pinPodVersion: the deletion of a pod that could still become healthy is
// pinned to the version read, so that it does not race the pod becoming
// ready.
func pinPodVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

func resourceVersionUnset(options *metav1.DeleteOptions) bool {
	return options.Preconditions == nil || options.Preconditions.ResourceVersion == nil
}

func withResourceVersion(options *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	out := options.DeepCopy()
	if out.Preconditions == nil {
		out.Preconditions = &metav1.Preconditions{}
	}
	out.Preconditions.ResourceVersion = &rv
	return out
}

// podReady is the pod's Ready condition.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
