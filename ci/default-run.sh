#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds, generates the models and
# runs the default cases against Debian sid's llama-server on this CPU, printing a short table.
# Goldens: the committed ones for this machine's fingerprint when they exist (golden/<id>/);
# otherwise this run records a first golden into a scratch folder, and says so.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fp_build

id=$("$FP_BUILD/flashproof" fingerprint)
golden="$FP_ROOT/golden"
extra=()
if [ ! -d "$golden/$id" ]; then
  golden=$(mktemp -d /tmp/flashproof-golden.XXXXXX)
  extra=(--record-missing)
  echo "no committed golden for this machine ($id): recording a first one in $golden (5 fresh launches per case)" >&2
  echo "(review it and keep it with: flashproof accept <run folder>)" >&2
fi
mapfile -t cases < <(fp_default_cases)
cd "$FP_ROOT"
exec "$FP_BUILD/flashproof" run "${cases[@]/#$FP_ROOT\//}" --golden "$golden" "${extra[@]}"
