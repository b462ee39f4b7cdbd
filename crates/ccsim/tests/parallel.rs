//! The parallel engine (`engine::parallel`): the single-threaded engine's results byte for
//! byte, for every thread count and partitioning, on every scheme and on the fabric's hard
//! cases (PFC storms, a deadlock, a lossy incast), and physics the merged result must keep
//! (conservation, a deadlock's cycle).

mod common;

use ccsim::{Scenario, Simulation};

/// Run `toml` on the parallel engine with `threads` threads: its whole output as text, and the
/// run as one simulation.
fn run_parallel(toml: &str, threads: usize) -> (String, Simulation) {
    run_in_calls(toml, threads, 1 << 20)
}

/// `run_parallel`, in calls of `run_events(call_events)`.
fn run_in_calls(toml: &str, threads: usize, call_events: u64) -> (String, Simulation) {
    let sc = Scenario::load(toml, std::path::Path::new("."), None, &[]).expect("loads");
    let mut run = sc.start_parallel(threads).expect("builds");
    while !run.run_events(call_events).expect("runs") {}
    let mut sim = run.into_simulation();
    let r = sc.results(&mut sim);
    let mut out = r.summary.to_string();
    for t in &r.tables {
        out += &t.to_csv();
    }
    (out, sim)
}

/// The whole output of a finished run as text (every table and the summary; `perf`, which
/// holds wall-clock times, is not in it).
fn output(sc: &Scenario, sim: &mut Simulation) -> String {
    let r = sc.results(sim);
    let mut out = r.summary.to_string();
    for t in &r.tables {
        out += &t.to_csv();
    }
    out
}

/// The single-threaded engine's output and run.
fn run_single(toml: &str) -> (String, Simulation) {
    let sc = Scenario::load(toml, std::path::Path::new("."), None, &[]).expect("loads");
    let mut sim = sc.build().expect("builds");
    sim.run().expect("runs");
    (output(&sc, &mut sim), sim)
}

/// The outputs of the single-threaded engine and of the parallel one on 1, 2 and 4 threads
/// (`common::thread_counts`), cut into the default partitions, 2 and 1, are the same bytes;
/// returns the single-threaded run.
fn identical_for_any_thread_count(label: &str, toml: &str) -> Simulation {
    let (one, sim) = run_single(toml);
    for parts in ["", "partitions = 2\n", "partitions = 1\n"] {
        for threads in common::thread_counts(&[1, 2, 4]) {
            let (out, _) = run_parallel(&format!("{parts}{toml}"), threads);
            if out != one {
                let at = (out.bytes().zip(one.bytes()))
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                let around = |s: &str| {
                    let b = &s.as_bytes()[at.saturating_sub(150)..(at + 80).min(s.len())];
                    String::from_utf8_lossy(b).into_owned()
                };
                panic!(
                    "{label}: {threads} threads, {parts:?} differ from one simulation at byte {at}: ...{}... vs ...{}...",
                    around(&one),
                    around(&out)
                );
            }
        }
    }
    sim
}

/// Every finished flow delivered and acknowledged exactly its size, and the receivers' count
/// of delivered bytes is the flows' sum (the two halves of a flow come from two partitions).
fn assert_conserved(label: &str, sim: &Simulation) {
    let mut delivered = 0;
    for (i, f) in sim.flows.iter().enumerate() {
        delivered += f.rcv_nxt;
        if f.finished {
            assert!(
                f.rcv_nxt == f.size_bytes && f.snd_una == f.size_bytes,
                "{label}: flow {i} finished with {} B delivered, {} acked, of {}",
                f.rcv_nxt,
                f.snd_una,
                f.size_bytes
            );
        }
    }
    assert_eq!(delivered, sim.metrics.delivered_bytes, "{label}");
}

fn incast(scheme: &str) -> String {
    format!(
        r#"
        [topology]
        kind = "star"
        hosts = 9
        link = {{ rate = "100Gbps", delay = "1us" }}
        {}
        [cc]
        scheme = "{scheme}"
        [[workload]]
        kind = "incast"
        senders = 8
        receiver = 8
        size = "200KB"
        at = "0us"
        [output]
        queues = {{ ports = ["all"], interval = "5us" }}
        rates = {{ interval = "10us" }}
        "#,
        common::scheme_fabric(scheme)
    )
}

#[test]
fn every_schemes_incast_is_identical_for_any_thread_count() {
    for info in ccsim::cc::schemes() {
        let sim = identical_for_any_thread_count(info.name, &incast(info.name));
        assert_conserved(info.name, &sim);
        let open = sim.flows.iter().filter(|f| !f.finished).count();
        assert_eq!(open, 0, "{}: {open} flows unfinished", info.name);
        // Long-lived flows that stop: the receivers, in other partitions, learn the final
        // sizes from the senders' (`tell_receiver_size`).
        let lived = incast(info.name).replace(
            "kind = \"incast\"\n        senders = 8\n        receiver = 8\n        size = \"200KB\"\n        at = \"0us\"",
            "kind = \"long_lived\"\n        pairs = [[0, 8], [1, 8], [2, 8], [3, 7]]\n        stop = \"60us\"",
        );
        assert!(lived.contains("long_lived"));
        let label = format!("{} long-lived", info.name);
        let sim = identical_for_any_thread_count(&label, &lived);
        assert_conserved(&label, &sim);
        for (i, f) in sim.flows.iter().enumerate() {
            assert!(f.finished, "{label}: flow {i} unfinished");
        }
    }
}

#[test]
fn a_fat_tree_workload_is_identical() {
    for scheme in ["dcqcn", "hpcc"] {
        let toml = format!(
            r#"
            [topology]
            kind = "fat_tree"
            k = 4
            host_link = {{ rate = "100Gbps", delay = "1us" }}
            fabric_link = {{ rate = "100Gbps", delay = "1us" }}
            [cc]
            scheme = "{scheme}"
            [[workload]]
            kind = "poisson"
            cdf = "websearch"
            load = 0.6
            stop = "300us"
            [output]
            queues = {{ ports = ["all"], interval = "10us" }}
            "#
        );
        let sim = identical_for_any_thread_count(scheme, &toml);
        assert_conserved(scheme, &sim);
    }
}

#[test]
fn collectives_beside_background_traffic_are_identical() {
    // Flows released by arrivals (workload dependencies) on a k = 4 fat-tree: two jobs, a ring
    // and a halving-doubling all-reduce, over hosts of several pods, two iterations each with
    // a compute gap, an all-to-all, and WebSearch beside them.
    let toml = r#"
        [topology]
        kind = "fat_tree"
        k = 4
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "100Gbps", delay = "1us" }
        [cc]
        scheme = "dcqcn"
        [[workload]]
        kind = "allreduce"
        size = "400KB"
        hosts = [0, 5, 10, 15, 3, 6]
        iterations = 2
        gap = "5us"
        [[workload]]
        kind = "allreduce"
        algorithm = "halving_doubling"
        size = "200KB"
        hosts = [1, 2, 8, 12]
        iterations = 2
        [[workload]]
        kind = "alltoall"
        size = "20KB"
        hosts = [4, 7, 9, 11, 13]
        skew = 1.0
        [[workload]]
        kind = "poisson"
        cdf = "websearch"
        load = 0.3
        stop = "100us"
        "#;
    let sim = identical_for_any_thread_count("collectives", toml);
    assert_conserved("collectives", &sim);
}

#[test]
fn the_fat_tree_benchmark_is_identical_for_any_thread_count() {
    // `ccsim bench`'s k = 8 fat-tree (128 hosts, 8 pods: 8 partitions), WebSearch at 30% with
    // DCQCN, for its first 100 us.
    let toml = ccsim::bench::scenario("fattree-k8")
        .expect("a benchmark")
        .replace("\"0.5ms\"", "\"100us\"");
    let sim = identical_for_any_thread_count("fattree-k8", &toml);
    assert_conserved("fattree-k8", &sim);
    assert!(sim.link_traversals > 50_000, "{}", sim.link_traversals);
    // Where the calls stop changes nothing: one window per call (the threads sleep between
    // calls and wake for the next) gives the same bytes.
    let (whole, _) = run_parallel(&toml, 1);
    for threads in common::thread_counts(&[2, 3, 4]) {
        let (windows, _) = run_in_calls(&toml, threads, 1);
        assert!(windows == whole, "{threads} threads, one window per call");
    }
}

#[test]
fn a_cut_into_fewer_partitions_is_identical_and_crosses_less() {
    // The k = 8 fat-tree's 8 pods in 3 partitions (`partitions = 3`): pods grouped 3, 3, 2 by
    // hosts, so fewer links are cut and fewer packets cross; results the same as one
    // simulation's.
    let toml = ccsim::bench::scenario("fattree-k8")
        .expect("a benchmark")
        .replace("\"0.5ms\"", "\"100us\"");
    let stats = |sim: &Simulation| sim.metrics.sync.clone().expect("a parallel run");
    let eight = stats(&run_parallel(&format!("partitions = 8\n{toml}"), 2).1);
    let (single, _) = run_single(&toml);
    let (out, three) = run_parallel(&format!("partitions = 3\n{toml}"), 2);
    assert!(out == single, "3 partitions differ from one simulation");
    assert_conserved("k8, 3 partitions", &three);
    let three = stats(&three);
    assert_eq!((eight.partitions, three.partitions), (8, 3));
    // A flow crosses between two pods' partitions unless both pods are in one of the 3 (about
    // a third of pod pairs); the core switches are dealt among the partitions either way.
    assert!(
        three.crossings * 10 < eight.crossings * 9 && three.crossings > 0,
        "{} crossings with 3 partitions, {} with 8",
        three.crossings,
        eight.crossings
    );
    // One partition: nothing crosses.
    let one = stats(&run_parallel(&format!("partitions = 1\n{toml}"), 2).1);
    assert_eq!((one.partitions, one.crossings), (1, 0));
}

#[test]
fn a_pfc_deadlock_is_found_across_partitions() {
    // Each ring switch is in its own partition, so the cycle of paused
    // ports crosses all five.
    let sim = identical_for_any_thread_count("ring", common::RING_DEADLOCK);
    let d = sim.deadlock.found.first().expect("the deadlock is found");
    assert_eq!(d.ports.len(), 5, "{d:?}");
    assert!(d.confirmed_ps >= d.formed_ps + 200_000_000, "{d:?}");
}

#[test]
fn pfc_storms_and_a_lossy_incast_are_identical() {
    // Line-rate senders without congestion control into one port: PAUSE frames cross
    // partitions both ways, all the time.
    let storm = r#"
        [topology]
        kind = "fat_tree"
        k = 4
        host_link = { rate = "100Gbps", delay = "1us" }
        fabric_link = { rate = "100Gbps", delay = "1us" }
        [fabric]
        pfc = { mode = "static", xoff = "30KB" }
        [cc]
        scheme = "none"
        [[workload]]
        kind = "incast"
        senders = 15
        receiver = 0
        size = "300KB"
        at = "0us"
        [output]
        queues = { ports = ["all"], interval = "5us" }
    "#;
    let sim = identical_for_any_thread_count("storm", storm);
    assert_conserved("storm", &sim);
    let pauses: u64 = sim.ports.iter().map(|p| p.pause_sent).sum();
    assert!(pauses > 100, "{pauses} PAUSE frames: not a storm");
    for scheme in ["dctcp", "ndp"] {
        let sim = identical_for_any_thread_count(scheme, &common::lossy_incast(scheme, "", 32));
        assert_conserved(scheme, &sim);
        let drops: u64 = sim.ports.iter().map(|p| p.drops + p.trims).sum();
        assert!(drops > 0, "{scheme}: no loss, so no recovery was tested");
    }
}

#[test]
fn threads_are_checked_and_a_trace_needs_one() {
    let base = incast("dcqcn");
    for (v, want) in [("0", "must be at least 1"), ("\"many\"", "\"auto\"")] {
        let toml = format!("threads = {v}\n{base}");
        let e = Scenario::load(&toml, std::path::Path::new("."), None, &[])
            .expect_err("refused")
            .to_string();
        assert!(e.contains("threads") && e.contains(want), "{e}");
    }
    for (v, want) in [
        ("0", "must be 1 to 16"),
        ("17", "got 17"),
        ("\"2\"", "expected u32"),
    ] {
        let toml = format!("partitions = {v}\n{base}");
        let e = Scenario::load(&toml, std::path::Path::new("."), None, &[])
            .expect_err("refused")
            .to_string();
        assert!(e.contains("partitions") && e.contains(want), "{e}");
    }
    // On one thread nothing is cut: the run says so.
    let toml = format!("partitions = 2\n{base}");
    let sc = Scenario::load(&toml, std::path::Path::new("."), None, &[]).unwrap();
    let mut run = sc.start().expect("builds");
    run.run().expect("runs");
    let warned = sc.all_warnings(&run.into_simulation()).join("\n");
    assert!(
        warned.contains("partitions: the run has one thread"),
        "{warned}"
    );
    // One run fits in 30 KB; two partitions (one per thread), each with its copy of the
    // fabric's state beside the ports held once and the flows held by their ends, do not.
    let small = format!("memory_limit = \"30KB\"\n{base}");
    common::run(&small);
    let sc = Scenario::load(&small, std::path::Path::new("."), None, &[]).unwrap();
    let e = sc.start_parallel(2).err().expect("refused").to_string();
    assert!(e.contains("threads") && e.contains("2 x"), "{e}");
    // Links without delay: no partition could run ahead of another.
    let instant = base.replace("delay = \"1us\"", "delay = \"0us\"");
    let sc = Scenario::load(&instant, std::path::Path::new("."), None, &[]).unwrap();
    let e = sc.start_parallel(2).err().expect("refused").to_string();
    assert!(
        e.starts_with("threads: a link") && e.contains("threads = 1"),
        "{e}"
    );
    let traced = format!("{base}\ntrace = {{ ports = [\"all\"] }}\n");
    let sc = Scenario::load(&traced, std::path::Path::new("."), None, &[]).unwrap();
    let e = sc.start_parallel(2).err().expect("refused").to_string();
    assert!(e.contains("threads") && e.contains("output.trace"), "{e}");
    // "auto" goes by the fabric's size alone: the 9-host incast on one thread, the 128-host
    // fat-tree in parallel.
    let auto = |toml: &str| {
        let sc = Scenario::load(
            &format!("threads = \"auto\"\n{toml}"),
            ".".as_ref(),
            None,
            &[],
        );
        sc.expect("loads").start().expect("builds")
    };
    assert!(matches!(auto(&base), ccsim::engine::parallel::Run::One(_)));
    let k8 = ccsim::bench::scenario("fattree-k8").expect("a benchmark");
    let parallel = matches!(auto(&k8), ccsim::engine::parallel::Run::Many(_));
    assert_eq!(parallel, ccsim::scenario::config::cores() > 1);
    // "auto" is the default; where it cannot cut the fabric (a trace) it runs on one thread
    // and says why, where `threads = 2` is refused.
    let sc = Scenario::load(&k8, ".".as_ref(), None, &[]).expect("loads");
    let default = sc.start().expect("builds");
    assert_eq!(
        matches!(default, ccsim::engine::parallel::Run::Many(_)),
        parallel
    );
    if parallel {
        let traced = format!("{k8}\n[output.trace]\nports = [\"all\"]\nstop = \"1us\"\n");
        let sc = Scenario::load(&traced, ".".as_ref(), None, &[]).expect("loads");
        let run = sc.start().expect("builds");
        let ccsim::engine::parallel::Run::One(sim) = run else {
            panic!("a traced run on threads");
        };
        let warned = sc.all_warnings(&sim).join("\n");
        assert!(
            warned.contains("\"auto\" runs on one thread: a packet trace"),
            "{warned}"
        );
    }
}

#[test]
fn windows_are_as_long_as_the_shortest_link_any_partitioning_may_cut() {
    // A fat-tree is cut only at its core switches' links (1 us here; the hosts' 0.5 us links
    // stay inside a pod), and a window never outlasts the PFC deadlock detection time.
    let fat = |deadlock: &str| {
        format!(
            r#"
            [topology]
            kind = "fat_tree"
            k = 4
            host_link = {{ rate = "100Gbps", delay = "500ns" }}
            fabric_link = {{ rate = "100Gbps", delay = "1us" }}
            [fabric]
            pfc = {{ deadlock_after = "{deadlock}" }}
            [[flows]]
            src = 0
            dst = 15
            size = "10KB"
            "#
        )
    };
    let len = |toml: &str| {
        let sc = Scenario::load(toml, std::path::Path::new("."), None, &[]).expect("loads");
        sc.build().expect("builds").windows.len_ps
    };
    assert_eq!(len(&fat("1ms")), 1_000_000);
    assert_eq!(len(&fat("300ns")), 300_000);
}
