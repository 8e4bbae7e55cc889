#!/usr/bin/env bash
# Installs what building and testing cudoctor needs, from Debian packages.
#   scripts/install-deps.sh          build dependencies only
#   scripts/install-deps.sh --test   also the test material: NVIDIA's 535 user-space
#                                    driver from Debian non-free, unpacked (not installed)
#                                    under build/vendor/, and Debian's CPU-only python3-torch.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
want_test=0
[[ ${1:-} == --test ]] && want_test=1

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)

build_pkgs=(cmake g++ make libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
            libgmock-dev libbenchmark-dev libseccomp-dev libre2-dev rapidjson-dev pci.ids)
# prometheus: promtool, the linter the --format prometheus test runs.
# man-db, tmux, dpkg-dev and strace: the installed package's manual page, the 60-column terminal
# test, the .deb's exact library dependencies (dpkg-shlibdeps), the ldd benchmark's system calls.
# chromium: the HTML report loaded headless; slurm-wlm and munge: a one-node Slurm on localhost
# for the HealthCheckProgram and srun recipes.
test_pkgs=(python3-torch prometheus clang clang-format libclang-rt-14-dev zsh fish gcc-multilib man-db tmux dpkg-dev strace time
           bsdextrautils chromium slurm-wlm munge)

# Non-free is needed for NVIDIA's user-space driver. Added as its own source file so the
# machine's own source list stays as it is.
nonfree=/etc/apt/sources.list.d/cudoctor-nonfree.sources
if [[ $want_test -eq 1 && ! -f $nonfree && -f /etc/apt/sources.list.d/debian.sources ]]; then
  sed -E 's/^Components:.*/Components: contrib non-free non-free-firmware/' \
    /etc/apt/sources.list.d/debian.sources | "${sudo_cmd[@]}" tee "$nonfree" >/dev/null
  rm -f "$here/build/.apt-updated"
fi

missing=()
pkgs=("${build_pkgs[@]}")
[[ $want_test -eq 1 ]] && pkgs+=("${test_pkgs[@]}")
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# kubectl, for the manifests' dry run: the machine's own if it has one, else Debian's.
if [[ $want_test -eq 1 ]] && ! command -v kubectl >/dev/null; then
  missing+=(kubernetes-client)
fi
mkdir -p "$here/build"
if ((${#missing[@]})) || [[ $want_test -eq 1 && ! -f $here/build/.apt-updated ]]; then
  "${sudo_cmd[@]}" apt-get update -qq
  touch "$here/build/.apt-updated"
fi
if ((${#missing[@]})); then
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[[ $want_test -eq 1 ]] || exit 0

# NVIDIA 535 user-space driver: unpacked into a test root, never installed on the system.
vendor=$here/build/vendor
nv_pkgs=(libcuda1 libnvidia-ml1 nvidia-smi libnvidia-ptxjitcompiler1)
if [[ ! -f $vendor/.done-535 ]]; then
  rm -rf "$vendor/debs" "$vendor/nvidia535"
  mkdir -p "$vendor/debs" "$vendor/nvidia535"
  (cd "$vendor/debs" && apt-get download -qq "${nv_pkgs[@]}")
  for d in "$vendor"/debs/*.deb; do dpkg -x "$d" "$vendor/nvidia535"; done
  touch "$vendor/.done-535"
fi

# CUDA 11.8 from Debian: cuobjdump (nvidia-cuda-toolkit) and the real cuBLAS and runtime it
# matches, for the fatbin reader's agreement tests. Unpacked, not installed.
cuda118_pkgs=(nvidia-cuda-toolkit libcublas11 libcudart11.0)
if [[ ! -f $vendor/.done-cuda118 ]]; then
  rm -rf "$vendor/debs118" "$vendor/cuda118"
  mkdir -p "$vendor/debs118" "$vendor/cuda118"
  (cd "$vendor/debs118" && apt-get download -qq "${cuda118_pkgs[@]}")
  for d in "$vendor"/debs118/*.deb; do dpkg -x "$d" "$vendor/cuda118"; done
  rm -rf "$vendor/debs118"
  touch "$vendor/.done-cuda118"
fi
