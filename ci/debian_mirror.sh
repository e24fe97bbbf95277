# Sourced by ci/setup.sh and tests/gpu/llama-cuda/make_bundle.sh. The repository never names a
# package registry: the mirror is the one this machine's apt already uses for the Debian archive
# (not -security), read from apt's own configuration.
debian_mirror_uri() {
  local f uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ {for (i=2;i<=NF;i++) if ($i ~ /\/debian\/?$/) {print $i; exit}}' "$f")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\// && $i ~ /\/debian\/?$/) {print $i; exit}}' /etc/apt/sources.list)
  fi
  if [ -z "$uri" ]; then
    printf 'no Debian archive URI found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list\n' >&2
    return 1
  fi
  printf '%s\n' "${uri%/}"
}
