//! Built-in benchmark scenarios (`ccsim bench`): a 10-to-1 incast at 100G for 10 ms and the
//! 320-host fat-tree with WebSearch at 50% load for 5 ms of arrivals. Plain names run DCQCN;
//! `<name>-<scheme>` runs the same scenario with another scheme; `incast-lossy` runs the incast
//! with PFC off, 128-packet drop-tail queues and IRN recovery; `incast-amrt` runs AMRT on
//! that lossy fabric, `incast-ndp` NDP with 8-packet queues, `incast-homa` Homa on it with strict
//! priorities. `fattree-k<K>` is the k-ary
//! fat-tree (K^3/4 hosts, 100G everywhere) with WebSearch at 30% load and DCQCN for 0.5 ms:
//! the same load per host at every size, so the cost per link traversal shows how it scales;
//! `fattree-k<K>-<scheme>` runs it with another scheme.

/// Benchmark names, in `ccsim bench` order.
pub const NAMES: &[&str] = &[
    "incast",
    "incast-timely",
    "incast-hpcc",
    "incast-dctcp",
    "incast-qcn",
    "incast-lossy",
    "incast-amrt",
    "incast-ndp",
    "incast-rcp",
    "incast-homa",
    "incast-expresspass",
    "fattree",
    "fattree-hpcc",
    "fattree-k8",
    "fattree-k16",
    "fattree-k32",
    "fattree-k32-hpcc",
];

const INCAST: &str = r#"
name = "bench-incast"
duration = "10ms"
topology = { kind = "star", hosts = 11, link = { rate = "100Gbps", delay = "1us" } }
cc = { scheme = "SCHEME" }
[[workload]]
kind = "long_lived"
pairs = [[0, 10], [1, 10], [2, 10], [3, 10], [4, 10], [5, 10], [6, 10], [7, 10], [8, 10], [9, 10]]
"#;

const FATTREE: &str = r#"
name = "bench-fattree"
topology = { kind = "fat_tree", pods = 5, tors_per_pod = 4, aggs_per_pod = 4, cores = 16, hosts_per_tor = 16, host_link = { rate = "100Gbps", delay = "1us" }, fabric_link = { rate = "400Gbps", delay = "1us" } }
cc = { scheme = "SCHEME" }
[[workload]]
kind = "poisson"
cdf = "websearch"
load = 0.5
stop = "5ms"
"#;

const FATTREE_K: &str = r#"
name = "bench-fattree-kK"
duration = "0.5ms"
topology = { kind = "fat_tree", k = K, host_link = { rate = "100Gbps", delay = "1us" }, fabric_link = { rate = "100Gbps", delay = "1us" } }
cc = { scheme = "SCHEME" }
[[workload]]
kind = "poisson"
cdf = "websearch"
load = 0.3
stop = "0.5ms"
"#;

/// What `-lossy` adds to its lossy fabric: IRN recovery.
const IRN: &str = r#"
host = { recovery = { mode = "irn" } }"#;

/// The TOML text of a benchmark.
pub fn scenario(name: &str) -> Option<String> {
    if !NAMES.contains(&name) {
        return None;
    }
    if let Some(rest) = name.strip_prefix("fattree-k") {
        let (k, scheme) = rest.split_once('-').unwrap_or((rest, "dcqcn"));
        return Some(FATTREE_K.replace('K', k).replace("SCHEME", scheme));
    }
    let (base, variant) = name.split_once('-').unwrap_or((name, "dcqcn"));
    let text = match base {
        "incast" => INCAST,
        _ => FATTREE,
    };
    // The lossy fabric: drop-tail queues of `queue_packets`, then what `extra` adds; strict
    // scheduling for a scheme that ranks packets by priority (Homa).
    let lossy = |scheme: &str, queue_packets: u32, extra: &str| {
        let strict = crate::cc::scheme(scheme).is_some_and(|s| s.strict_priority);
        let scheduler = if strict {
            "scheduler = \"strict\", "
        } else {
            ""
        };
        let fabric = format!("\nfabric = {{ {scheduler}pfc = {{ enabled = false }}, loss = {{ mode = \"drop_tail\", queue_packets = {queue_packets} }} }}");
        text.replace("SCHEME", scheme)
            .replace("\n[[workload]]", &format!("{fabric}{extra}\n[[workload]]"))
    };
    Some(match variant {
        "lossy" => lossy("dcqcn", 128, IRN),
        "amrt" => lossy("amrt", 128, ""),
        // NDP's switches: 8-packet data queues that trim.
        "ndp" => lossy("ndp", 8, ""),
        // Homa on the 128-packet lossy fabric, as AMRT.
        "homa" => lossy("homa", 128, ""),
        _ => text.replace("SCHEME", variant),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_is_a_valid_scenario_and_a_fattree_suffix_names_its_scheme() {
        let dir = std::env::temp_dir();
        for name in NAMES {
            let text = scenario(name).expect("a benchmark");
            let sc = crate::scenario::Scenario::load(&text, &dir, None, &[])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let scheme = &sc.cfg.cc.scheme;
            let want = match name.rsplit_once('-') {
                Some((_, s)) if crate::cc::scheme(s).is_some() => s,
                _ => "dcqcn",
            };
            assert_eq!(scheme, want, "{name}");
        }
        assert!(scenario("fattree-k32-hpcc").unwrap().contains("k = 32,"));
        assert_eq!(scenario("fattree-k7"), None);
    }
}
