#!/usr/bin/env bash
# Every recorded gate.json in the repository, replayed by a gate_replay binary (bench/gate_replay.cpp):
# one line per file with the outcome and the blocks of the last look. Run it with two builds' binaries
# and diff the tables to see what a change to the gate's decision procedure does on real launches
# (docs/gate-design.md "Replayed").
# usage: bench/gate_replay_table.sh GATE_REPLAY_BINARY > table.tsv   (from the repository root)
set -uo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find fixtures bench -name '*.json' -o -name '*.json.gz' | sort | while read -r f; do
  g=$f
  case $f in *.gz) g=$tmp/gate.json; zcat "$f" >"$g" 2>/dev/null || continue ;; esac
  grep -q '"launches"' "$g" && grep -q '"gated"' "$g" || continue
  out=$("$bin" "$g" 2>&1 | tail -1)
  printf '%s\t%s\n' "$f" "${out#"$g": }"
done
