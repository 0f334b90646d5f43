#!/usr/bin/env bash
# Seed 004 Table 4 on UD Greek: an RDA model trained with the dynamic oracle
# (sampling exploration after the first epoch), its decisions on the test set
# binned by probability.  Usage: docs/experiments/calibration.sh DATA_DIR OUT_DIR
set -euo pipefail
data=$1/ud/UD_Greek-GDT
out=$2
mkdir -p "$out"
semiparse train "$data/el_gdt-ud-train.conllu" --system arc_standard --oracle dynamic \
    --trainer rda --nonproj projectivize --epochs 3 --seed 1 --quiet -o "$out/el_rda.npz"
semiparse parse "$out/el_rda.npz" "$data/el_gdt-ud-test.conllu" --probabilities --quiet \
    -o "$out/el_test_parsed.conllu"
semiparse evaluate "$data/el_gdt-ud-test.conllu" "$out/el_test_parsed.conllu" --calibration
