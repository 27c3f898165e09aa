#!/usr/bin/env bash
# update-openapi.sh regenerates pkg/generated/openapi/zz_generated.openapi.go
# with kube-openapi's openapi-gen, at the kube-openapi version pinned in go.mod.
#
# Usage: hack/update-openapi.sh      (or: go generate ./pkg/generated/openapi)
#
# The input packages are every API group-version of k8s.io/api, the shared
# apimachinery types, and the API types of apiextensions-apiserver and
# kube-aggregator, all at the versions go.mod pins. API rule violations found by
# the generator's linter are written to
# pkg/generated/openapi/api_violations.report (a list, not an error: the
# upstream types are not ours to change; upstream keeps the same list in
# kubernetes/api/api-rules/violation_exceptions.list).
set -o errexit -o nounset -o pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

out_dir="pkg/generated/openapi"
out_pkg="github.com/kapi-dev/kapi/${out_dir}"
out_file="zz_generated.openapi.go"

kube_openapi_version="$(go list -m -f '{{.Version}}' k8s.io/kube-openapi)"

# Every versioned API package of k8s.io/api that carries +k8s:openapi-gen=true.
api_dir="$(go list -m -f '{{.Dir}}' k8s.io/api)"
mapfile -t api_pkgs < <(
	cd "${api_dir}" &&
		grep -l '+k8s:openapi-gen=true' ./*/*/doc.go |
		sed -e 's|^\./|k8s.io/api/|' -e 's|/doc.go$||' |
			LC_ALL=C sort
)

inputs=(
	"${api_pkgs[@]}"
	k8s.io/apimachinery/pkg/apis/meta/v1
	k8s.io/apimachinery/pkg/apis/meta/v1beta1
	k8s.io/apimachinery/pkg/runtime
	k8s.io/apimachinery/pkg/util/intstr
	k8s.io/apimachinery/pkg/api/resource
	k8s.io/apimachinery/pkg/version
	k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
	k8s.io/kube-aggregator/pkg/apis/apiregistration/v1
)

header="$(mktemp)"
trap 'rm -f "${header}"' EXIT
printf '/*\nGenerated for kapi by hack/update-openapi.sh from the API packages go.mod pins.\n*/\n\n' >"${header}"

go run "k8s.io/kube-openapi/cmd/openapi-gen@${kube_openapi_version}" \
	--go-header-file "${header}" \
	--output-dir "${out_dir}" \
	--output-pkg "${out_pkg}" \
	--output-file "${out_file}" \
	--report-filename "${out_dir}/api_violations.report" \
	"${inputs[@]}"

gofmt -l -w "${out_dir}/${out_file}"

# The structured-merge-diff types server-side apply reads, converted from
# the definitions above once here instead of at every start.
go generate ./pkg/openapi
