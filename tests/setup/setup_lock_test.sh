#!/usr/bin/env bash
# ci/setup.sh against ci/sid.lock, in a scratch FLASHPROOF_CACHE (the machine's prefix is never
# touched): the locked versions install from cached debs without the mirror; a second run keeps the
# prefix; a malformed or missing lock is refused with what to do; a locked version that neither the
# cache nor the mirror has stops with the package, the version, and --update-lock. That last part
# asks the mirror (its index: 41 s here under load), so it runs only with FLASHPROOF_TEST_MIRROR=1
# (CI time); the offline parts take about 20 s.
# usage: setup_lock_test.sh WORKDIR      exit 0 pass, 1 fail, 125 skipped (no cached sid debs here)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$1
REAL=${FLASHPROOF_CACHE:-/var/cache/flashproof}
LOCK=$ROOT/ci/sid.lock
fail() { echo "FAIL: $*"; echo "working files kept in $W"; exit 1; }
rm -rf "$W" && mkdir -p "$W/cache/debs"
while IFS='=' read -r p v; do
  f=$(find "$REAL/debs" -maxdepth 1 -name "${p}_${v//:/%3a}_*.deb" | head -1)
  [ -n "$f" ] || { echo "SKIP: $REAL/debs has no $p=$v (run ci/setup.sh first)"; exit 125; }
  cp "$f" "$W/cache/debs/"
done < <(grep -v '^#' "$LOCK")
setup() { FLASHPROOF_CACHE=$W/cache FLASHPROOF_NO_CHROMIUM=1 bash "$ROOT/ci/setup.sh" >"$W/out.txt" 2>&1; }
expect() { grep -Fq -- "$1" "$W/out.txt" || { cat "$W/out.txt"; fail "output lacks: $1"; }; }

setup || { cat "$W/out.txt"; fail "setup from cached debs failed"; }
expect "unpacking $(grep -vc '^#' "$LOCK") sid packages into $W/cache/sid-prefix"
! grep -q "fetching the sid package index" "$W/out.txt" || fail "the mirror was asked although every locked deb was cached"
diff <(sort "$W/cache/sid-prefix/PACKAGES") <(grep -v '^#' "$LOCK" | sed 's/^\([^=]*\)=\(.*\)$/Package: \1 Version: \2/' | LC_ALL=C sort) ||
  fail "the prefix's PACKAGES differ from the lock"
expect "$(sed -n 's/^# llama-server --version: /llama.cpp from Debian sid: version: /p' "$LOCK")"
grep -q "FLASHPROOF_PREFIX=$W/cache/sid-prefix" "$W/cache/env.sh" || fail "env.sh does not name the prefix"

setup || fail "second run failed"
expect "$W/cache/sid-prefix holds the locked versions"

printf 'libc6 2.43-7\n' >"$W/bad.lock"
FLASHPROOF_SID_LOCK=$W/bad.lock setup && fail "a malformed lock was accepted"
expect "$W/bad.lock:1: 'libc62.43-7' is not a 'package=version' line"
FLASHPROOF_SID_LOCK=$W/none.lock setup && fail "a missing lock was accepted"
expect "no lock file $W/none.lock: create it from what Debian sid has now with: ci/setup.sh --update-lock"

# A version the mirror does not have (the cache has no copy either): the clear message.
if [ "${FLASHPROOF_TEST_MIRROR:-0}" != 1 ]; then
  rm -rf "$W"
  echo "PASS (offline parts; FLASHPROOF_TEST_MIRROR=1 also checks the message for a version the mirror lacks)"
  exit 0
fi
mkdir -p "$W/cache/apt" && cp -r "$REAL/apt/lists" "$W/cache/apt/" 2>/dev/null
sed 's/^libc6=.*/libc6=2.0-0flashproof/' "$LOCK" >"$W/gone.lock"
if FLASHPROOF_SID_LOCK=$W/gone.lock setup; then fail "a version the mirror lacks was accepted"; fi
if grep -q "pins versions the Debian sid mirror no longer has" "$W/out.txt"; then
  expect "  libc6=2.0-0flashproof (sid has libc6="
  expect "either move to what sid has now, on purpose: ci/setup.sh --update-lock"
  expect "or keep this build: copy its cached .deb files (libc6_2.0-0flashproof_*.deb ...)"
  cmp -s <(sort "$W/cache/sid-prefix/PACKAGES") <(grep -v '^#' "$LOCK" | sed 's/^\([^=]*\)=\(.*\)$/Package: \1 Version: \2/' | LC_ALL=C sort) ||
    fail "the failed setup changed the prefix"
else
  echo "note: the mirror was not reachable, the missing-version message was not checked:"; tail -3 "$W/out.txt"
fi
rm -rf "$W"
echo "PASS"
