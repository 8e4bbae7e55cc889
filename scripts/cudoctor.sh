#!/usr/bin/env bash
# One command on a fresh machine: installs the build dependencies, builds, installs cudoctor
# (with its manual page and completions) on PATH — /usr/local as root, ~/.local otherwise —
# and runs it with the arguments given (e.g. scripts/cudoctor.sh -v, scripts/cudoctor.sh --json).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh" >&2
BUILD_DIR=$here/build "$here/scripts/build.sh" -DCUDOCTOR_TESTS=OFF -DCUDOCTOR_BENCH=OFF >/dev/null
prefix=${CUDOCTOR_PREFIX:-$([[ $(id -u) -eq 0 ]] && echo /usr/local || echo "$HOME/.local")}
cmake --install "$here/build" --prefix "$prefix" --strip >/dev/null
case ":$PATH:" in
  *":$prefix/bin:"*) echo "cudoctor: installed as $prefix/bin/cudoctor (man cudoctor; completions for bash, zsh, fish)" >&2 ;;
  *) echo "cudoctor: installed as $prefix/bin/cudoctor, which is not on PATH: add $prefix/bin to PATH" >&2 ;;
esac
exec "$prefix/bin/cudoctor" "$@"
