#!/usr/bin/env bash
# make sanitize-NN: compute-sanitizer's memcheck, racecheck and synccheck on
# build/NN_topic --quick. All three tools run even when one fails, so a
# learner sees every report. A tool fails on a reported error or on the
# program's own non-zero exit. Logs: build/NN_topic.<tool>.log. A step's
# twins (NN_topic/twins) are build/twins/NN_topic, logs beside it.
#
#     bash tools/sanitize.sh 03_tma_load
#     bash tools/sanitize.sh 03_tma_load/twins
set -u
step=${1:?usage: tools/sanitize.sh NN_topic[/twins]}
step=${step%/}
label=${step%%_*}
case $step in
    */twins) binary=build/twins/${step%/twins} label=$label/twins ;;
    *) binary=build/$step ;;
esac
cuda_home=${CUDA_HOME:-/usr/local/cuda}
sanitizer=${SANITIZER:-$(command -v compute-sanitizer || echo "$cuda_home/bin/compute-sanitizer")}
if [ ! -x "$sanitizer" ]; then
    echo "compute-sanitizer not found on PATH or in $cuda_home/bin: set SANITIZER=/path/to/compute-sanitizer"
    exit 2
fi
[ -x "$binary" ] || { echo "$binary not found: run make build-${step%%_*}"; exit 2; }
# A step's own sanitizer options and tools, from its build facts (its check.py, read by tools/contract.py):
# the kernels to check (09 and 10 check their own, not cuBLAS's) and the tools (all three unless it names
# some: 09 and 10 leave racecheck out, and their lessons say why).
python=${PYTHON:-python3}
extra=$("$python" tools/contract.py sanitize-args "$step") || exit 2
tools=$("$python" tools/contract.py sanitize-tools "$step") || exit 2
failed=""
for tool in $tools; do
    log=$binary.$tool.log
    echo "== compute-sanitizer --tool $tool $binary --quick   (log: $log)"
    # --report-api-errors no: the programs check every API call's result
    # themselves, and step 03 hands the tensor-map encoder invalid arguments on
    # purpose (its rules part), which the sanitizer would count as errors.
    # shellcheck disable=SC2086
    "$sanitizer" --tool "$tool" --report-api-errors no --error-exitcode 1 $extra "./$binary" --quick > "$log" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then  # the program found no Hopper GPU: nothing was sanitized
        grep -v "^=========" "$log" | tail -n 1
        echo "sanitize-$label: SKIP"
        exit 77
    elif [ $rc -eq 0 ]; then
        tail -n 1 "$log"
    else
        grep -E "^========= (Error|Invalid|Race|Barrier|  *(and|at) )|SUMMARY|^RESULT|^check .* FAIL|^       hung" "$log" |
            head -n 20
        failed="$failed $tool"
    fi
done
if [ -n "$failed" ]; then
    echo "sanitize-$label: FAILED:$failed"
    exit 1
fi
echo "sanitize-$label: clean"
