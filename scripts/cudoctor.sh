#!/usr/bin/env bash
# One command on a fresh machine: installs the build dependencies, builds, runs cudoctor
# with the arguments given (e.g. scripts/cudoctor.sh -v, scripts/cudoctor.sh --json).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh" >&2
BUILD_DIR=$here/build "$here/scripts/build.sh" -DCUDOCTOR_TESTS=OFF -DCUDOCTOR_BENCH=OFF >/dev/null
exec "$here/build/src/cudoctor/cudoctor" "$@"
