//! Metrics at run time (`metrics` holds the records): probes sampled during the run, and the
//! tables and summary built from a finished simulation.

use crate::engine::Simulation;
use crate::metrics::{fct_stats, Column, PfcEvent, Results, Table, SIZE_BINS, TABLES};
use crate::sim::Event;
use crate::topo::Layer;
use serde_json::{json, Map, Value};

impl Simulation {
    /// Drops (per layer of the dropping switch), trims and retransmission timeouts of a lossy
    /// run.
    fn loss_summary(&self) -> Value {
        let nodes = &self.topo.nodes;
        let ps = &self.ports;
        let mut by_layer = Map::new();
        for layer in &Layer::ALL[1..] {
            let layer = *layer;
            let sel: Vec<&crate::net::Port> = ps
                .iter()
                .filter(|p| nodes[p.node as usize].layer == layer)
                .collect();
            if !sel.is_empty() {
                by_layer.insert(
                    layer.name().into(),
                    json!({
                        "drops": sel.iter().map(|p| p.drops).sum::<u64>(),
                        "trims": sel.iter().map(|p| p.trims).sum::<u64>(),
                    }),
                );
            }
        }
        json!({
            "drops": ps.iter().map(|p| p.drops).sum::<u64>(),
            "drop_bytes": ps.iter().map(|p| p.drop_bytes).sum::<u64>(),
            "trims": ps.iter().map(|p| p.trims).sum::<u64>(),
            "timeouts": self.flows.iter().map(|f| f.loss.timeouts).sum::<u64>(),
            "data_bytes_sent": self.flows.iter().map(|f| f.tx_bytes).sum::<u64>(),
            "by_layer": Value::Object(by_layer),
        })
    }

    pub(crate) fn sample_queues(&mut self) {
        let now = self.now_ps;
        let m = &mut self.metrics;
        let baseline = now == m.queue_start_ps;
        for &pid in &m.queue_ports {
            let p = &mut self.ports[pid as usize];
            // A packet in service counts only its bits already serialized, so a packet that
            // straddles the sample edge is split between the two intervals.
            let in_service_ps = p.busy_until_ps.saturating_sub(now);
            let wire_bits =
                p.tx_bytes as f64 * 8.0 - in_service_ps as f64 * p.rate_bps as f64 / 1e12;
            if baseline {
                p.sampled_wire_bits = wire_bits;
                continue;
            }
            m.q_time_ps.push(now);
            m.q_port.push(pid);
            m.q_bytes.push(p.backlog_bytes());
            m.q_util.push(
                (wire_bits - p.sampled_wire_bits)
                    / (p.rate_bps as f64 * m.queue_interval_ps as f64 / 1e12),
            );
            p.sampled_wire_bits = wire_bits;
            if m.queue_by_flow {
                // Bytes per flow, every priority, in flow order (deterministic output).
                let mut per_flow: Vec<(u32, u64)> = p
                    .prios
                    .iter()
                    .flat_map(|c| c.packets())
                    .map(|pkt| (self.pkts[pkt].flow, self.pkts[pkt].size_bytes as u64))
                    .collect();
                per_flow.sort_unstable_by_key(|&(f, _)| f);
                for chunk in per_flow.chunk_by(|a, b| a.0 == b.0) {
                    m.fq_time_ps.push(now);
                    m.fq_port.push(pid);
                    m.fq_flow.push(chunk[0].0);
                    m.fq_bytes.push(chunk.iter().map(|&(_, b)| b).sum());
                }
            }
        }
        let next = now + m.queue_interval_ps;
        if next <= self.stop_ps.min(m.queue_stop_ps) {
            self.q.push(next, Event::SampleQueues);
        }
    }

    pub(crate) fn sample_rates(&mut self) {
        let now = self.now_ps;
        let m = &mut self.metrics;
        let secs = m.rate_interval_ps as f64 / 1e12;
        let n = if m.rate_all_flows {
            self.flows.len()
        } else {
            m.rate_flows.len()
        };
        for i in 0..n {
            let fid = if m.rate_all_flows {
                i as u32
            } else {
                m.rate_flows[i]
            };
            let f = &mut self.flows[fid as usize];
            if now == m.rate_start_ps {
                f.sampled_acked = f.snd_una;
                continue;
            }
            if !f.started || (f.finished && f.sampled_acked >= f.snd_una) {
                continue;
            }
            m.r_time_ps.push(now);
            m.r_flow.push(fid);
            m.r_rate_bps
                .push(if f.finished { 0 } else { f.ctl.rate_bps });
            m.r_tput_bps
                .push((f.snd_una - f.sampled_acked) as f64 * 8.0 / secs);
            f.sampled_acked = f.snd_una;
        }
        let next = now + m.rate_interval_ps;
        if next <= self.stop_ps.min(m.rate_stop_ps) {
            self.q.push(next, Event::SampleRates);
        }
    }

    /// Collect the results of a finished run: the tables named in `TABLES`, in that order,
    /// and the summary.
    pub fn results(&mut self, name: &str, seed: u64, scheme: &str, config_toml: String) -> Results {
        self.close_pause_intervals();
        let fct = self.fct_ps();
        let slowdown: Vec<f64> = self
            .flows
            .iter()
            .zip(&fct)
            .map(|(f, &t)| {
                if t >= 0 {
                    t as f64 / f.ideal_fct_ps as f64
                } else {
                    f64::NAN
                }
            })
            .collect();
        let tables = vec![
            self.flows_table(&fct, &slowdown),
            self.pfc_events_table(),
            self.pfc_ports_table(),
            self.queues_table(),
            self.flow_queues_table(),
            self.rates_table(),
            self.halts_table(),
            self.collectives_table(),
        ];
        debug_assert!(tables.iter().map(|t| t.name).eq(TABLES.iter().copied()));
        let summary = self.summary(name, seed, scheme, &fct, &slowdown);
        let trace = self.metrics.trace.take().map(|t| {
            if t.full() {
                self.warnings.push(format!("output.trace: stopped at max_packets = {} frames; trace fewer ports, a shorter window (start, stop) or raise max_packets", t.packets));
            }
            t.into_bytes()
        });
        Results {
            tables,
            summary,
            config_toml,
            trace,
            sync: self.metrics.sync.clone(),
            packets_live_max: (self.metrics.packets_live_max)
                .unwrap_or(self.pkts.capacity_used() as u64),
        }
    }

    /// Each flow's FCT, or -1 if it did not finish (or is long-lived).
    fn fct_ps(&self) -> Vec<i64> {
        self.flows
            .iter()
            .map(|f| {
                if f.finished && !f.long_lived {
                    (f.finish_ps - f.start_ps) as i64
                } else {
                    -1
                }
            })
            .collect()
    }

    fn flows_table(&self, fct: &[i64], slowdown: &[f64]) -> Table {
        let fl = &self.flows;
        let u64s = |g: fn(&crate::transport::Flow) -> u64| Column::U64(fl.iter().map(g).collect());
        Table {
            name: "flows",
            columns: vec![
                ("id", Column::U64((0..fl.len() as u64).collect())),
                ("src", u64s(|f| f.src as u64)),
                ("dst", u64s(|f| f.dst as u64)),
                (
                    "size_bytes",
                    Column::I64(
                        fl.iter()
                            .map(|f| {
                                if f.long_lived {
                                    -1
                                } else {
                                    f.size_bytes as i64
                                }
                            })
                            .collect(),
                    ),
                ),
                ("start_ps", u64s(|f| f.start_ps)),
                (
                    "finish_ps",
                    Column::I64(
                        fl.iter()
                            .map(|f| if f.finished { f.finish_ps as i64 } else { -1 })
                            .collect(),
                    ),
                ),
                ("fct_ps", Column::I64(fct.to_vec())),
                ("ideal_fct_ps", u64s(|f| f.ideal_fct_ps)),
                ("slowdown", Column::F64(slowdown.to_vec())),
                ("bytes_acked", u64s(|f| f.snd_una)),
            ],
        }
    }

    /// The node owning port `pid`, and the node at its other end.
    fn port_ends(&self, pid: u32) -> (&crate::topo::NodeInfo, &crate::topo::NodeInfo) {
        let nodes = &self.topo.nodes;
        let port = &self.ports[pid as usize];
        (
            &nodes[port.node as usize],
            &nodes[self.ports[port.peer as usize].node as usize],
        )
    }

    /// PFC frames by (time, port, class): one order however many partitions recorded them.
    fn pfc_events_table(&self) -> Table {
        let mut ev = self.metrics.pfc_events.clone();
        ev.sort_by_key(|e| (e.time_ps, e.port, e.prio, e.pause));
        let strs = |g: &dyn Fn(&PfcEvent) -> String| Column::Str(ev.iter().map(g).collect());
        Table {
            name: "pfc_events",
            columns: vec![
                (
                    "time_ps",
                    Column::U64(ev.iter().map(|e| e.time_ps).collect()),
                ),
                ("node", strs(&|e| self.port_ends(e.port).0.name.clone())),
                (
                    "layer",
                    strs(&|e| self.port_ends(e.port).0.layer.name().into()),
                ),
                (
                    "port",
                    Column::U64(ev.iter().map(|e| e.port as u64).collect()),
                ),
                ("to_node", strs(&|e| self.port_ends(e.port).1.name.clone())),
                (
                    "prio",
                    Column::U64(ev.iter().map(|e| e.prio as u64).collect()),
                ),
                (
                    "kind",
                    strs(&|e| if e.pause { "pause" } else { "resume" }.into()),
                ),
            ],
        }
    }

    fn pfc_ports_table(&self) -> Table {
        let ps = &self.ports;
        let u64s = |g: fn(&crate::net::Port) -> u64| Column::U64(ps.iter().map(g).collect());
        let strs = |g: &dyn Fn(u32) -> String| Column::Str((0..ps.len() as u32).map(g).collect());
        let mut columns = vec![
            ("port", Column::U64((0..ps.len() as u64).collect())),
            ("node", strs(&|i| self.port_ends(i).0.name.clone())),
            ("layer", strs(&|i| self.port_ends(i).0.layer.name().into())),
            ("to_node", strs(&|i| self.port_ends(i).1.name.clone())),
            ("pauses_sent", u64s(|p| p.pause_sent)),
            ("resumes_sent", u64s(|p| p.resume_sent)),
            ("pauses_received", u64s(|p| p.pause_rx)),
            ("resumes_received", u64s(|p| p.resume_rx)),
            ("paused_time_ps", u64s(|p| p.paused_time_ps)),
            ("tx_bytes", u64s(|p| p.tx_bytes)),
            ("ecn_marked", u64s(|p| p.ecn_marked)),
            ("ctrl_sent", u64s(|p| p.ctrl_sent)),
            ("max_queue_bytes", u64s(|p| p.max_queue_bytes)),
        ];
        if self.s.drop.is_some() {
            columns.extend([
                ("drops", u64s(|p| p.drops)),
                ("drop_bytes", u64s(|p| p.drop_bytes)),
                ("trims", u64s(|p| p.trims)),
            ]);
        }
        if self.s.ctrl_queue.is_some() {
            columns.push(("ctrl_drops", u64s(|p| p.ctrl_drops)));
        }
        Table {
            name: "pfc_ports",
            columns,
        }
    }

    /// "node->peer" of port `pid`.
    pub fn link_name(&self, pid: u32) -> String {
        let (a, b) = self.port_ends(pid);
        format!("{}->{}", a.name, b.name)
    }

    fn queues_table(&self) -> Table {
        let m = &self.metrics;
        let link = |&pid: &u32| self.link_name(pid);
        Table {
            name: "queues",
            columns: vec![
                ("time_ps", Column::U64(m.q_time_ps.clone())),
                (
                    "port",
                    Column::U64(m.q_port.iter().map(|&p| p as u64).collect()),
                ),
                ("link", Column::Str(m.q_port.iter().map(link).collect())),
                ("queue_bytes", Column::U64(m.q_bytes.clone())),
                ("utilization", Column::F64(m.q_util.clone())),
            ],
        }
    }

    fn flow_queues_table(&self) -> Table {
        let m = &self.metrics;
        let link = |&pid: &u32| self.link_name(pid);
        Table {
            name: "flow_queues",
            columns: vec![
                ("time_ps", Column::U64(m.fq_time_ps.clone())),
                (
                    "port",
                    Column::U64(m.fq_port.iter().map(|&p| p as u64).collect()),
                ),
                ("link", Column::Str(m.fq_port.iter().map(link).collect())),
                (
                    "flow",
                    Column::U64(m.fq_flow.iter().map(|&f| f as u64).collect()),
                ),
                ("queue_bytes", Column::U64(m.fq_bytes.clone())),
            ],
        }
    }

    fn rates_table(&self) -> Table {
        let m = &self.metrics;
        Table {
            name: "rates",
            columns: vec![
                ("time_ps", Column::U64(m.r_time_ps.clone())),
                (
                    "flow",
                    Column::U64(m.r_flow.iter().map(|&f| f as u64).collect()),
                ),
                ("rate_bps", Column::U64(m.r_rate_bps.clone())),
                ("throughput_bps", Column::F64(m.r_tput_bps.clone())),
            ],
        }
    }

    /// ACC's source halts, in flow order: when each began and ended (with its extension), the
    /// rate R it throttled to (bytes on the wire) and the dS and dA (payload bytes) it was
    /// decided from. Empty for every other scheme.
    fn halts_table(&self) -> Table {
        let halts: Vec<(u64, crate::cc::acc::Halt)> = match &self.senders {
            crate::cc::SenderStates::Acc(s) => s
                .iter()
                .enumerate()
                .flat_map(|(f, st)| st.halts.iter().map(move |h| (f as u64, *h)))
                .collect(),
            _ => Vec::new(),
        };
        let col =
            |f: fn(&(u64, crate::cc::acc::Halt)) -> u64| Column::U64(halts.iter().map(f).collect());
        Table {
            name: "halts",
            columns: vec![
                ("flow", col(|h| h.0)),
                ("start_ps", col(|h| h.1.start_ps)),
                ("end_ps", col(|h| h.1.end_ps)),
                (
                    "rate_bps",
                    Column::F64(halts.iter().map(|h| h.1.rate_bps).collect()),
                ),
                ("sent_bytes", col(|h| h.1.sent_bytes)),
                ("acked_bytes", col(|h| h.1.acked_bytes)),
            ],
        }
    }

    /// Each collective iteration's start (its first flow's) and completion (its last flow's
    /// finish less that start; -1 if a flow did not finish).
    fn collective_spans(&self) -> Vec<(u64, i64)> {
        (self.collectives.iter())
            .map(|c| {
                let fl =
                    &self.flows.all()[c.first_flow as usize..(c.first_flow + c.flows) as usize];
                let start = fl.iter().map(|f| f.start_ps).min().unwrap_or(0);
                let finish = fl.iter().map(|f| f.finish_ps).max().unwrap_or(0);
                let done = fl.iter().all(|f| f.finished);
                (start, if done { (finish - start) as i64 } else { -1 })
            })
            .collect()
    }

    /// Each iteration of a collective workload: when it started, how long it took (-1: not
    /// all its flows finished), the bandwidth term it is measured against and their ratio.
    fn collectives_table(&self) -> Table {
        let (cs, spans) = (&self.collectives, self.collective_spans());
        let u =
            |f: fn(&crate::workload::Collective) -> u64| Column::U64(cs.iter().map(f).collect());
        Table {
            name: "collectives",
            columns: vec![
                ("job", u(|c| c.job as u64)),
                (
                    "kind",
                    Column::Str(cs.iter().map(|c| c.kind.to_string()).collect()),
                ),
                ("iteration", u(|c| c.iteration as u64)),
                ("hosts", u(|c| c.hosts as u64)),
                ("flows", u(|c| c.flows as u64)),
                ("start_ps", Column::U64(spans.iter().map(|s| s.0).collect())),
                (
                    "completion_ps",
                    Column::I64(spans.iter().map(|s| s.1).collect()),
                ),
                ("ideal_ps", u(|c| c.ideal_ps)),
                (
                    "slowdown",
                    Column::F64(
                        (cs.iter().zip(&spans))
                            .map(|(c, s)| match s.1 {
                                t if t < 0 => f64::NAN,
                                t => t as f64 / c.ideal_ps.max(1) as f64,
                            })
                            .collect(),
                    ),
                ),
            ],
        }
    }

    /// Per collective job: its iterations' completion times (mean, min, max: the spread), the
    /// bandwidth term and the slowdowns (mean, min, max), over the iterations that completed.
    fn collectives_summary(&self) -> Value {
        let spans = self.collective_spans();
        let mut jobs = Map::new();
        for job in self
            .collectives
            .iter()
            .map(|c| c.job)
            .collect::<std::collections::BTreeSet<_>>()
        {
            let its: Vec<(&crate::workload::Collective, i64)> =
                (self.collectives.iter().zip(&spans))
                    .filter(|(c, _)| c.job == job)
                    .map(|(c, s)| (c, s.1))
                    .collect();
            let done: Vec<(f64, f64)> = (its.iter())
                .filter(|(_, t)| *t >= 0)
                .map(|(c, t)| (*t as f64 / 1e6, *t as f64 / c.ideal_ps.max(1) as f64))
                .collect();
            let us: Vec<f64> = done.iter().map(|d| d.0).collect();
            let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let slowdowns: Vec<f64> = done.iter().map(|d| d.1).collect();
            jobs.insert(
                job.to_string(),
                json!({
                    "kind": its[0].0.kind,
                    "hosts": its[0].0.hosts,
                    "iterations": its.len(),
                    "completed": done.len(),
                    "completion_avg_us": mean(&us),
                    "completion_min_us": us.iter().cloned().reduce(f64::min),
                    "completion_max_us": us.iter().cloned().reduce(f64::max),
                    "ideal_avg_us": its.iter().map(|(c, _)| c.ideal_ps as f64 / 1e6).sum::<f64>() / its.len() as f64,
                    "slowdown_avg": mean(&slowdowns),
                    "slowdown_min": slowdowns.iter().cloned().reduce(f64::min),
                    "slowdown_max": slowdowns.iter().cloned().reduce(f64::max),
                }),
            );
        }
        Value::Object(jobs)
    }

    /// FCT and slowdown statistics of finished flows per size bin, and over all.
    fn fct_bins(&self, fct: &[i64], slowdown: &[f64]) -> Map<String, Value> {
        let pick = |lo: u64, hi: u64| -> (Vec<f64>, Vec<f64>) {
            self.flows
                .iter()
                .zip(fct.iter().zip(slowdown))
                .filter(|(f, (t, _))| **t >= 0 && f.size_bytes >= lo && f.size_bytes < hi)
                .map(|(_, (t, s))| (*t as f64 / 1e6, *s))
                .unzip()
        };
        let mut bins = Map::new();
        for (family, label, lo, hi) in SIZE_BINS {
            let (mut f, mut s) = pick(*lo, *hi);
            let e = bins.entry(family.to_string()).or_insert_with(|| json!({}));
            e[*label] = fct_stats(&mut f, &mut s);
        }
        let (mut f_all, mut s_all): (Vec<f64>, Vec<f64>) = fct
            .iter()
            .zip(slowdown)
            .filter(|(t, _)| **t >= 0)
            .map(|(t, s)| (*t as f64 / 1e6, *s))
            .unzip();
        bins.insert("all".into(), fct_stats(&mut f_all, &mut s_all));
        bins
    }

    fn summary(&self, name: &str, seed: u64, scheme: &str, fct: &[i64], slowdown: &[f64]) -> Value {
        let (fl, ps) = (&self.flows, &self.ports);
        let nodes = &self.topo.nodes;
        let mut by_layer = Map::new();
        for layer in Layer::ALL {
            let sel: Vec<&crate::net::Port> = ps
                .iter()
                .filter(|p| nodes[p.node as usize].layer == layer)
                .collect();
            if sel.is_empty() {
                continue;
            }
            by_layer.insert(
                layer.name().into(),
                json!({
                    "pauses_sent": sel.iter().map(|p| p.pause_sent).sum::<u64>(),
                    "pauses_received": sel.iter().map(|p| p.pause_rx).sum::<u64>(),
                    "paused_time_ps": sel.iter().map(|p| p.paused_time_ps).sum::<u64>(),
                }),
            );
        }
        let finished = fl.iter().filter(|f| f.finished).count();
        let mut summary = json!({
            "name": name,
            "seed": seed,
            "scheme": scheme,
            "sim_time_ps": self.now_ps,
            "events": self.events,
            "link_traversals": self.link_traversals,
            "flows": {
                "total": fl.len(),
                "finished": finished,
                "unfinished": fl.len() - finished,
                "long_lived": fl.iter().filter(|f| f.long_lived).count(),
                "payload_bytes_delivered": self.metrics.delivered_bytes,
                "payload_bytes_acked": fl.iter().map(|f| f.snd_una).sum::<u64>(),
            },
            "fct": Value::Object(self.fct_bins(fct, slowdown)),
            "pfc": {
                "pauses_sent": ps.iter().map(|p| p.pause_sent).sum::<u64>(),
                "resumes_sent": ps.iter().map(|p| p.resume_sent).sum::<u64>(),
                "pauses_received": ps.iter().map(|p| p.pause_rx).sum::<u64>(),
                "by_layer": Value::Object(by_layer),
            },
            "ecn_marked": ps.iter().map(|p| p.ecn_marked).sum::<u64>(),
            "ctrl_sent": ps.iter().map(|p| p.ctrl_sent).sum::<u64>(),
            "switch_max_buffer_bytes": self.switches.iter().map(|s| s.max_used_bytes).max().unwrap_or(0),
        });
        if self.s.drop.is_some() {
            summary["loss"] = self.loss_summary();
        }
        if !self.collectives.is_empty() {
            summary["collectives"] = self.collectives_summary();
        }
        if self.s.pfc_enabled {
            let found = &self.deadlock.found;
            summary["pfc"]["deadlock"] = (!found.is_empty()).into();
            summary["pfc"]["deadlocks"] = found
                .iter()
                .map(|d| {
                    json!({
                        "formed_ps": d.formed_ps,
                        "confirmed_ps": d.confirmed_ps,
                        "prio": d.prio,
                        "ports": d.ports.iter().map(|&p| self.link_name(p)).collect::<Vec<_>>(),
                    })
                })
                .collect::<Vec<_>>()
                .into();
        }
        if self.s.pfc_enabled && self.s.switch_ack_priority != self.s.ack_priority {
            summary["pfc"]["acks_past_headroom"] = self
                .switches
                .iter()
                .map(|s| s.acks_past_headroom)
                .sum::<u64>()
                .into();
        }
        if self.s.ctrl_queue.is_some() {
            summary["ctrl_drops"] = ps.iter().map(|p| p.ctrl_drops).sum::<u64>().into();
        }
        let counters = self.cc.counters(&self.receivers, &self.host_rx);
        if !counters.is_empty() {
            summary["scheme_counters"] = counters
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::from(v)))
                .collect::<Map<_, _>>()
                .into();
        }
        summary
    }
}
