#!/usr/bin/env bash
# Seed each fuzz target's corpus from the repository's own inputs (scenarios/, the workloads'
# CDFs): run once before `cargo fuzz run TARGET`.
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
echo "corpus seeded: $(find corpus -type f | wc -l) files"
