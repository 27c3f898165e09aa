// Package conversion converts custom resources between the versions of
// their CustomResourceDefinition, as kube-apiserver's apiextensions-apiserver
// does: strategy None rewrites apiVersion only; strategy Webhook sends the
// objects to the CRD's conversion webhook in one ConversionReview.
//
// [New] builds a [Converter] for one CRD (one per CRD generation: the
// conversion settings are read once). A Converter is safe for concurrent
// use and reuses one HTTP client, so connections to the webhook are kept.
//
// # Webhook protocol
//
// The request is a ConversionReview of the first version in
// spec.conversion.webhook.conversionReviewVersions that kapi supports ("v1"
// or "v1beta1", in the order the CRD lists them) with a fresh UUID as
// request.uid, desiredAPIVersion and the objects to convert (objects
// already in the desired version are not sent; when none is left, no call
// is made). It is POSTed as JSON to the configured URL, or to
// https://<name>.<namespace>.svc:<port><path> for a service reference (port
// 443 by default) with the address given by a [ServiceResolver] (kapi's
// resolves an ExternalName Service to its external name: see package
// serviceresolver), the query "?timeout=<timeout>" appended as client-go
// does. TLS is verified against
// caBundle (system roots if it is empty) with server name
// <name>.<namespace>.svc for a service. As upstream, HTTP/2 is only
// negotiated with a URL on a loopback host; services and other hosts use
// HTTP/1.1 (upstream does so to spread load over a service's endpoints).
//
// The response must be a ConversionReview of the version sent (for v1 the
// apiVersion/kind and response.uid are checked; for v1beta1 they are not,
// as upstream), result.status "Success" (else its message is the error),
// as many convertedObjects as objects sent, each in the desired
// group/version with the original kind, name, namespace and uid. Only
// metadata.labels and metadata.annotations may be changed by the webhook
// (they are validated when changed); the rest of metadata is restored from
// the original object.
//
// # Errors
//
// Every error of a conversion is an [*Error] whose message is upstream's
// text, e.g.
//
//	conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post "https://hook.example.com/convert?timeout=30s": ...
//
// where the group/version and kind are those of the object being converted
// (for a list, the list kind). kube-apiserver returns these errors
// unwrapped from its storage codec, so clients get HTTP 500 with a
// metav1.Status of status Failure, no reason (StatusReasonUnknown, which
// kubectl prints as "Error from server: <message>") and the message as is;
// [Error.Status] returns that Status, and Error implements
// apierrors.APIStatus.
package conversion
