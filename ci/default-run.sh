#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds what it runs (the flashproof
# target and the kernel probe it carries: not the unit tests or benchmarks, which ci/test.sh builds),
# generates the models and runs the default cases against Debian sid's llama-server on this CPU. The
# table's header comes first and each case's row as soon as that case is done.
# Goldens: the committed ones for this machine's fingerprint when they exist (golden/<id>/);
# otherwise this run records a first golden into a scratch folder, and says so, from 3 fresh
# launches per case: the fewest whose spread gives a noise band at all (golden/threshold_policy.h
# kMinGoldenLaunches; a golden's band then widens with the nights, docs/upgrade-gate.md).
# env: FLASHPROOF_GOLDEN_LAUNCHES (default 3) launches per case for that first golden
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fp_build flashproof

id=$("$FP_BUILD/flashproof" fingerprint)
golden="$FP_ROOT/golden"
extra=()
if [ ! -d "$golden/$id" ]; then
  launches=${FLASHPROOF_GOLDEN_LAUNCHES:-3}
  golden=$(mktemp -d /tmp/flashproof-golden.XXXXXX)
  extra=(--record-missing --launches "$launches")
  echo "no committed golden for this machine ($id): recording a first one in $golden ($launches fresh launches per case)" >&2
  echo "(review it and keep it with: flashproof accept <run folder>)" >&2
fi
mapfile -t cases < <(fp_default_cases)
cd "$FP_ROOT"
exec "$FP_BUILD/flashproof" run "${cases[@]/#$FP_ROOT\//}" --golden "$golden" "${extra[@]}"
