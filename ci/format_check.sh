#!/usr/bin/env bash
# Checks the format of the C++ lines a change touches against .clang-format (Debian bookworm's
# clang-format, `git clang-format`), never the legacy lines around them.
#
# usage: ci/format_check.sh [BASE]
# The change is everything between BASE and the working tree (committed or not). BASE, first found:
#   1. the argument, or $FLASHPROOF_FORMAT_BASE;
#   2. the merge-base of HEAD with origin/main, else with main, where that is not HEAD itself (a branch:
#      its own changes);
#   3. the commit that added .clang-format (on main, or a fresh clone with no remote: every line
#      changed since the rule began). A clone too shallow to hold it is skipped, saying so.
# exit: 0 formatted, 1 not (the diff that would fix it is printed), 125 skipped (no git, no
# clang-format, no history)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
skip() { echo "SKIP: $*"; exit 125; }
command -v git >/dev/null || skip "no git"
git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
CF=$(command -v clang-format || true)
GCF=$(command -v git-clang-format || true)
[ -n "$CF" ] && [ -n "$GCF" ] || skip "no clang-format / git-clang-format (Debian package clang-format; ci/setup.sh installs it)"

base=${1:-${FLASHPROOF_FORMAT_BASE:-}}
how="given"
if [ -z "$base" ]; then
  head=$(git rev-parse HEAD)
  for ref in origin/main main; do
    git rev-parse -q --verify "$ref^{commit}" >/dev/null || continue
    mb=$(git merge-base HEAD "$ref" 2>/dev/null) || continue
    if [ "$mb" != "$head" ]; then base=$mb how="merge-base with $ref"; break; fi
  done
fi
if [ -z "$base" ]; then
  base=$(git log --diff-filter=A --format=%H -1 -- .clang-format)
  how="the commit that added .clang-format"
  [ -n "$base" ] || { base=HEAD how="HEAD (.clang-format not committed yet)"; }
fi
git cat-file -e "$base^{commit}" 2>/dev/null || skip "base $base ($how) is not in this clone (shallow?)"

echo "format check: lines changed since $(git rev-parse --short "$base") ($how), $("$CF" --version | head -1)"
out=$("$GCF" --binary "$CF" --diff --extensions c,cc,cpp,h,hpp "$base" -- src tests bench fuzz 2>&1)
rc=$?
case "$out" in
  *"no modified files to format"* | *"did not modify any files"*) echo "format check: every changed line is formatted"; exit 0 ;;
esac
[ $rc -le 1 ] || { echo "$out"; echo "format check: git clang-format failed (exit $rc)"; exit 2; }
echo "$out"
echo "format check: FAIL: the lines above are not formatted; fix them with: git clang-format $(git rev-parse --short "$base")"
exit 1
