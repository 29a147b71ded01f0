#!/usr/bin/env bash
# bench/beamjob.sh: one run of convbeam submitted to a stand-alone Prism job
# server, the way a cluster runs it (issue 27, item 4). bench/beam.sh calls
# it for its js-external and js-loopback cases; by hand, from the repo root,
# after bench/beam.sh has built the binaries and generated the data:
#
#   bash bench/beamjob.sh external OUTDIR   # workers: Beam's EXTERNAL worker pool
#   bash bench/beamjob.sh loopback OUTDIR   # workers inside the submitting process
#
# In a new network, mount and PID namespace (`unshare`, as root), so that
# the worker pool's fixed port 50000 and the job server's port clash with
# nobody's, /tmp (where the pool's boot program stages and copies the worker
# binary, and never removes it) is a directory of our own, and every process
# left when the case ends is killed with the namespace. In it:
#   1. bench/work/beam/bin/s3serve (gofakes3 in memory) holds the plain 256
#      MiB archive and its keyring, in bucket bench;
#   2. bench/work/beam/bin/prism --job_port 8073 --serve_http=false: the job
#      server;
#   3. external only: bench/work/beam/bin/boot --worker_pool (the Go SDK's
#      container boot program: it listens on 50000 and, per worker Prism
#      asks for, starts a boot process that fetches the staged worker
#      binary from the job server and runs it); started with the AWS_*
#      variables, which the workers inherit: they read and write s3://;
#   4. bin/convbeam --runner universal --endpoint localhost:8073 with
#      --environment_type EXTERNAL --environment_config localhost:50000
#      --worker_binary bin/convbeam (or $WORKER_BINARY, a path under the
#      repo: /tmp is not the host's here), or --environment_type LOOPBACK;
#      --input, --output and --keys on s3://bench/, under /usr/bin/time -v.
# Then it reads each process's peak RSS (VmHWM, from /proc, before killing
# it: the worker outlives the job, see below), downloads OUT's report.json
# from s3serve (an unsigned path-style GET, which gofakes3 serves) into
# OUTDIR/report.json, and prints one line on stdout:
#
#   EXIT WALL_S SUBMITTER_KIB JOBSERVER_KIB WORKER_KIB S3SERVE_KIB
#
# (WORKER_KIB is 0 for loopback: the workers are the submitter's.) The
# submitter's log goes to OUTDIR.log. Prism starts one worker per
# environment of a job, and a Go pipeline has one environment: one worker
# process (see bench/RESULTS.md, "convbeam on a job server").
#
# Observed with Beam v2.77.0: when the job ends, Prism calls StopWorker, the
# pool kills the boot process, and its child, the worker, is orphaned and
# keeps running, holding its memory; the pool never reaps the boot process.
# Outside a PID namespace, such workers are left behind.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:?usage: bench/beamjob.sh external|loopback OUTDIR}
outdir=${2:?usage: bench/beamjob.sh external|loopback OUTDIR}
case $mode in external | loopback) ;; *) echo "bench/beamjob.sh: mode $mode: want external or loopback" >&2; exit 2 ;; esac
WORK=bench/work/beam
B=$WORK/bin
plain=bench/data/beam-256MiB.jsonl
for f in "$B/s3serve" "$B/prism" "$B/boot" bin/convbeam "$plain" "$plain.keys.json"; do
  [ -e "$f" ] || { echo "bench/beamjob.sh: $f missing: run bench/beam.sh" >&2; exit 2; }
done

if [ "${BEAMJOB_IN_NS:-}" != 1 ]; then
  # Re-run this script as PID 1 of new namespaces; /tmp is bound there.
  tmp=$WORK/tmp-$mode
  rm -rf "$tmp" && mkdir -p "$tmp"
  rc=0
  BEAMJOB_IN_NS=1 BEAMJOB_TMP=$(realpath "$tmp") unshare --net --mount --pid --fork --mount-proc \
    bash "$0" "$mode" "$outdir" || rc=$?
  rm -rf "$tmp" # the staged and copied worker binaries
  exit $rc
fi

# In the namespaces, as PID 1: when this shell exits, the kernel kills
# every process left in them.
ip link set lo up
mount --bind "$BEAMJOB_TMP" /tmp
rm -rf "$outdir" && mkdir -p "$outdir"
rm -f "$outdir.log"

# hwm PID: the process's peak RSS in KiB (0 if it is gone).
hwm() { awk '/^VmHWM:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# wait_port PORT: until something listens on 127.0.0.1:PORT (60 s at most).
wait_port() {
  for _ in $(seq 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "bench/beamjob.sh: nothing listens on port $1" >&2
  return 1
}

# Every process started here, and the workers, are killed at the end (the
# namespace would kill them anyway when this shell exits).
started=() workers=()
trap 'kill -KILL "${started[@]}" "${workers[@]}" 2>/dev/null || true' EXIT

"$B/s3serve" -bucket bench "$plain" "$plain.keys.json" >/tmp/endpoint 2>/tmp/s3serve.log &
s3=$!
started+=("$s3")
for _ in $(seq 600); do [ -s /tmp/endpoint ] && break; sleep 0.1; done
[ -s /tmp/endpoint ] || { echo "bench/beamjob.sh: s3serve did not start" >&2; cat /tmp/s3serve.log >&2; exit 1; }
export AWS_ENDPOINT_URL_S3=$(cat /tmp/endpoint) AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench \
  AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true

"$B/prism" --job_port 8073 --serve_http=false --log_level warn >/tmp/prism.log 2>&1 &
prism=$!
started+=("$prism")
wait_port 8073
env=(--environment_type LOOPBACK)
pool=
if [ "$mode" = external ]; then
  # From /tmp: each boot process writes pipeline_options.json into its
  # working directory.
  (cd /tmp && exec "$OLDPWD/$B/boot" --worker_pool >/tmp/pool.log 2>&1) &
  pool=$!
  started+=("$pool")
  wait_port 50000
  env=(--environment_type EXTERNAL --environment_config localhost:50000 --worker_binary "${WORKER_BINARY:-bin/convbeam}")
fi

# scan_workers: the worker processes (the pool's boot copies the binary
# to /tmp/binNNN/worker) and their peak RSS: the highest VmHWM seen goes
# to /tmp/worker.hwm, their PIDs to the array workers. Builtins only (no
# fork), as it runs every 0.1 s during the job: a worker may exit as soon
# as its job ends, taking its VmHWM with it.
scan_workers() {
  local d arg0 k v _
  for d in /proc/[0-9]*; do
    arg0=
    { IFS= read -r -d '' arg0 <"$d/cmdline"; } 2>/dev/null || true
    [[ $arg0 == /tmp/bin*/worker ]] || continue
    [[ " ${workers[*]} " == *" ${d#/proc/} "* ]] || workers+=("${d#/proc/}")
    { while read -r k v _; do
      [[ $k == VmHWM: ]] && [ "$v" -gt "$worker" ] && { worker=$v; echo "$worker" >/tmp/worker.hwm; }
    done <"$d/status"; } 2>/dev/null || true
  done
}
worker=0
echo 0 >/tmp/worker.hwm
sampler=
if [ -n "$pool" ]; then
  (while :; do scan_workers; sleep 0.1; done) &
  sampler=$!
  started+=("$sampler")
fi

rc=0
/usr/bin/time -v -o /tmp/submit.time bin/convbeam --runner universal --endpoint localhost:8073 "${env[@]}" \
  --input s3://bench/beam-256MiB.jsonl --output s3://bench/out --keys s3://bench/beam-256MiB.jsonl.keys.json \
  >"$outdir.log" 2>&1 || rc=$?

# The job has ended: a last look at the worker, if it is still there.
if [ -n "$pool" ]; then
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  worker=$(cat /tmp/worker.hwm)
  scan_workers
fi
jobserver=$(hwm "$prism")
curl -sf -o "$outdir/report.json" "$AWS_ENDPOINT_URL_S3/bench/out/report.json" || echo "bench/beamjob.sh: no report.json in s3://bench/out" >&2
s3peak=$(hwm "$s3")
cat /tmp/prism.log /tmp/pool.log >>"$outdir.log" 2>/dev/null || true

secs() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }
wall=$(secs "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' /tmp/submit.time)")
submitter=$(sed -n 's/.*Maximum resident set size (kbytes): //p' /tmp/submit.time)
echo "$rc $wall $submitter $jobserver $worker $s3peak"
