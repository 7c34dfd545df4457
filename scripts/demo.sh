#!/usr/bin/env bash
# make demo: what slogate is for, on the built-in simulator, in under two
# minutes. First specs/demo.hcl, whose SLOs come from the Qwen seed report,
# passes on the simulator fitted to that report. Then an "upgrade": the same
# spec on a simulator 20 % slower per step (--sim-slowdown 1.2, a stand-in
# for a slower vLLM build), compared with the first run by -baseline against
# a 5 % tolerance. The upgrade still meets the SLO floors; the baseline
# comparison must catch it (exit 1). The demo exits 0 when the gate behaved
# so, and 1 when it did not (a pass of the upgrade is the demo failing).
#
# Usage: scripts/demo.sh [SLOGATE [RUN FLAGS...]]   (default bin/slogate; results in
# slogate-out/demo/qwen/; the run flags go to both runs, e.g. -var port=18001)
set -u
slogate=${1:-bin/slogate}
shift $(($# > 0 ? 1 : 0))
spec=specs/demo.hcl
latest=slogate-out/demo/qwen/latest
log=$(mktemp "${TMPDIR:-/tmp}/slogate-demo.XXXXXX")
trap 'rm -f "$log"' EXIT

echo "== 1/2: $spec on the simulator fitted to the seed report"
echo "\$ slogate run -sim $spec"
"$slogate" run -sim "$@" "$spec"
code=$?
if [ "$code" -ne 0 ]; then
	echo "demo: FAILED: the first run exited $code, want 0 (its SLOs come from the seed report it should reproduce)" >&2
	exit 1
fi

echo
echo "== 2/2: the upgrade: the same spec on a simulator 20 % slower per step, against the first run"
# -baseline is read (through the link, to the first run's folder) before the
# run starts; the link then moves to this run's folder when it completes.
echo "\$ slogate run -sim -var 'sim_args=[\"--sim-slowdown\", \"1.2\"]' -baseline $latest/results.json -tolerance 5% $spec"
"$slogate" run -sim "$@" -var 'sim_args=["--sim-slowdown", "1.2"]' -baseline "$latest/results.json" -tolerance 5% "$spec" | tee "$log"
code=${PIPESTATUS[0]}

caught=$(grep -c -- '^--- FAIL: qwen/baseline/' "$log")
slo_failed=$(grep -cE -- '^--- FAIL: qwen/(assert|expect)/' "$log")
echo
if [ "$code" -ne 1 ] || [ "$caught" -eq 0 ]; then
	echo "demo: FAILED: the upgrade run exited $code with $caught baseline failure(s); want exit 1 with the regression caught by -baseline" >&2
	exit 1
fi
if [ "$slo_failed" -eq 0 ]; then
	echo "What happened: the upgrade still met every SLO of the spec (floors set 25 % under the seed report), so asserts alone would have let it through."
else
	echo "What happened: the upgrade broke $slo_failed SLO(s) of the spec, and -baseline says by how much each cell moved."
fi
echo "-baseline compared each cell with the first run, 5 runs a side (the statistics above): $caught of them regressed beyond the 5 % tolerance, so the run exited 1 and a CI job gating on it would block this upgrade."
