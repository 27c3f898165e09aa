#!/usr/bin/env bash
# measure.sh takes the quiet-machine figures of issues 17 and 18 (the
# targets table of docs/performance.md, "Issue 18: the targets today"), one
# after the other, into OUTDIR:
#
#   kapitest.txt   BenchmarkStartStop, BenchmarkReset1000 (10x) and
#                  BenchmarkIdleServerMemory (1x) of ./kapitest
#   startup.txt    kapi-load startup -runs 10, memory then embedded etcd
#   bench.txt      kapi-bench against one `kapi etcd` on loopback, with the
#                  reference server when REFERENCE names one
#   perop.txt      kapi-bench -per-op 3 on the same etcd (with the reference):
#                  the get and update rows again, the targets' rounds
#                  interleaved, and the CPU per operation of each process —
#                  a paired reading of the get and update ratios, which move
#                  by a third between source runs (session 23)
#
# Usage: hack/measure.sh OUTDIR
#   REFERENCE  kube-apiserver binary (default /work/refbin/kube-apiserver,
#              built by hack/build-reference.sh); kapi-bench prints kapi's
#              figures alone when it is absent
#   ETCD_PORT  client port of the shared etcd (default 32379; peer port +1)
#
# Takes about 7 minutes; run it with nothing else on the machine. It builds
# without the race detector and contacts only 127.0.0.1.
set -o errexit -o nounset -o pipefail

out="${1:?usage: hack/measure.sh OUTDIR}"
reference="${REFERENCE:-/work/refbin/kube-apiserver}"
port="${ETCD_PORT:-32379}"
peer=$((port + 1))

cd "$(dirname "$0")/.."
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
bin="${out}/bin"
mkdir -p "${bin}"

step() { echo "measure: $(date -u +%H:%M:%S) $* (load: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "${out}/steps.txt" >&2; }

step "building at $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty tree)')"
go build -o "${bin}/kapi" ./cmd/kapi
go build -o "${bin}/kapi-bench" ./cmd/kapi-bench
go build -o "${bin}/kapi-load" ./cmd/kapi-load
go test -c -o "${bin}/kapitest.test" ./kapitest

# The binaries are read back from disk, as a user's installed binary is:
# the page cache of a file the linker has just written holds other folios
# than one read from disk, and the file-backed part of the idle RSS reads
# 10–15 MiB higher with them (docs/performance.md, "Rules learnt the hard
# way"). sync writes them back; dd's nocache asks the kernel to drop the
# whole file's cached pages (posix_fadvise POSIX_FADV_DONTNEED).
drop_cache() {
	sync
	for f in "$@"; do
		[[ -f "${f}" ]] && dd if="${f}" iflag=nocache count=0 status=none
	done
}
drop_cache "${bin}/kapi" "${bin}/kapitest.test" "${reference}"

step "kapitest benchmarks"
(cd kapitest && "${bin}/kapitest.test" -test.run '^$' -test.bench 'BenchmarkStartStop|BenchmarkReset1000' \
	-test.benchtime 10x -test.benchmem &&
	"${bin}/kapitest.test" -test.run '^$' -test.bench 'BenchmarkIdleServerMemory' -test.benchtime 1x) \
	>"${out}/kapitest.txt" 2>&1

step "kapi-load startup"
{
	"${bin}/kapi-load" startup -kapi "${bin}/kapi" -runs 10 -- --storage-backend=memory
	"${bin}/kapi-load" startup -kapi "${bin}/kapi" -runs 10
} >"${out}/startup.txt" 2>&1

step "kapi-bench"
etcddir="$(mktemp -d)"
"${bin}/kapi" etcd --data-dir "${etcddir}/data" \
	--listen-client-urls "http://127.0.0.1:${port}" --advertise-client-urls "http://127.0.0.1:${port}" \
	--listen-peer-urls "http://127.0.0.1:${peer}" --initial-advertise-peer-urls "http://127.0.0.1:${peer}" \
	>"${out}/etcd.log" 2>&1 &
etcdpid=$!
trap 'kill "${etcdpid}" 2>/dev/null; wait "${etcdpid}" 2>/dev/null; rm -rf "${etcddir}"' EXIT
refargs=()
peroptargets=etcd
if [[ -x "${reference}" ]]; then
	refargs=(-reference "${reference}")
	peroptargets=etcd,reference
else
	step "no reference at ${reference}: kapi's figures alone"
fi
"${bin}/kapi-bench" -kapi "${bin}/kapi" -etcd "http://127.0.0.1:${port}" "${refargs[@]}" \
	>"${out}/bench.txt" 2>"${out}/bench.stderr"
step "kapi-bench -per-op 3"
"${bin}/kapi-bench" -kapi "${bin}/kapi" -etcd "http://127.0.0.1:${port}" -etcd-pid "${etcdpid}" "${refargs[@]}" \
	-targets "${peroptargets}" -per-op 3 >"${out}/perop.txt" 2>&1
step "done"
cat "${out}/kapitest.txt" "${out}/startup.txt" "${out}/bench.txt"
tail -n 12 "${out}/perop.txt"
