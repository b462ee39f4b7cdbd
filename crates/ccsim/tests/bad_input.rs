//! Bad input gets a one-line error naming the field and the fix; nothing panics.
mod common;

use ccsim::Scenario;

const BASE: &str = "[topology]\nkind = \"star\"\nhosts = 3\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 2\nsize = \"10KB\"\n";

fn error_of(toml: &str, overrides: &[&str]) -> String {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let dir = std::env::temp_dir();
    match Scenario::load(toml, &dir, None, &ov).and_then(|s| s.build().map(|_| ())) {
        Ok(()) => panic!("accepted bad input: {toml} {overrides:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "error is not one line: {msg}");
            eprintln!("{msg}");
            msg
        }
    }
}

fn assert_mentions(msg: &str, needles: &[&str]) {
    for n in needles {
        assert!(msg.contains(n), "`{msg}` does not mention `{n}`");
    }
}

#[test]
fn unknown_keys_are_named() {
    assert_mentions(&error_of(&format!("colour = 1\n{BASE}"), &[]), &["colour"]);
    assert_mentions(&error_of(BASE, &["topology.hostz=4"]), &["hostz"]);
    assert_mentions(
        &error_of(BASE, &["fabric.pfc.xof=1"]),
        &["fabric.pfc", "xof"],
    );
    assert_mentions(
        &error_of(BASE, &["cc.scheme=dcqcn", "cc.params.gain=0.1"]),
        &["cc.params", "gain"],
    );
    assert_mentions(
        &error_of(BASE, &["cc.scheme=tcp_reno"]),
        &["cc.scheme", "tcp_reno", "dcqcn"],
    );
}

#[test]
fn wrong_or_missing_units_are_named() {
    assert_mentions(
        &error_of(BASE, &["topology.link.rate=100GB"]),
        &["topology.link.rate", "100GB", "Gbps"],
    );
    // A plain number is bytes: 512 B is below the RESUME point; the error names the field set.
    assert_mentions(
        &error_of(BASE, &["fabric.pfc.xoff=512"]),
        &["fabric.pfc.xoff:", "512 bytes", "resume_offset", "512KB"],
    );
    // Inside the topology (a tagged enum) the error still names the field.
    assert_mentions(
        &error_of(BASE, &["topology.link.delay=1"]),
        &["topology.link.delay:", "no unit"],
    );
    assert_mentions(
        &error_of(BASE, &["fabric.buffer=32XB"]),
        &["fabric.buffer", "XB"],
    );
    assert_mentions(&error_of(BASE, &["duration=5"]), &["duration", "no unit"]);
}

#[test]
fn negative_or_zero_values_are_rejected() {
    assert_mentions(
        &error_of(BASE, &["topology.link.rate=-100Gbps"]),
        &["topology", "non-negative"],
    );
    assert_mentions(
        &error_of(BASE, &["topology.link.rate=0Gbps"]),
        &["rate", "> 0"],
    );
    assert_mentions(&error_of(BASE, &["topology.hosts=0"]), &["topology.hosts"]);
    assert_mentions(
        &error_of(BASE, &["host.mtu_payload_bytes=0"]),
        &["host.mtu_payload_bytes"],
    );
    assert_mentions(
        &error_of(BASE, &["cc.scheme=dcqcn", "cc.params.g=-0.5"]),
        &["cc.params.g"],
    );
    assert_mentions(
        &error_of(BASE, &["fabric.pfc.max_t_on=\"0us\""]),
        &["fabric.pfc.max_t_on", "> 0"],
    );
    // TCD's max(T_on) moved to the fabric: the old place says where.
    assert_mentions(
        &error_of(BASE, &["cc.scheme=acc", "cc.params.tcd.max_t_on=\"24us\""]),
        &["cc.params.tcd.max_t_on", "fabric.pfc.max_t_on"],
    );
}

#[test]
fn a_first_window_the_scheme_cannot_use_is_refused() {
    let f = |x: &str| format!("flows=[{{src = 0, dst = 2, size = 100, {x}}}]");
    assert_mentions(
        &error_of(BASE, &[&f("first_window = \"10KB\"")]),
        &["flows[0].first_window", "scheme none", "remove it"],
    );
    let phost = ["cc.scheme=phost", "fabric.pfc.enabled=false"];
    for (w, needles) in [
        ("0B", &["flows[0].first_window", "must be 1 B"][..]),
        ("1GB", &["flows[0].first_window", "65535 packets"][..]),
    ] {
        let mut ov = phost.to_vec();
        let flows = f(&format!("first_window = \"{w}\""));
        ov.push(&flows);
        assert_mentions(&error_of(BASE, &ov), needles);
    }
}

#[test]
fn a_start_rate_above_what_the_flow_may_send_is_refused() {
    let f = |x: &str| format!("flows=[{{src = 0, dst = 2, size = 100, {x}}}]");
    assert_mentions(
        &error_of(BASE, &[&f("start_rate = \"0Gbps\"")]),
        &["flows[0].start_rate", "> 0"],
    );
    assert_mentions(
        &error_of(BASE, &[&f("rate = \"10Gbps\", start_rate = \"20Gbps\"")]),
        &["flows[0].start_rate", "rate", "lower start_rate"],
    );
    assert_mentions(
        &error_of(BASE, &[&f("start_rate = \"200Gbps\"")]),
        &["start_rate", "line rate", "lower start_rate"],
    );
    let w = "[[workload]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nrate = \"1Gbps\"\nstart_rate = \"2Gbps\"\n";
    assert_mentions(
        &error_of(&format!("duration = \"1ms\"\n{BASE}{w}"), &[]),
        &["workload[0].start_rate", "lower start_rate"],
    );
}

#[test]
fn unknown_hosts_are_named() {
    assert_mentions(
        &error_of(BASE, &["flows=[{src = 0, dst = 9, size = 100}]"]),
        &["flows[0].dst", "unknown host 9", "0..2"],
    );
    let w = "[[workload]]\nkind = \"incast\"\nsenders = 2\nsize = \"1KB\"\nreceiver = 7\nat = \"0us\"\n";
    assert_mentions(
        &error_of(&format!("{BASE}{w}"), &[]),
        &["workload[0].receiver", "unknown host 7"],
    );
}

#[test]
fn bad_cdfs_are_named() {
    let dir = std::env::temp_dir();
    let bad = [
        (
            "ccsim-nonmono.cdf",
            "0 0\n100 0.5\n50 0.7\n200 1\n",
            "not monotone",
        ),
        ("ccsim-short.cdf", "0 0\n100 0.5\n200 0.9\n", "not 1"),
        ("ccsim-pct.cdf", "0 0\n100 50\n200 100\n", "percent"),
    ];
    for (name, text, needle) in bad {
        std::fs::write(dir.join(name), text).unwrap();
        let w = format!(
            "[[workload]]\nkind = \"poisson\"\ncdf = \"{name}\"\nload = 0.5\nstop = \"1ms\"\n"
        );
        assert_mentions(&error_of(&format!("{BASE}{w}"), &[]), &[name, needle]);
    }
    let w = "[[workload]]\nkind = \"poisson\"\ncdf = \"no-such.cdf\"\nload = 0.5\nstop = \"1ms\"\n";
    assert_mentions(
        &error_of(&format!("{BASE}{w}"), &[]),
        &["workload[0].cdf", "websearch"],
    );
    let w = "[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 1.5\nstop = \"1ms\"\n";
    assert_mentions(&error_of(&format!("{BASE}{w}"), &[]), &["workload[0].load"]);
}

#[test]
fn impossible_topologies_are_named() {
    let ft = "[topology]\nkind = \"fat_tree\"\nk = 3\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }\n";
    assert_mentions(&error_of(ft, &[]), &["topology.k", "even"]);
    assert_mentions(&error_of(BASE, &["topology.hosts=1"]), &["topology.hosts"]);
    let dir = std::env::temp_dir();
    std::fs::write(dir.join("ccsim-split.toml"), "node = [{name = \"a\", layer = \"host\"}, {name = \"b\", layer = \"host\"}, {name = \"s1\", layer = \"tor\"}, {name = \"s2\", layer = \"tor\"}]\nlink = [{a = \"a\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\"}, {a = \"b\", b = \"s2\", rate = \"100Gbps\", delay = \"1us\"}]\n").unwrap();
    let t = "[topology]\nkind = \"file\"\npath = \"ccsim-split.toml\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = 100\n";
    assert_mentions(&error_of(t, &[]), &["topology", "not connected"]);
    let t = "[topology]\nkind = \"hpcc\"\npath = \"does-not-exist.txt\"\n";
    assert_mentions(&error_of(t, &[]), &["topology.path", "does-not-exist.txt"]);
}

#[test]
fn bad_overrides_and_syntax_are_named() {
    assert_mentions(
        &error_of(BASE, &["topology.hosts"]),
        &["--set", "key=value"],
    );
    assert_mentions(&error_of("[topology\nkind=", &[]), &["TOML syntax"]);
    assert_mentions(&error_of("name = \"x\"\n", &[]), &["topology"]);
}

#[test]
fn overrides_reach_nested_tables_and_list_entries() {
    let w = "[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nstop = \"1ms\"\n";
    let toml = format!("{BASE}{w}");
    let sc = Scenario::load(
        &toml,
        std::path::Path::new("."),
        None,
        &["workload.0.load=0.3".into(), "fabric.pfc.xoff=256KB".into()],
    )
    .unwrap();
    match &sc.cfg.workload[0] {
        ccsim::scenario::config::WorkloadCfg::Poisson(p) => assert_eq!(p.load, 0.3),
        _ => unreachable!(),
    }
    assert_eq!(sc.cfg.fabric.pfc.xoff().0, 256_000);
    assert_mentions(
        &error_of(&toml, &["workload.3.load=0.3"]),
        &["--set", "out of range"],
    );
    assert_mentions(&error_of(&toml, &["workload.x=1"]), &["--set", "index"]);
}

#[test]
fn unset_drops_a_key_and_refuses_one_that_is_not_there() {
    let t = "[output]\ntrace = { ports = [\"sw0->h2\"] }\n[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nstop = \"1ms\"\nflows = 10\n";
    let toml = format!("{BASE}{t}");
    let load = |ov: &[&str]| {
        let ov: Vec<String> = ov.iter().map(|s| s.to_string()).collect();
        Scenario::load(&toml, std::path::Path::new("."), None, &ov).unwrap()
    };
    assert!(load(&[]).cfg.output.trace.is_some());
    let sc = load(&["~output.trace", "~workload.0.flows"]);
    assert!(sc.cfg.output.trace.is_none());
    match &sc.cfg.workload[0] {
        ccsim::workload::config::WorkloadCfg::Poisson(p) => assert!(p.flows.is_none()),
        _ => unreachable!(),
    }
    for (key, said) in [
        ("~output.traec", "not set"),
        ("~workload.1.flows", "not set"),
        ("~workload.0", "not set"),
        ("~output..trace", "dotted key"),
    ] {
        assert_mentions(&error_of(&toml, &[key]), &["--unset", said]);
    }
}

#[test]
fn inputs_that_mean_nothing_are_refused() {
    for (extra, needles) in [
        // Two limits for one queue.
        (
            "[fabric]\npfc = { enabled = false }\nloss = { mode = \"drop_tail\", queue_packets = 8, queue_bytes = \"8KB\" }\n".to_string(),
            vec!["fabric.loss.queue_bytes", "not both"],
        ),
        // PFC's settings on a fabric without PFC.
        (
            "[fabric]\npfc = { enabled = false, xoff = \"256KB\" }\n".to_string(),
            vec!["fabric.pfc.xoff"],
        ),
        // ... even at its default value.
        (
            "[fabric]\npfc = { enabled = false, xoff = \"512KB\" }\n".to_string(),
            vec!["fabric.pfc.xoff"],
        ),
        // NaN, wherever it is.
        (
            "[fabric]\necn = { pmax = nan }\n".to_string(),
            vec!["fabric.ecn.pmax", "NaN"],
        ),
        // A fixed priority beside size classes, the default value included.
        (
            "[fabric]\ndata_priority = 5\npriority_by_size = [\"10KB\"]\n".to_string(),
            vec!["fabric.data_priority", "priority_by_size"],
        ),
        (
            "[fabric]\ndata_priority = 3\npriority_by_size = [\"10KB\"]\n".to_string(),
            vec!["fabric.data_priority", "priority_by_size"],
        ),
        // A probe list naming no port, or one port twice.
        (
            "[output]\nqueues = { interval = \"1us\", ports = [] }\n".to_string(),
            vec!["output.queues.ports", "names no port"],
        ),
        (
            "[output]\nqueues = { interval = \"1us\", ports = [\"sw0->h2\", \"sw0->h2\"] }\n"
                .to_string(),
            vec!["output.queues.ports[1]", "list each port once"],
        ),
        (
            "[output]\ntrace = { ports = [] }\n".to_string(),
            vec!["output.trace.ports", "names no port"],
        ),
    ] {
        assert_mentions(&error_of(&format!("{BASE}{extra}"), &[]), &needles);
    }
    // A trace that starts after the run ends would be empty.
    let late = "[output]\ntrace = { ports = [\"all\"], start = \"2ms\" }\n";
    assert_mentions(
        &error_of(&format!("duration = \"1ms\"\n{BASE}{late}"), &[]),
        &["output.trace.start", "duration"],
    );
}

#[test]
fn a_topology_node_needs_a_name() {
    let dir = std::env::temp_dir().join(format!("ccsim-nameless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.toml");
    std::fs::write(
        &file,
        "[[node]]\nname = \"\"\nlayer = \"host\"\n[[node]]\nname = \"h1\"\nlayer = \"host\"\n[[link]]\na = \"\"\nb = \"h1\"\nrate = \"10Gbps\"\ndelay = \"1us\"\n",
    )
    .unwrap();
    let t = format!(
        "[topology]\nkind = \"file\"\npath = \"{}\"\n",
        file.display()
    );
    assert_mentions(
        &error_of(&t, &[]),
        &["node[0].name", "give each node a name"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_scheme_parameters_are_named() {
    for (set, field) in [
        (["cc.scheme=hpcc", "cc.params.eta=1.5"], "cc.params.eta"),
        (
            ["cc.scheme=timely", "cc.params.t_low=\"1ms\""],
            "cc.params.t_low",
        ),
        (["cc.scheme=dctcp", "cc.params.g=0"], "cc.params.g"),
        (["cc.scheme=qcn", "cc.params.gd=0.5"], "cc.params.gd"),
        (["cc.scheme=qcn", "cc.params.q_eq=\"0B\""], "cc.params.q_eq"),
        (
            ["cc.scheme=hpcc", "cc.params.max_stage=-1"],
            "cc.params.max_stage",
        ),
        (
            ["cc.scheme=acc", "cc.params.tcd.victims=\"increase\""],
            "cc.params.tcd.victims",
        ),
        (
            ["cc.scheme=dcqcn_tcd", "cc.params.tcd.victims=\"cut\""],
            "cc.params",
        ),
    ] {
        assert_mentions(&error_of(BASE, &set), &[field]);
    }
    // A lossy-only scheme on the (default) lossless fabric, and its own bad parameters.
    for scheme in ["cc.scheme=amrt", "cc.scheme=phost", "cc.scheme=ndp"] {
        assert_mentions(
            &error_of(BASE, &[scheme]),
            &["cc.scheme", "lossy", "fabric.pfc.enabled"],
        );
    }
    // Homa's priorities need strict scheduling at switches.
    assert_mentions(
        &error_of(BASE, &["cc.scheme=homa"]),
        &["fabric.scheduler", "strict"],
    );
    // NDP's trimming queue with no room at all.
    assert_mentions(
        &error_of(
            BASE,
            &[
                "cc.scheme=ndp",
                "fabric.pfc.enabled=false",
                "fabric.loss={ mode = \"drop_tail\", queue_packets = 0 }",
            ],
        ),
        &["fabric.loss.queue_packets", "> 0"],
    );
    for (set, field) in [
        ("cc.params.mss=0", "cc.params.mss"),
        ("cc.params.marking=\"ecn\"", "cc.params.marking"),
    ] {
        assert_mentions(
            &error_of(BASE, &["cc.scheme=amrt", "fabric.pfc.enabled=false", set]),
            &[field],
        );
    }
    assert_mentions(
        &error_of(
            BASE,
            &[
                "cc.scheme=dctcp",
                "fabric.ecn.kmin=\"50KB\"",
                "fabric.ecn.kmax=\"40KB\"",
            ],
        ),
        &["fabric.ecn.kmax", "kmin"],
    );
    // HPCC's INT header holds 5 hops: hosts six switches apart cannot use it.
    let mut nodes =
        String::from("{ name = \"a\", layer = \"host\" }, { name = \"b\", layer = \"host\" }");
    let mut links = String::from("{ a = \"a\", b = \"s0\", rate = \"100Gbps\", delay = \"1us\" }, { a = \"s5\", b = \"b\", rate = \"100Gbps\", delay = \"1us\" }");
    for i in 0..6 {
        nodes += &format!(", {{ name = \"s{i}\", layer = \"tor\" }}");
        if i > 0 {
            links += &format!(
                ", {{ a = \"s{}\", b = \"s{i}\", rate = \"100Gbps\", delay = \"1us\" }}",
                i - 1
            );
        }
    }
    let path = std::env::temp_dir().join("ccsim-six-switch-chain.toml");
    std::fs::write(&path, format!("node = [{nodes}]\nlink = [{links}]\n")).unwrap();
    let toml = format!("[topology]\nkind = \"file\"\npath = \"{}\"\n[cc]\nscheme = \"hpcc\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"10KB\"\n", path.display());
    assert_mentions(&error_of(&toml, &[]), &["topology", "6 switches", "5 hops"]);
}

#[test]
fn values_between_unit_steps_or_beyond_the_limits_are_rejected() {
    // Issue 15 items 2, 3, 8: no silent rounding, no wrapped integers, no endless loops.
    assert_mentions(
        &error_of(BASE, &["topology.link.rate=\"0.5bps\""]),
        &["topology", "0.5bps", "whole number of bps"],
    );
    assert_mentions(
        &error_of(BASE, &["topology.link.delay=\"0.1ps\""]),
        &["topology", "0.1ps", "whole number of ps"],
    );
    assert_mentions(
        &error_of(BASE, &["flows=[{src = 0, dst = 2, size = \"1.5B\"}]"]),
        &["flows", "1.5B", "whole number of B"],
    );
    assert_mentions(
        &error_of(
            BASE,
            &["flows=[{src = 0, dst = 2, size = \"18446744073709551615B\"}]"],
        ),
        &["flows", "too large"],
    );
    assert_mentions(
        &error_of(
            BASE,
            &["flows=[{src = 0, dst = 2, size = 9223372036854775807}]"],
        ),
        &["flows", "too large"],
    );
    assert_mentions(
        &error_of(BASE, &["flows=[{src = 0, dst = 2, size = -5}]"]),
        &["flows", "negative"],
    );
    assert_mentions(
        &error_of(
            BASE,
            &["flows=[{src = 0, dst = 2, size = 100, start = \"18446744.07370955s\"}]"],
        ),
        &["flows", "too large", "1000000s"],
    );
    assert_mentions(
        &error_of(BASE, &["duration=\"1e300s\""]),
        &["duration", "too large"],
    );
    // Sizes and rates that are each allowed but whose flow would outlast 10^6 s.
    assert_mentions(
        &error_of(
            BASE,
            &[
                "topology.link.rate=\"1Kbps\"",
                "flows=[{src = 0, dst = 2, size = \"1000GB\"}]",
            ],
        ),
        &["flows", "flow 0", "1000000 s"],
    );
    // 1.1us is 1100000 ps even though 1.1 x 1e6 is not exact in floating point.
    assert!(ccsim::Scenario::load(
        BASE,
        std::path::Path::new("."),
        None,
        &["topology.link.delay=\"1.1us\"".into()]
    )
    .is_ok());
}

#[test]
fn flow_files_with_impossible_times_or_counts_are_rejected() {
    let dir = std::env::temp_dir().join(format!("ccsim-bad-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (body, needle) in [
        ("1\n0 2 3 100 1000 inf\n", "start time `inf`"),
        ("1\n0 2 3 100 1000 1e300\n", "start time `1e300`"),
        ("1\n0 2 3 100 1000 -1\n", "between 0 and"),
        (
            "1000000000000\n0 2 3 100 1000 0\n",
            "declares 1000000000000 flows but lists 1",
        ),
        (
            "1\n0 2 9 100 1000 0\n",
            "priority `9` is not a PFC class (0-7)",
        ),
        (
            "1\n0 2 3 100 1000 0 7 x\n",
            "line 2: 8 fields, where a flow is `src dst priority dport size_bytes start_seconds`; ccsim would ignore `7 x`",
        ),
    ] {
        std::fs::write(dir.join("f.txt"), body).unwrap();
        let toml = format!(
            "[topology]\nkind = \"star\"\nhosts = 3\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n[[workload]]\nkind = \"flow_file\"\npath = \"{}\"\n",
            dir.join("f.txt").display()
        );
        let msg = match ccsim::Scenario::load(&toml, &dir, None, &[])
            .and_then(|s| s.build().map(|_| ()))
        {
            Err(e) => e.to_string(),
            Ok(()) => panic!("accepted {body:?}"),
        };
        assert_mentions(&msg, &[needle]);
    }
}

#[test]
fn sizes_that_would_exhaust_memory_are_refused_up_front() {
    // Issue 15 item 1: a one-line error with the estimate, before allocating.
    let star = "[topology]\nkind = \"star\"\nhosts = 10000000\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n";
    assert_mentions(
        &error_of(star, &[]),
        &["topology.hosts", "10000001 nodes", "at most"],
    );
    let ft = "[topology]\nkind = \"fat_tree\"\nk = 1000\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }\n";
    assert_mentions(&error_of(ft, &[]), &["topology.k", "nodes", "at most"]);
    let chain = "[topology]\nkind = \"chain\"\nbursts = 100000000\nlink = { rate = \"100Gbps\", delay = \"1us\" }\n";
    assert_mentions(&error_of(chain, &[]), &["topology.bursts", "at most"]);
    let incast = "[[workload]]\nkind = \"incast\"\nsenders = 2\nsize = \"1B\"\nload = 1.0\nstop = \"10ms\"\n";
    for (set, needles) in [
        (
            "senders = \"0..2\"\nsize = \"1KB\"\nat = \"0us\"",
            &["workload[0].senders", "between 1 and 2"][..],
        ),
        (
            "senders = \"2..1\"\nsize = \"1KB\"\nat = \"0us\"",
            &["workload[0].senders", "A <= B"],
        ),
        (
            "senders = \"many\"\nsize = \"1KB\"\nat = \"0us\"",
            &["workload[0].senders", "\"A..B\""],
        ),
        (
            "senders = 2\nsize = \"1KB\"\ncdf = \"pcn_w2\"\nat = \"0us\"",
            &["workload[0].size", "not both"],
        ),
        ("senders = 2\nat = \"0us\"", &["workload[0].size", "`cdf`"]),
        (
            "senders = 2\nsize = \"1KB\"\nevery = \"0us\"\nstop = \"1ms\"",
            &["workload[0].every", "> 0"],
        ),
        (
            "senders = 2\nsize = \"1KB\"\nevery = \"10us\"",
            &["workload[0].stop", "`every`"],
        ),
        (
            "senders = 2\nsize = \"1KB\"\nat = \"0us\"\nevery = \"10us\"",
            &["workload[0].at", "one of"],
        ),
    ] {
        let w = format!("[[workload]]\nkind = \"incast\"\n{set}\n");
        assert_mentions(&error_of(&format!("{BASE}{w}"), &[]), needles);
    }
    let limited = "[[workload]]\nkind = \"long_lived\"\npairs = [[0, 1]]\nrate = \"0Gbps\"\n";
    assert_mentions(
        &error_of(&format!("{BASE}{limited}"), &[]),
        &["workload[0].rate", "> 0"],
    );
    assert_mentions(
        &error_of(&format!("{BASE}{incast}"), &[]),
        &["workload[0].load", "flows", "at most"],
    );
    assert_mentions(
        &error_of(
            BASE,
            &["output.queues={interval = \"1ps\", ports = [\"all\"]}"],
        ),
        &["output.queues.interval", "at least 10ns"],
    );
    assert_mentions(
        &error_of(
            BASE,
            &[
                "duration=\"10s\"",
                "output.queues={interval = \"10ns\", ports = [\"all\"]}",
            ],
        ),
        &["output.queues.interval", "samples"],
    );
}

#[test]
fn a_host_set_with_a_repeated_host_is_named() {
    let w = "[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nstop = \"1ms\"\nhosts = [0, 0]\n";
    assert_mentions(
        &error_of(&format!("{BASE}{w}"), &[]),
        &["workload[0].hosts", "lists a host twice"],
    );
}

#[test]
fn cdfs_without_a_usable_size_are_named() {
    for (body, needle) in [
        ("0 0\n0 1\n", "every size of the CDF is 0 bytes"),
        ("100 0\nnan 1\n", "finite"),
        ("100 0\ninf 1\n", "finite"),
        ("100 0\n1e25 1\n", "at most"),
        ("100 0\n1500.5 1\n", "not a whole number of bytes"),
    ] {
        let msg = ccsim::workload::Cdf::parse(body, "x.cdf")
            .unwrap_err()
            .to_string();
        assert_mentions(&msg, &[needle]);
    }
}

#[test]
fn an_hpcc_topology_header_is_not_trusted() {
    let dir = std::env::temp_dir().join(format!("ccsim-bad-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.txt"), "100000000 1 1\n0\n0 1 100Gbps 1us 0\n").unwrap();
    let toml = format!(
        "[topology]\nkind = \"hpcc\"\npath = \"{}\"\n",
        dir.join("t.txt").display()
    );
    let msg = ccsim::Scenario::load(&toml, &dir, None, &[])
        .and_then(|s| s.build().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert_mentions(&msg, &["t.txt: line 1", "100000000 nodes", "at most"]);
    // A link error rate ccsim would ignore is refused, naming the line.
    std::fs::write(
        dir.join("t.txt"),
        "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0.5\n",
    )
    .unwrap();
    let msg = ccsim::Scenario::load(&toml, &dir, None, &[])
        .and_then(|s| s.build().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert_mentions(
        &msg,
        &["t.txt: line 4", "error_rate `0.5`", "random link errors"],
    );
    assert_mentions(
        &error_of(BASE, &["fabric.pfc={mode = \"dynamic\", alpha = 1e9}"]),
        &["fabric.pfc.alpha", "(0, 64]"],
    );
    // A dynamic-mode factor in static mode would be dropped without a word.
    assert_mentions(
        &error_of(BASE, &["fabric.pfc.alpha=0.5"]),
        &["fabric.pfc.alpha", "mode = \"dynamic\""],
    );
    // A minimum rate above the line rate cannot be honoured.
    for scheme in ["dcqcn", "timely", "hpcc", "dctcp", "qcn", "acc"] {
        assert_mentions(
            &error_of(
                BASE,
                &[
                    &format!("cc.scheme={scheme}"),
                    "cc.params.min_rate=\"1Tbps\"",
                ],
            ),
            &["cc.params.min_rate", "line rate"],
        );
    }
}

#[test]
fn a_missing_cc_section_draws_a_warning_naming_it() {
    let dir = std::env::temp_dir();
    let sc = Scenario::load(BASE, &dir, None, &[]).unwrap();
    assert_eq!(sc.warnings.len(), 1);
    assert!(
        sc.warnings[0].starts_with("cc: not given"),
        "{:?}",
        sc.warnings
    );
    let mut sim = sc.build().unwrap();
    sim.run_events(u64::MAX).unwrap();
    assert_eq!(
        sc.results(&mut sim).summary["warnings"][0],
        sc.warnings[0].as_str()
    );
    let sc = Scenario::load(BASE, &dir, None, &["cc.scheme=none".into()]).unwrap();
    assert!(sc.warnings.is_empty());
}

#[test]
fn a_route_table_that_would_not_fit_in_memory_is_refused() {
    // k = 150: 843,750 hosts and 28,125 switches (under the node cap); one route entry per
    // (switch, ToR) is 3.2e8 entries.
    let toml = "memory_limit = \"1000GB\"\n[topology]\nkind = \"fat_tree\"\nk = 150\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 2\nsize = \"10KB\"\n";
    assert_mentions(
        &error_of(toml, &[]),
        &[
            "topology",
            "28125 switches x 11250 switches with hosts",
            "1.3 GB route table",
        ],
    );
}

#[test]
fn a_fabric_beyond_the_memory_limit_is_refused_before_it_is_built() {
    // k = 64: 65,536 hosts; its ports alone take more than 100 MB.
    let toml = "memory_limit = \"100MB\"\n[topology]\nkind = \"fat_tree\"\nk = 64\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\nfabric_link = { rate = \"100Gbps\", delay = \"1us\" }\n[[flows]]\nsrc = 0\ndst = 2\nsize = \"10KB\"\n";
    assert_mentions(
        &error_of(toml, &[]),
        &["memory_limit", "needs at least", "GB of fabric", "0.1 GB"],
    );
    // The same with few flows and a generous limit builds.
    assert!(ccsim::Scenario::load(
        &toml.replace("100MB", "1000GB"),
        std::path::Path::new("."),
        None,
        &[]
    )
    .unwrap()
    .build()
    .is_ok());
}

#[test]
fn bad_size_classes_are_named() {
    for bad in [
        r#"fabric.priority_by_size=["1MB","10KB"]"#,
        r#"fabric.priority_by_size=["10KB","10KB"]"#,
        r#"fabric.priority_by_size=[0,"10KB"]"#,
        r#"fabric.priority_by_size=[1,2,3,4,5,6,7]"#,
    ] {
        assert_mentions(
            &error_of(BASE, &[bad]),
            &["fabric.priority_by_size", "ascending"],
        );
    }
}

/// Every scheme parameter at zero (in its own unit) either runs or is refused with an error
/// naming it; none panics (a zero that becomes a divisor once did: QCN's `ref_rate`).
#[test]
fn every_scheme_parameter_at_zero_runs_or_is_named() {
    fn zero_of(v: &toml::Value) -> Option<String> {
        match v {
            toml::Value::Integer(_) => Some("0".into()),
            toml::Value::Float(_) => Some("0.0".into()),
            toml::Value::String(s) => {
                let unit: String = s
                    .chars()
                    .skip_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                (!unit.is_empty() && s.starts_with(|c: char| c.is_ascii_digit()))
                    .then(|| format!("\"0{unit}\""))
            }
            _ => None,
        }
    }
    fn keys(prefix: &str, t: &toml::Table, out: &mut Vec<(String, String)>) {
        for (k, v) in t {
            let key = format!("{prefix}.{k}");
            match v {
                toml::Value::Table(sub) => keys(&key, sub, out),
                v => out.extend(zero_of(v).map(|z| (key, z))),
            }
        }
    }
    for info in ccsim::cc::schemes() {
        let params = ccsim::cc::CcParams::parse(info.name, &toml::Table::new())
            .unwrap()
            .to_table();
        let mut zeros = Vec::new();
        keys("cc.params", &params, &mut zeros);
        let fabric = common::scheme_fabric(info.name);
        let toml = format!(
            "duration = \"200us\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink = {{ rate = \"10Gbps\", delay = \"1us\" }}\n{fabric}[cc]\nscheme = \"{}\"\n[[flows]]\nsrc = 0\ndst = 2\nsize = \"30KB\"\n[[flows]]\nsrc = 1\ndst = 2\nsize = \"30KB\"\n",
            info.name
        );
        for (key, zero) in zeros {
            let set = format!("{key}={zero}");
            let outcome = std::panic::catch_unwind(|| {
                let sc = ccsim::Scenario::load(
                    &toml,
                    std::path::Path::new("."),
                    None,
                    std::slice::from_ref(&set),
                );
                match sc.and_then(|s| s.build()) {
                    Err(e) => Err(e.to_string()),
                    Ok(mut sim) => sim.run().map_err(|e| e.to_string()),
                }
            });
            match outcome {
                Err(_) => panic!("{}: {set} panicked", info.name),
                Ok(Err(e)) if e.contains("stall") || e.contains("collapse") => {}
                // The error names a parameter (it, or the one it must stay below).
                Ok(Err(e)) => assert!(
                    e.contains("cc.params."),
                    "{}: {set}: the error must name it: {e}",
                    info.name
                ),
                Ok(Ok(())) => {}
            }
        }
    }
}

#[test]
fn sizes_that_cannot_carry_a_packet_and_inverted_timeouts_are_named() {
    let lossy = ["fabric.pfc.enabled=false"];
    for (set, field) in [
        ("host.ack_bytes=0", "host.ack_bytes"),
        ("fabric.pfc.frame_bytes=0", "fabric.pfc.frame_bytes"),
        (
            "fabric.loss={mode=\"drop_tail\", queue_bytes=\"500B\"}",
            "fabric.loss.queue_bytes",
        ),
        (
            "host.recovery={mode=\"irn\", rto_low=\"500us\", rto_high=\"100us\"}",
            "host.recovery.rto_low",
        ),
    ] {
        let mut overrides = vec![set];
        if set.starts_with("fabric.loss") || set.starts_with("host.recovery") {
            overrides.extend(lossy);
        }
        assert_mentions(&error_of(BASE, &overrides), &[field]);
    }
}

#[test]
fn a_flow_that_starts_after_the_run_ends_draws_a_warning() {
    let toml = format!("duration = \"1ms\"\n{BASE}");
    let late = ["flows.0.start=\"2ms\""].map(String::from);
    let sc = ccsim::Scenario::load(&toml, std::path::Path::new("."), None, &late).unwrap();
    let sim = sc.build().unwrap();
    assert!(
        sim.warnings
            .iter()
            .any(|w| w.starts_with("flows: 1 of") && w.contains("duration")),
        "{:?}",
        sim.warnings
    );
    let sc = ccsim::Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
    assert!(sc.build().unwrap().warnings.is_empty());
}

#[test]
fn header_turns_need_a_trimming_scheme_and_a_turn() {
    let lossy = |scheme: &str, turns: u32| {
        let o = [
            format!("cc.scheme=\"{scheme}\""),
            "fabric.pfc.enabled=false".into(),
            "fabric.loss.mode=\"drop_tail\"".into(),
            "fabric.loss.queue_packets=8".into(),
            format!("fabric.loss.header_turns={turns}"),
        ];
        error_of(BASE, &o.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert_mentions(
        &lossy("amrt", 100000),
        &["fabric.loss.header_turns", "trimming", "amrt"],
    );
    assert_mentions(&lossy("ndp", 0), &["fabric.loss.header_turns", ">= 1"]);
}

#[test]
fn unresponsive_senders_under_a_scheme_that_sends_them_nothing_are_warned_about() {
    // `responsive` drops the control packets a sender gets; DCTCP sends none (no receiver or
    // switch part), so the run is the one without it and says so. AMRT's receivers grant.
    let toml = |scheme: &str| {
        format!(
            r#"
            duration = "50us"
            [topology]
            kind = "star"
            hosts = 5
            link = {{ rate = "100Gbps", delay = "1us" }}
            [fabric]
            pfc = {{ enabled = false }}
            [cc]
            scheme = "{scheme}"
            [[workload]]
            kind = "long_lived"
            pairs = [[0, 4], [1, 4], [2, 4], [3, 4]]
            responsive = 0.5
            "#
        )
    };
    let warned = |scheme: &str| {
        let sc = ccsim::Scenario::load(&toml(scheme), std::path::Path::new("."), None, &[])
            .expect("loads");
        let sim = sc.build().expect("builds");
        sc.all_warnings(&sim).join("\n")
    };
    let w = warned("dctcp");
    assert!(
        w.contains("workload.responsive: dctcp sends its senders no control packets"),
        "{w}"
    );
    assert!(!warned("amrt").contains("workload.responsive"));
}
