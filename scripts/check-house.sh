#!/usr/bin/env bash
# The house rules a compiler does not check (docs/contributing.md), run by scripts/test.sh:
#   - no product source file over 400 lines (tests excepted);
#   - the pure layers include no file-system, process or probing code;
#   - every line changed since the tree was formatted is clang-format clean.
# Exit 1 with one line per breach.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
bad=0
breach() { echo "house: $*"; bad=1; }

while read -r f; do
  n=$(wc -l <"$f")
  ((n <= 400)) || breach "$f has $n lines (at most 400: split it by concern)"
done < <(git ls-files 'src/*.cpp' 'src/*.hpp' | grep -v '_test\.cpp$')

# Rules judge, the report decides, renderers print, the planner and the knowledge base answer:
# none of them reads the machine. Only probes, runtime children, ld and sys may.
pure=(src/cudoctor/rules src/cudoctor/report src/cudoctor/render src/cudoctor/plan src/cudoctor/view src/cudoctor/explain src/cudoctor/fleet
      src/cudoctor/compat src/cudoctor/snapshot src/cudoctor/kb)
forbidden='#include <(fstream|filesystem|dlfcn\.h|unistd\.h)>|#include "cudoctor/(sys|probe|runtime)/|#include "cudoctor/ld/resolver\.hpp"'
while IFS=: read -r f line text; do
  breach "$f:$line: a pure layer includes ${text#\#include }"
done < <(git ls-files "${pure[@]/%//*.cpp}" "${pure[@]/%//*.hpp}" | grep -v '_test\.cpp$' |
         xargs grep -nE "$forbidden" /dev/null || true)

# The whole tree was formatted once at this commit; every change since must keep it so.
format_base=42cdfa3
if git cat-file -e "$format_base^{commit}" 2>/dev/null; then
  if command -v git-clang-format >/dev/null; then
    out=$(git clang-format --diff --extensions c,h,cpp,hpp "$format_base" -- src tests bench 2>&1 || true)
    if grep -q '^diff --git' <<<"$out"; then
      breach "lines changed since $format_base are not clang-format clean; run: git clang-format $format_base"
      echo "$out" | head -40
    fi
  else
    breach "git-clang-format is missing (scripts/install-deps.sh --test installs clang-format)"
  fi
else
  echo "house: $format_base not in this clone's history; format check skipped"
fi
exit $bad
