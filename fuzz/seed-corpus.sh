#!/usr/bin/env bash
# Seed each fuzz target's corpus from the repository's own inputs (scenarios/, the workloads'
# CDFs, a scenario per scheme): run once before `cargo fuzz run TARGET`.
set -euo pipefail
cd "$(dirname "$0")"
root=..
mkdir -p corpus/scenario corpus/hpcc_topology corpus/hpcc_flows corpus/ccsim_topology corpus/cdf
for f in "$root"/scenarios/*.toml "$root"/scenarios/*/*.toml; do
    cp "$f" "corpus/scenario/$(basename "$(dirname "$f")")-$(basename "$f")"
done
cp "$root"/scenarios/topologies/*.txt corpus/hpcc_topology/
cp "$root"/scenarios/flows/*.txt corpus/hpcc_flows/
cp "$root"/scenarios/topologies/*.toml corpus/ccsim_topology/
cp "$root"/crates/ccsim/workloads/*.cdf corpus/cdf/
# One scenario per scheme, every parameter at its default, and the dictionary of names and units
# (`cargo fuzz run scenario -- -dict=scenario.dict`).
cargo run --quiet --release --manifest-path "$root/Cargo.toml" -p ccsim --example fuzz_seeds -- \
    corpus/scenario scenario.dict
echo "corpus seeded: $(find corpus -type f | wc -l) files"
