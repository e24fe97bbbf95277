# shellcheck shell=bash disable=SC2154  # CACHE, PREFIX, LOCK, update_lock: set by ci/setup.sh
# Sourced by ci/setup.sh: Debian sid's packages at the versions of a lock file (ci/sid.lock), from
# a cache of .deb files kept per version, unpacked into a private prefix. Uses setup.sh's CACHE,
# PREFIX, LOCK, update_lock and LOG, and debian_mirror.sh.
#
# The lock holds one "package=version" line per package, sorted, and a comment naming the
# llama.cpp build they make. `sid_lock_install PACKAGE...`:
#   - reads the versions from the lock (a package setup.sh lists that the lock lacks is locked at
#     what sid has now, and said so); with --update-lock takes what sid has now for every package;
#   - takes each .deb from $CACHE/debs when that version is there (no mirror needed), else downloads
#     exactly that version; a version the mirror no longer has stops here with what to do;
#   - unpacks them into $PREFIX unless the prefix already holds exactly these versions
#     ($PREFIX/PACKAGES), or FLASHPROOF_REFRESH=1;
#   - with --update-lock, or when a package was added, rewrites the lock (atomically) and prints
#     what changed, old -> new.

sid_apt_ready=0
sid_apt_opts=()
declare -A sid_locked=() sid_want=()

# The private apt configuration for sid (never the system's), and the sid index, fetched once.
sid_index() {
  ((sid_apt_ready)) && return 0
  local apt_dir="$CACHE/apt" uri
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  uri=$(debian_mirror_uri) || exit 1
  printf 'deb [signed-by=%s] %s sid main\n' /usr/share/keyrings/debian-archive-keyring.gpg "$uri" >"$apt_dir/sources.list"
  sid_apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
                -o APT::Architecture=amd64 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)
  LOG "fetching the sid package index"
  apt-get "${sid_apt_opts[@]}" update -qq
  sid_apt_ready=1
}

# The version of PACKAGE sid has now ("" when sid has none). After sid_index (in this shell: a
# command substitution cannot set sid_apt_ready for its parent).
sid_candidate() {
  apt-cache "${sid_apt_opts[@]}" show --no-all-versions "$1" 2>/dev/null | awk '/^Version:/ {print $2; exit}'
}

# Whether the mirror has exactly PACKAGE=VERSION. After sid_index.
sid_has() {
  apt-cache "${sid_apt_opts[@]}" madison "$1" 2>/dev/null | awk -F'|' -v v="$2" '{gsub(/ /, "", $2)} $2 == v {found = 1} END {exit !found}'
}

# The cached .deb of PACKAGE at VERSION, or "" (apt's file name: "pkg_version_arch.deb", ':' as %3a;
# checked against the package's own control fields).
sid_cached_deb() {
  local f
  for f in "$CACHE/debs/${1}_${2//:/%3a}_"*.deb; do
    [ -f "$f" ] || continue
    [ "$(dpkg-deb -f "$f" Package Version 2>/dev/null | paste -sd' ')" = "Package: $1 Version: $2" ] && { echo "$f"; return; }
  done
}

sid_read_lock() {
  local line n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [ -z "$line" ] && continue
    if [[ ! $line =~ ^[a-z0-9][a-z0-9.+-]*=[0-9][A-Za-z0-9.+~:-]*$ ]]; then
      LOG "$LOCK:$n: '$line' is not a 'package=version' line (e.g. libggml0=0.27.0-1)"
      exit 1
    fi
    sid_locked[${line%%=*}]=${line#*=}
  done <"$LOCK"
}

# Writes the lock for the wanted versions, with the build they make ($PREFIX/VERSION), atomically.
sid_write_lock() {
  local build p
  build=$(grep -m1 '^version' "$PREFIX/VERSION" 2>/dev/null || head -1 "$PREFIX/VERSION")
  {
    echo "# Debian sid packages ci/setup.sh unpacks into its private prefix, at exactly these versions."
    echo "# Change them only with ci/setup.sh --update-lock, and gate the new build (docs/upgrade-gate.md)."
    echo "# llama-server --version: ${build#version: }"
    for p in "${!sid_want[@]}"; do echo "$p=${sid_want[$p]}"; done | LC_ALL=C sort
  } >"$LOCK.tmp.$$"
  mv "$LOCK.tmp.$$" "$LOCK"
}

sid_lock_install() {
  local packages=("$@") p v old_build="" changed=() gone=() missing=() debs=() lock_dirty=$update_lock unchanged=0
  if [ -f "$LOCK" ]; then
    sid_read_lock
    old_build=$(sed -n 's/^# llama-server --version: //p' "$LOCK" | head -1)
  elif ((!update_lock)); then
    LOG "no lock file $LOCK: create it from what Debian sid has now with: ci/setup.sh --update-lock"
    exit 1
  fi
  for p in "${packages[@]}"; do
    if ((update_lock)) || [ -z "${sid_locked[$p]:-}" ]; then
      sid_index
      v=$(sid_candidate "$p")
      [ -n "$v" ] || { LOG "Debian sid has no package '$p' (listed in ci/setup.sh's sid_packages)"; exit 1; }
      sid_want[$p]=$v
      if ((!update_lock)); then
        LOG "$LOCK: $p is not locked yet: locking what sid has now, $p=$v (commit the lock)"
        lock_dirty=1
      fi
    else
      sid_want[$p]=${sid_locked[$p]}
    fi
  done
  for p in "${!sid_locked[@]}"; do
    ((update_lock)) || [ -n "${sid_want[$p]:-}" ] || LOG "$LOCK: $p=${sid_locked[$p]} is locked but ci/setup.sh no longer installs it (--update-lock drops it)"
  done

  # Every wanted .deb from the cache, or from the mirror at exactly that version.
  mkdir -p "$CACHE/debs"
  for p in "${packages[@]}"; do [ -n "$(sid_cached_deb "$p" "${sid_want[$p]}")" ] || missing+=("$p"); done
  ((${#missing[@]} == 0)) || sid_index
  for p in "${missing[@]}"; do sid_has "$p" "${sid_want[$p]}" || gone+=("$p"); done
  if ((${#gone[@]})); then
    LOG "$LOCK pins versions the Debian sid mirror no longer has, and $CACHE/debs holds no copy of them:"
    for p in "${gone[@]}"; do
      v=$(sid_candidate "$p")
      LOG "  $p=${sid_want[$p]} (sid has ${v:+$p=}${v:-no package $p now})"
    done
    LOG "either move to what sid has now, on purpose: ci/setup.sh --update-lock (prints what changes;"
    LOG "  gate the new build before committing the lock: docs/upgrade-gate.md),"
    LOG "or keep this build: copy its cached .deb files (${gone[0]}_${sid_want[${gone[0]}]//:/%3a}_*.deb ...)"
    LOG "  from a machine that has them (its \$FLASHPROOF_CACHE/debs) into $CACHE/debs and run ci/setup.sh again"
    exit 1
  fi
  if ((${#missing[@]})); then
    local specs=()
    for p in "${missing[@]}"; do specs+=("$p=${sid_want[$p]}"); done
    LOG "downloading ${#specs[@]} sid package(s) into $CACHE/debs: ${specs[*]}"
    (cd "$CACHE/debs" && apt-get "${sid_apt_opts[@]}" download "${specs[@]}" >/dev/null)
  fi
  for p in "${packages[@]}"; do
    v=$(sid_cached_deb "$p" "${sid_want[$p]}")
    [ -n "$v" ] || { LOG "$p=${sid_want[$p]}: downloaded, but no matching .deb in $CACHE/debs"; exit 1; }
    debs+=("$v")
  done

  # The prefix, unless it holds exactly these versions already.
  local want_list have_list=""
  want_list=$(for p in "${packages[@]}"; do echo "Package: $p Version: ${sid_want[$p]}"; done | LC_ALL=C sort)
  [ -f "$PREFIX/PACKAGES" ] && have_list=$(LC_ALL=C sort "$PREFIX/PACKAGES")
  if [ -x "$PREFIX/usr/bin/llama-server" ] && [ -f "$PREFIX/VERSION" ] && [ "$have_list" = "$want_list" ] &&
     [ "${FLASHPROOF_REFRESH:-0}" != 1 ]; then
    LOG "$PREFIX holds the locked versions (${#packages[@]} packages)"
  else
    LOG "unpacking ${#packages[@]} sid packages into $PREFIX"
    rm -rf "$PREFIX.tmp" && mkdir -p "$PREFIX.tmp"
    for v in "${debs[@]}"; do dpkg -x "$v" "$PREFIX.tmp"; done
    local libdir="$PREFIX.tmp/usr/lib/x86_64-linux-gnu" b
    # ggml loads every backend it finds beside the executable (the loader, when started through it):
    # the CPU variants go there. The Vulkan backend goes into llama/, on the library path but not where
    # ggml looks, so only a launch that names it (GGML_BACKEND_PATH=libggml-vulkan.so, the vulkan
    # cases' launch.env) pays for a Vulkan instance (about 0.4 s per start here).
    for b in "$libdir"/ggml/backends0/*.so; do
      n=$(basename "$b")
      if [ "$n" = libggml-vulkan.so ]; then ln -sf "../ggml/backends0/$n" "$libdir/llama/$n"
      else ln -sf "ggml/backends0/$n" "$libdir/$n"; fi
    done
    echo "$want_list" >"$PREFIX.tmp/PACKAGES"
    libdir="$PREFIX.tmp/usr/lib/x86_64-linux-gnu"
    "$libdir/ld-linux-x86-64.so.2" --library-path "$libdir:$libdir/llama" "$PREFIX.tmp/usr/bin/llama-server" --version \
      >"$PREFIX.tmp/VERSION" 2>&1 || { LOG "llama-server --version failed:"; cat "$PREFIX.tmp/VERSION" >&2; exit 1; }
    rm -rf "$PREFIX" && mv "$PREFIX.tmp" "$PREFIX"
  fi

  local build
  build=$(grep -m1 '^version' "$PREFIX/VERSION" || head -1 "$PREFIX/VERSION")
  build=${build#version: }
  if ((lock_dirty)); then
    for p in "${packages[@]}"; do
      if [ "${sid_locked[$p]:-}" = "${sid_want[$p]}" ]; then unchanged=$((unchanged + 1)); continue; fi
      changed+=("  $p: ${sid_locked[$p]:-(not locked)} -> ${sid_want[$p]}")
    done
    for p in "${!sid_locked[@]}"; do [ -n "${sid_want[$p]:-}" ] || changed+=("  $p: ${sid_locked[$p]} -> (dropped)"); done
    sid_write_lock
    if ((${#changed[@]} && !update_lock)); then
      LOG "$LOCK: added (the locked packages keep their versions; commit the lock):"
      printf '%s\n' "${changed[@]}" | while IFS= read -r v; do LOG "$v"; done
    elif ((${#changed[@]})); then
      LOG "$LOCK: moved to what Debian sid has now; changed (old -> new):"
      printf '%s\n' "${changed[@]}" | LC_ALL=C sort | while IFS= read -r v; do LOG "$v"; done
      LOG "  llama-server --version: ${old_build:-(unknown)} -> $build"
      LOG "$unchanged package(s) unchanged; gate the new build, then commit $LOCK (docs/upgrade-gate.md)"
    else
      LOG "$LOCK: already what Debian sid has now (${#packages[@]} packages); nothing changed"
    fi
  elif [ -n "$old_build" ] && [ "$old_build" != "$build" ]; then
    LOG "warning: $LOCK says llama-server --version '$old_build', the prefix says '$build'"
  fi
}
