//! Seeds for the scenario fuzz target (`fuzz/seed-corpus.sh` runs it): one small scenario per
//! registered scheme with every parameter written out at its default, each checked to load and
//! build, and a libFuzzer dictionary of the names and units a scenario uses (keys, schemes,
//! their parameters, units), so the fuzzer starts from every scheme's code and can mutate its
//! parameters (it found QCN's `ref_rate = 0` division this way).
//!
//! Usage: cargo run --example fuzz_seeds -- CORPUS_DIR DICT_FILE

use ccsim::cc::{schemes, CcParams, FabricMode};
use std::collections::BTreeSet;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, corpus, dict] = &args[..] else {
        eprintln!("usage: fuzz_seeds CORPUS_DIR DICT_FILE");
        std::process::exit(2);
    };
    std::fs::create_dir_all(corpus).expect("corpus directory");
    let mut words: BTreeSet<String> = [
        "name",
        "duration",
        "seed",
        "topology",
        "kind",
        "hosts",
        "link",
        "rate",
        "delay",
        "fabric",
        "pfc",
        "enabled",
        "xoff",
        "loss",
        "mode",
        "queue_packets",
        "ecn",
        "kmin",
        "kmax",
        "pmax",
        "cc",
        "scheme",
        "params",
        "host",
        "workload",
        "senders",
        "receiver",
        "size",
        "at",
        "flows",
        "src",
        "dst",
        "start",
        "stop",
        "output",
        "queues",
        "interval",
        "ports",
        "all",
        "star",
        "dumbbell",
        "fat_tree",
        "incast",
        "poisson",
        "long_lived",
        "drop_tail",
        "dynamic",
        "static",
        "bps",
        "Kbps",
        "Mbps",
        "Gbps",
        "ps",
        "ns",
        "us",
        "ms",
        "s",
        "B",
        "KB",
        "MB",
        "GB",
        "KiB",
        "MiB",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    for info in schemes() {
        let params = CcParams::parse(info.name, &toml::Table::new())
            .expect("every scheme has defaults")
            .to_table();
        collect_keys(&params, &mut words);
        words.insert(info.name.to_string());
        let fabric = match info.fabric {
            FabricMode::Lossy => {
                "[fabric]\nscheduler = \"strict\"\npfc = { enabled = false }\nloss = { mode = \"drop_tail\", queue_packets = 32 }\n"
            }
            // Strict priorities, which Homa's levels need, change nothing for the others.
            _ => "[fabric]\nscheduler = \"strict\"\n",
        };
        let base = format!(
            "name = \"seed-{0}\"\nduration = \"300us\"\n[topology]\nkind = \"star\"\nhosts = 5\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n{fabric}[cc]\nscheme = \"{0}\"\n[[workload]]\nkind = \"incast\"\nsenders = 4\nreceiver = 4\nsize = \"64KB\"\nat = \"0us\"\n",
            info.name
        );
        let mut scenario: toml::Table = base.parse().expect("the template parses");
        scenario["cc"]
            .as_table_mut()
            .expect("[cc]")
            .insert("params".into(), toml::Value::Table(params));
        let text = toml::to_string(&scenario).expect("a scenario serializes");
        let sc = ccsim::Scenario::load(&text, std::path::Path::new("."), None, &[])
            .unwrap_or_else(|e| panic!("seed for {}: {e}", info.name));
        sc.build()
            .unwrap_or_else(|e| panic!("seed for {}: {e}", info.name));
        std::fs::write(format!("{corpus}/scheme-{}.toml", info.name), text).expect("write seed");
    }
    let lines: String = words.iter().map(|w| format!("\"{w}\"\n")).collect();
    std::fs::write(dict, lines).expect("write dictionary");
    println!(
        "{} scheme seeds in {corpus}, {} words in {dict}",
        schemes().count(),
        words.len()
    );
}

/// Every key of `t`, nested tables' too.
fn collect_keys(t: &toml::Table, out: &mut BTreeSet<String>) {
    for (k, v) in t {
        out.insert(k.clone());
        if let toml::Value::Table(inner) = v {
            collect_keys(inner, out);
        }
    }
}
