#!/usr/bin/env bash
# Checks an installed cudoctor as a new user meets it: on PATH, its manual page, its bash, zsh
# and fish completions where the shells look, a guess for a typo, and a run.
#   scripts/check-installed.sh [PREFIX]    (default /usr, where the .deb installs)
set -euo pipefail
prefix=${1:-/usr}
fail() { echo "check-installed: $*" >&2; exit 1; }

bin=$(command -v cudoctor) || fail "cudoctor is not on PATH"
[[ $bin == "$prefix/bin/cudoctor" ]] || fail "cudoctor on PATH is $bin, not $prefix/bin/cudoctor"
cudoctor --version | grep -Eq '^cudoctor [0-9.]+ \(commit [0-9a-f]{12}(-dirty)?\), knowledge base compiled ' ||
  fail "--version: $(cudoctor --version)"
page=$(man -w cudoctor) || fail "man cudoctor: no manual page"
[[ $page == "$prefix/share/man/man1/cudoctor.1.gz" ]] || fail "man cudoctor opens $page"
text=$(MANPAGER=cat MANWIDTH=80 man cudoctor 2>/dev/null | col -bx)
[[ $text == *$'\nCOMMANDS\n'* ]] || fail "man cudoctor: no COMMANDS section"
bash_completion=$prefix/share/bash-completion/completions/cudoctor
[[ -f $bash_completion ]] || fail "no $bash_completion"
offered=$(bash --norc -c "source '$bash_completion'; COMP_WORDS=(cudoctor pl); COMP_CWORD=1; _cudoctor; echo \"\${COMPREPLY[*]}\"")
[[ $offered == plan ]] || fail "bash completes 'cudoctor pl' to '$offered'"
[[ -f $prefix/share/zsh/vendor-completions/_cudoctor ]] || fail "no zsh completion"
[[ -f $prefix/share/fish/vendor_completions.d/cudoctor.fish ]] || fail "no fish completion"
if command -v fish >/dev/null; then
  # fish finds vendor completions by itself: no source.
  home=$(mktemp -d)
  [[ $(HOME=$home XDG_CONFIG_HOME=$home fish -c 'complete -C "cudoctor pl"' | cut -f1) == plan ]] || fail "fish does not complete cudoctor"
  rm -rf "$home"
fi
for f in slurm/cudoctor-healthcheck slurm/cudoctor-fleet; do
  [[ -x $prefix/share/cudoctor/$f ]] || fail "no $prefix/share/cudoctor/$f (executable)"
done
for f in nhc/cudoctor.nhc npd/cudoctor-plugin-monitor.json kubernetes/daemonset.yaml kubernetes/job.yaml; do
  [[ -f $prefix/share/cudoctor/$f ]] || fail "no $prefix/share/cudoctor/$f"
done
guess=$(cudoctor chek 2>&1 >/dev/null || true)
[[ $guess == *"Did you mean 'check'?"* ]] || fail "cudoctor chek: $guess"
rc=0
cudoctor --no-runtime >/dev/null || rc=$?
[[ $rc -le 1 ]] || fail "cudoctor --no-runtime exited $rc"
echo "installed: $bin ($(cudoctor version)); man, bash/zsh/fish completions and the Slurm, NHC, NPD and Kubernetes recipes in place; 'cudoctor pl' completes to plan"
