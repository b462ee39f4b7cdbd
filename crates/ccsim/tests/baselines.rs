//! The sender-based baselines (TIMELY, HPCC, DCTCP, QCN) on the ACC paper's microbenchmark
//! (Fig. 10: ten long flows into one 100G port, 2 us links): each converges to a fair share of
//! a busy bottleneck, with the queue its design aims for; HPCC reclaims freed bandwidth within
//! a few RTTs; scheme headers are charged on the wire.
mod common;

/// Per-flow goodput (payload b/s) averaged over (from_ms, to_ms], from the rate probe.
fn flow_rates(r: &ccsim::Results, n: usize, from_ms: f64, to_ms: f64) -> Vec<f64> {
    let t = common::column(r, "rates", "time_ps");
    let f = common::column(r, "rates", "flow");
    let tp = common::column(r, "rates", "throughput_bps");
    let (mut sum, mut cnt) = (vec![0.0; n], vec![0usize; n]);
    for i in 0..t.len() {
        if t[i] > from_ms * 1e9 && t[i] <= to_ms * 1e9 && (f[i] as usize) < n {
            sum[f[i] as usize] += tp[i];
            cnt[f[i] as usize] += 1;
        }
    }
    (0..n).map(|i| sum[i] / cnt[i] as f64).collect()
}

/// Bottleneck utilization and queue (mean, max bytes) over (from_ms, to_ms].
fn bottleneck(r: &ccsim::Results, from_ms: f64, to_ms: f64) -> (f64, f64, f64) {
    let t = common::column(r, "queues", "time_ps");
    let q = common::column(r, "queues", "queue_bytes");
    let u = common::column(r, "queues", "utilization");
    let idx: Vec<usize> = (0..t.len())
        .filter(|&i| t[i] > from_ms * 1e9 && t[i] <= to_ms * 1e9)
        .collect();
    let n = idx.len() as f64;
    (
        idx.iter().map(|&i| u[i]).sum::<f64>() / n,
        idx.iter().map(|&i| q[i]).sum::<f64>() / n,
        idx.iter().map(|&i| q[i]).fold(0.0, f64::max),
    )
}

/// Runs the microbenchmark and checks fairness over the converged window (Jain above
/// `min_jain`, every flow within `band` of the mean share); returns
/// (utilization, mean queue, max queue) over that window for scheme-specific checks.
fn converges_fairly(
    scheme: &str,
    duration_ms: u32,
    from_ms: f64,
    band: f64,
    min_jain: f64,
) -> (f64, f64, f64) {
    let (_, _, r) = common::run(&common::ten_to_one(scheme, duration_ms, None));
    let to = duration_ms as f64;
    let rates = flow_rates(&r, 10, from_ms, to);
    let share = rates.iter().sum::<f64>() / 10.0;
    let (util, qmean, qmax) = bottleneck(&r, from_ms, to);
    eprintln!(
        "{scheme} over {from_ms}-{to} ms: per-flow goodput {:?} Gb/s, Jain {:.4}, utilization {util:.3}, queue mean {qmean:.0} B max {qmax:.0} B",
        rates.iter().map(|x| (x / 1e7).round() / 100.0).collect::<Vec<_>>(),
        common::jain(&rates)
    );
    assert!(
        common::jain(&rates) > min_jain,
        "{scheme}: Jain index {}",
        common::jain(&rates)
    );
    for (i, x) in rates.iter().enumerate() {
        assert!(
            (x - share).abs() < band * share,
            "{scheme}: flow {i} at {:.2} Gb/s, fair share {:.2} Gb/s",
            x / 1e9,
            share / 1e9
        );
    }
    (util, qmean, qmax)
}

#[test]
fn timely_converges_with_oscillating_queue() {
    // TIMELY (HPCC simulator defaults: T_low 50 us, beta 0.8, gradient over 20 us) keeps the
    // rates equal but saws: ramps until the RTT gradient turns positive, then cuts hard, so the
    // queue swings between empty and ~1 MB and the link idles part of the time. The ACC paper
    // (Fig. 10) also reports TIMELY's aggregate rate below capacity. Converged from ~5 ms.
    let (util, qmean, qmax) = converges_fairly("timely", 30, 10.0, 0.3, 0.95);
    assert!(util > 0.75, "utilization {util}");
    assert!(
        qmax > 2.0 * qmean,
        "the queue oscillates (max {qmax}, mean {qmean})"
    );
}

#[test]
fn hpcc_holds_eta_with_near_empty_queue() {
    // HPCC's additive increase (40 Mb/s per RTT) equalizes slowly against the per-ACK noise of
    // the measured utilization, which nudges each flow's reference rate a few percent per RTT:
    // from ~5 ms on Jain stays at 0.97-0.99 but single flows wander 20-40% above the share for
    // tens of milliseconds (seen over 300 ms runs). Measured over 20-50 ms.
    let (util, qmean, _) = converges_fairly("hpcc", 50, 20.0, 0.45, 0.95);
    assert!(
        (0.93..=0.97).contains(&util),
        "utilization {util}, eta = 0.95"
    );
    assert!(qmean < 10_000.0, "mean queue {qmean} B is not near empty");
}

#[test]
fn dctcp_holds_the_queue_at_k() {
    // DCTCP keeps the queue at the marking threshold K (30 KB per 10 Gb/s: 300 KB at 100G)
    // with the link full. Converged within ~2 ms.
    let (util, qmean, _) = converges_fairly("dctcp", 30, 10.0, 0.3, 0.95);
    assert!(util > 0.99, "utilization {util}");
    assert!(
        (240_000.0..330_000.0).contains(&qmean),
        "mean queue {qmean} B, K = 300 KB"
    );
}

#[test]
fn qcn_settles_near_fair_share() {
    // The first round trip at line rate cuts some flows to a fraction of their share; they
    // climb back by byte counter and timer. QCN does not share evenly (Kabbani et al., AF-QCN,
    // 2010): a flow whose feedback keeps coming within its first byte-counter cycle keeps a
    // high target rate (802.1Qau's TR <- CR only after a cycle) and recovers faster. Which
    // flows win depends on the sampling draws, so it is checked over three seeds. Measured over
    // 100-150 ms, seeds 1-3: Jain 0.910, 0.862, 0.910, flows at 0.35-1.76x the fair share
    // (before per-port random streams, Jain 0.917, 0.869, 0.858 and 0.38-1.86x). No flow
    // starves or takes twice its share, and the queue stays at Q_eq (260 KB at 100G).
    for seed in 1..=3 {
        let toml = common::ten_to_one("qcn", 150, None);
        let (_, _, r) = common::run_with(&toml, Some(seed), &[]);
        let rates = flow_rates(&r, 10, 100.0, 150.0);
        let share = rates.iter().sum::<f64>() / 10.0;
        let jain = common::jain(&rates);
        assert!(jain > 0.85, "seed {seed}: Jain index {jain}");
        for (i, x) in rates.iter().enumerate() {
            assert!(
                (share / 3.0..2.0 * share).contains(x),
                "seed {seed}: flow {i} at {:.2} Gb/s, fair share {:.2} Gb/s",
                x / 1e9,
                share / 1e9
            );
        }
        let (util, qmean, _) = bottleneck(&r, 100.0, 150.0);
        assert!(util > 0.98, "seed {seed}: utilization {util}");
        assert!(
            qmean < 1.1 * 260_000.0,
            "seed {seed}: mean queue {qmean} B above Q_eq (260 KB at 100G)"
        );
    }
}

/// HPCC with `max_stage`: flows 5..9 stop at 20 ms; how many base RTTs until the bottleneck
/// is back above `util` after the dip, and the remaining flows' goodput at 22-24 ms.
fn hpcc_reclaim(max_stage: u32, util: f64) -> (f64, Vec<f64>) {
    let ov = format!("cc.params.max_stage={max_stage}");
    let (_, _, r) = common::run_with(
        &common::ten_to_one("hpcc", 24, Some((20, 5..10))),
        None,
        &[&ov],
    );
    let t = common::column(&r, "queues", "time_ps");
    let u = common::column(&r, "queues", "utilization");
    let dip = (0..t.len())
        .find(|&i| t[i] > 20e9 && u[i] < 0.8)
        .expect("the link dips when half the flows stop");
    let back = (dip..t.len())
        .find(|&i| u[i] > util)
        .expect("bandwidth is reclaimed");
    // Base RTT: 4 x 2 us propagation + one 1090-byte packet per hop (4 hops) at 100G.
    let base_rtt_ps = 8.0e6 + 4.0 * 1090.0 * 80.0;
    (
        (t[back] - t[dip]) / base_rtt_ps,
        flow_rates(&r, 5, 22.0, 24.0),
    )
}

#[test]
fn hpcc_reclaims_freed_bandwidth_within_a_few_rtts() {
    // Half the flows leave. HPCC multiplies the window by eta/U at once, but with maxStage = 5
    // (the paper's default, used by the ACC paper) a multiplicative step may follow only after
    // 5 rounds of additive increase, so the link takes 2-3 such steps to refill; with the HPCC
    // simulator's run.py default (MI_THRESH 0) every round may be multiplicative.
    // Goodput of eta x C: 0.95 x 100 Gb/s x 1000 payload / 1090 wire bytes.
    let target = 0.95 * 100e9 * 1000.0 / 1090.0;
    for (max_stage, limit_rtts) in [(5, 20.0), (0, 6.0)] {
        let (rtts, rates) = hpcc_reclaim(max_stage, 0.92);
        let total: f64 = rates.iter().sum();
        eprintln!("hpcc max_stage {max_stage}: utilization back above 0.92 after {rtts:.1} RTTs; the five flows carry {:.1} Gb/s", total / 1e9);
        assert!(rtts < limit_rtts, "max_stage {max_stage}: took {rtts} RTTs");
        assert!(
            (total - target).abs() < 0.05 * target,
            "max_stage {max_stage}: {:.2} Gb/s, eta x C = {:.2}",
            total / 1e9,
            target / 1e9
        );
    }
    let (first, _) = hpcc_reclaim(5, 0.8);
    assert!(first < 10.0, "80% utilization after {first} RTTs");
}

#[test]
fn scheme_headers_are_charged_on_the_wire() {
    // One 1 MB flow: HPCC adds a 42-byte INT header to each data packet and ACK, TIMELY an
    // 8-byte timestamp; the host link carries exactly those bytes.
    for (scheme, extra) in [("dcqcn", 0u64), ("timely", 8), ("hpcc", 42)] {
        let toml = format!(
            "[topology]\nkind = \"star\"\nhosts = 2\nlink = {{ rate = \"100Gbps\", delay = \"1us\" }}\n[cc]\nscheme = \"{scheme}\"\n[[flows]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n"
        );
        let (_, sim, _) = common::run(&toml);
        let sender = sim.hosts[0].port as usize;
        let receiver = sim.hosts[1].port as usize;
        assert_eq!(
            sim.ports[sender].tx_bytes,
            1000 * (1000 + 48 + extra),
            "{scheme}"
        );
        assert_eq!(
            sim.ports[receiver].tx_bytes,
            1000 * (60 + extra),
            "{scheme}: ACKs"
        );
    }
}
