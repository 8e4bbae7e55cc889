#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets with clang (ASan + UBSan) and runs each for a while
# on a seed corpus of real files: ELF libraries, nvcc-built fatbins, this machine's
# ld.so.cache. A crash, a sanitizer report or a timeout fails the script.
#   scripts/fuzz.sh [SECONDS per target, default 20]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-20}
out=$here/build-fuzz
mkdir -p "$out"
command -v clang++ >/dev/null || { echo "fuzz: clang++ not installed" >&2; exit 1; }

srcs_elf=("$here/src/cudoctor/elf/elf_file.cpp" "$here/src/cudoctor/elf/source.cpp" "$here/src/cudoctor/elf/fatbin.cpp" "$here/src/cudoctor/compat/binary.cpp"
          "$here/src/cudoctor/util/version.cpp" "$here/src/cudoctor/util/strings.cpp")
srcs_ld=("$here/src/cudoctor/ld/ld_so_cache.cpp")
common=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
        -DFMT_HEADER_ONLY -I"$here/src")
clang++ "${common[@]}" "$here/tests/fuzz/fuzz_elf.cpp" "${srcs_elf[@]}" -o "$out/fuzz_elf"
clang++ "${common[@]}" "$here/tests/fuzz/fuzz_fatbin.cpp" "${srcs_elf[@]}" -o "$out/fuzz_fatbin"
clang++ "${common[@]}" "$here/tests/fuzz/fuzz_ld_so_cache.cpp" "${srcs_ld[@]}" -o "$out/fuzz_ld_so_cache"
# The log reader and the signature matcher (RE2 from Debian's libre2-dev, the catalog for the
# causes' ids); the signatures are read from data/ at start.
# kb/json_read.cpp (RapidJSON's reader into nlohmann's document) reads the signatures and, in
# fuzz_kb_json, any text against nlohmann's own parser; -fno-sanitize=pointer-overflow for it
# alone: RapidJSON 1.1.0's parse stack adds to its null pointer before its first allocation
# (src/cudoctor/CMakeLists.txt says more).
clang++ "${common[@]}" -fno-sanitize=pointer-overflow -c "$here/src/cudoctor/kb/json_read.cpp" -o "$out/json_read.o"
clang++ "${common[@]}" "$here/tests/fuzz/fuzz_kb_json.cpp" "$out/json_read.o" -o "$out/fuzz_kb_json"
srcs_log=("$here/src/cudoctor/explain/log_reader.cpp" "$here/src/cudoctor/explain/matcher.cpp"
          "$here/src/cudoctor/explain/signatures.cpp" "$here/src/cudoctor/rules/catalog.cpp"
          "$here/src/cudoctor/util/strings.cpp" "$here/src/cudoctor/util/version.cpp")
clang++ "${common[@]}" -DCUDOCTOR_DATA_DIR="\"$here/data\"" "$here/tests/fuzz/fuzz_log.cpp" "${srcs_log[@]}" \
  "$out/json_read.o" -o "$out/fuzz_log" -lre2 -lpthread
# The readers of settings (tune): start-up file lines and the allocator and workspace values.
srcs_settings=("$here/src/cudoctor/probe/setting_lines.cpp" "$here/src/cudoctor/rules/tune_values.cpp"
               "$here/src/cudoctor/kb/settings.cpp" "$here/src/cudoctor/util/strings.cpp")
clang++ "${common[@]}" -DCUDOCTOR_DATA_DIR="\"$here/data\"" "$here/tests/fuzz/fuzz_settings.cpp" "${srcs_settings[@]}" \
  -o "$out/fuzz_settings"
# The report reader of diff and fleet (RapidJSON, header-only, from Debian's rapidjson-dev).
srcs_report=("$here/src/cudoctor/fleet/diff.cpp" "$here/src/cudoctor/fleet/fleet.cpp"
             "$here/src/cudoctor/util/strings.cpp" "$here/src/cudoctor/util/version.cpp")
# -fno-sanitize=pointer-overflow for the digest alone: RapidJSON 1.1.0's parse stack adds to its
# null pointer before its first allocation (src/cudoctor/CMakeLists.txt says more).
clang++ "${common[@]}" -fno-sanitize=pointer-overflow -c "$here/src/cudoctor/fleet/digest.cpp" -o "$out/digest.o"
clang++ "${common[@]}" "$here/tests/fuzz/fuzz_report.cpp" "$out/digest.o" "${srcs_report[@]}" -o "$out/fuzz_report"

# Seeds: the committed corpora (tests/fuzz/corpus/<target>/, replayed by ctest as
# FuzzCorpus.<target>; add a crash's input there once it is fixed) and small real inputs of
# this machine (libFuzzer mutates from them).
seeds=$out/seeds
rm -rf "$seeds" && mkdir -p "$seeds/elf" "$seeds/fatbin" "$seeds/cache" "$seeds/log" "$seeds/settings" "$seeds/report" \
  "$seeds/kb_json"
cp "$here"/tests/fuzz/corpus/elf/* "$seeds/elf/"
cp "$here"/tests/fuzz/corpus/fatbin/* "$seeds/fatbin/"
cp "$here"/tests/fuzz/corpus/ld_so_cache/* "$seeds/cache/"
cp "$here"/tests/fuzz/corpus/log/* "$seeds/log/"
cp "$here"/tests/fuzz/corpus/settings/* "$seeds/settings/"
cp "$here"/tests/fuzz/corpus/report/* "$seeds/report/"
cp "$here"/tests/fuzz/corpus/kb_json/* "$seeds/kb_json/"
cp /etc/profile /etc/bash.bashrc "$seeds/settings/" 2>/dev/null || true
for f in /usr/lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libm.so.6 /bin/true; do
  [[ -f $f ]] && cp -L "$f" "$seeds/elf/"
done
if [[ -x /usr/local/cuda-13.0/bin/nvcc ]]; then
  printf '__global__ void k(float* x) { x[0] = 1.0f; }\n' > "$out/k.cu"
  /usr/local/cuda-13.0/bin/nvcc -shared -Xcompiler -fPIC -o "$seeds/elf/libk.so" "$out/k.cu" \
    -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=compute_90 >/dev/null
  /usr/local/cuda-13.0/bin/nvcc -fatbin -o "$seeds/fatbin/k.fatbin" "$out/k.cu" \
    -gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80 >/dev/null
fi
cp /etc/ld.so.cache "$seeds/cache/" 2>/dev/null || true

status=0
for t in elf fatbin ld_so_cache log settings report kb_json; do
  dir=$seeds/${t/ld_so_cache/cache}
  echo "== fuzz_$t for ${secs}s"
  if ! "$out/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
       -artifact_prefix="$out/crash-$t-" "$dir" > "$out/fuzz_$t.log" 2>&1; then
    tail -40 "$out/fuzz_$t.log"
    status=1
  else
    grep -E "^#[0-9]+.*(DONE|pulse)" "$out/fuzz_$t.log" | tail -1
  fi
done
exit $status
