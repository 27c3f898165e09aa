#!/usr/bin/env bash
# build-reference.sh builds an upstream kube-apiserver from the public
# k8s.io/kubernetes Go module, to serve as the reference server of
# cmd/kapi-bench (-reference) and of the opt-in envtest benchmark
# (KAPI_ENVTEST_REFERENCE_APISERVER).
#
# Usage: hack/build-reference.sh [VERSION [OUTPUT [WORKDIR]]]
#   VERSION  k8s.io/kubernetes module version   (default v1.37.2)
#   OUTPUT   path of the binary to write        (default /work/refbin/kube-apiserver)
#   WORKDIR  scratch module directory           (default /work/refbuild)
#
# The build happens in a scratch module OUTSIDE kapi's module: kapi's go.mod
# never gains k8s.io/kubernetes or k8s.io/apiserver. k8s.io/kubernetes'
# own go.mod requires its staging modules (k8s.io/api, k8s.io/apiserver, ...)
# at v0.0.0 and replaces them with ./staging/src/...; those directories are not
# part of the published module, so the scratch module replaces each of them
# with the published staging module of the matching version (v1.X.Y -> v0.X.Y).
#
# It downloads modules through the Go module proxy (GOPROXY), so no test or CI
# step runs it. Running it again reuses the scratch module and the module and
# build caches; it prints every step it takes.
set -o errexit -o nounset -o pipefail

version="${1:-v1.37.2}"
output="${2:-/work/refbin/kube-apiserver}"
workdir="${3:-/work/refbuild}"

case "${version}" in
v1.*.*) ;;
*)
	echo "build-reference: version must look like v1.X.Y, got ${version}" >&2
	exit 2
	;;
esac
staging_version="v0.${version#v1.}"

step() { echo "build-reference: $*" >&2; }

step "scratch module ${workdir} for k8s.io/kubernetes ${version} (staging modules at ${staging_version})"
mkdir -p "${workdir}" "$(dirname "${output}")"
cd "${workdir}"

# A fresh go.mod each run: the replace list depends on the version.
rm -f go.mod go.sum
step "go mod init kapi-reference-build"
go mod init kapi-reference-build >/dev/null 2>&1

step "go mod download k8s.io/kubernetes@${version}"
gomod="$(go mod download -json "k8s.io/kubernetes@${version}" |
	sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
if [[ -z "${gomod}" || ! -f "${gomod}" ]]; then
	echo "build-reference: could not find k8s.io/kubernetes@${version}'s go.mod in the module cache" >&2
	exit 1
fi
step "reading the staging requirements of ${gomod}"

# Every k8s.io/<staging> module that k8s.io/kubernetes requires at v0.0.0 and
# replaces with a local ./staging/src path.
mapfile -t staging < <(
	sed -n 's|^[[:space:]]*\(k8s\.io/[A-Za-z0-9._/-]*\) => \./staging/src/.*$|\1|p' "${gomod}" | sort -u
)
if [[ ${#staging[@]} -eq 0 ]]; then
	echo "build-reference: no ./staging/src replace directives found in ${gomod}" >&2
	exit 1
fi
step "${#staging[@]} staging modules: ${staging[*]}"

{
	echo
	echo "require k8s.io/kubernetes ${version}"
	echo
	echo "replace ("
	for m in "${staging[@]}"; do
		echo "	${m} => ${m} ${staging_version}"
	done
	echo ")"
} >>go.mod

step "resolving the module graph: go get k8s.io/kubernetes/cmd/kube-apiserver@${version}"
go get "k8s.io/kubernetes/cmd/kube-apiserver@${version}"

# The version variables upstream's release build sets (hack/lib/version.sh):
# without them the binary reports v0.0.0-master, and its binary version is
# what its compatibility (emulation) version and /version derive from.
minor="${version#v1.}"
minor="${minor%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
	ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done

step "go build -ldflags '${ldflags# }' -o ${output} k8s.io/kubernetes/cmd/kube-apiserver (nice -n 10)"
nice -n 10 go build -trimpath -ldflags "${ldflags# }" -o "${output}" k8s.io/kubernetes/cmd/kube-apiserver

step "built: $("${output}" --version 2>&1 | head -n 1) at ${output}"
