#!/usr/bin/env bash
# One command on a fresh machine: installs what the tests need (build dependencies, NVIDIA's
# 535 user-space driver from Debian non-free unpacked under build/vendor, python3-torch),
# builds with warnings as errors, runs every test; then the same under ASan+UBSan; then the
# parsers' fuzz targets for a short while.
#   scripts/test.sh            everything
#   scripts/test.sh --quick    the normal build only
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh" --test

echo "== house rules (file sizes, pure layers, formatting)"
"$here/scripts/check-house.sh"

echo "== build (warnings are errors)"
BUILD_DIR=$here/build "$here/scripts/build.sh" -DCUDOCTOR_WERROR=ON -DCUDOCTOR_TESTS=ON -DCUDOCTOR_BENCH=ON
echo "== tests"
(cd "$here/build" && ctest -j2 --output-on-failure --timeout 300) | tee "$here/build/ctest.log"
counted() { grep -oE '[0-9]+ tests failed out of [0-9]+' "$1" | tail -1 | awk '{print $NF - $1}'; }

echo "== package: the .deb built, installed on this machine and run as a user would"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
rm -f "$here"/build/cudoctor_*.deb
(cd "$here/build" && cpack -G DEB >/dev/null)
deb=$(ls "$here"/build/cudoctor_*.deb)
# --path-include: a slim image's dpkg.cfg.d may exclude manual pages; this one is the package's.
"${sudo_cmd[@]}" dpkg -i --path-include='/usr/share/man/man1/cudoctor.1.gz' "$deb" >/dev/null
"$here/scripts/check-installed.sh" /usr

if [[ ${1:-} == --quick ]]; then
  echo "tests: $(counted "$here/build/ctest.log") passed, 0 failed"
  exit 0
fi
echo "== build with AddressSanitizer and UBSan"
BUILD_DIR=$here/build-asan BUILD_TYPE=Debug "$here/scripts/build.sh" -DCUDOCTOR_WERROR=ON -DCUDOCTOR_SANITIZE=ON \
  -DCUDOCTOR_BENCH=OFF
# The sanitized tests use the vendor files the first build unpacked.
ln -sfn "$here/build/vendor" "$here/build-asan/vendor"
echo "== tests under ASan+UBSan"
# handle_segv=0: a vendor library that crashes in the child must die by its signal, as in
# production, not be turned into an exit by ASan's handler.
(cd "$here/build-asan" && ASAN_OPTIONS=detect_leaks=1:handle_segv=0:handle_sigbus=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest -j2 --output-on-failure --timeout 600) | tee "$here/build-asan/ctest.log"

echo "== fuzz the parsers (ELF, fatbin, ld.so.cache)"
"$here/scripts/fuzz.sh" "${FUZZ_SECONDS:-20}"

# One closing line for CI: the tests of both builds (a failure stopped the script before).
echo "tests: $(( $(counted "$here/build/ctest.log") + $(counted "$here/build-asan/ctest.log") )) passed, 0 failed"
