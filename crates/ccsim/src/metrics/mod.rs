//! Metrics, defined once (DESIGN.md): per-flow records with FCT / ideal FCT / slowdown, PFC
//! frames and per-port / per-layer pause counts, optional queue / utilization and per-flow rate
//! samples, and the run summary. Results are columnar tables; `write_dir` writes them as CSV
//! plus `summary.json` and the resolved `config.toml`. Everything but `summary.perf` (wall
//! clock) is deterministic.
//!
//! This file holds the records and tables; sampling and building them run in `engine::probes`.

use serde_json::{json, Value};
use std::io::Write;

pub mod trace;

/// One PFC frame sent by a switch port.
#[derive(Clone, Copy, Debug)]
pub struct PfcEvent {
    pub time_ps: u64,
    pub port: u32,
    pub prio: u8,
    pub pause: bool,
}

/// Everything recorded during a run (beyond the counters kept in ports and flows).
#[derive(Clone, Default)]
pub struct Metrics {
    pub pfc_events: Vec<PfcEvent>,
    /// Payload bytes delivered in order to receivers.
    pub delivered_bytes: u64,
    pub queue_ports: Vec<u32>,
    pub queue_interval_ps: u64,
    /// Probes with a `start` sample first at it with no row, as the baseline of their first
    /// interval (0: no start), and take no sample after their `stop`.
    pub queue_start_ps: u64,
    pub queue_stop_ps: u64,
    pub rate_start_ps: u64,
    pub rate_stop_ps: u64,
    pub q_time_ps: Vec<u64>,
    pub q_port: Vec<u32>,
    pub q_bytes: Vec<u64>,
    pub q_util: Vec<f64>,
    /// Per-flow queue samples (`output.queues.by_flow`): time, port, flow, bytes queued.
    pub queue_by_flow: bool,
    pub fq_time_ps: Vec<u64>,
    pub fq_port: Vec<u32>,
    pub fq_flow: Vec<u32>,
    pub fq_bytes: Vec<u64>,
    pub rate_all_flows: bool,
    pub rate_flows: Vec<u32>,
    pub rate_interval_ps: u64,
    pub r_time_ps: Vec<u64>,
    pub r_flow: Vec<u32>,
    pub r_rate_bps: Vec<u64>,
    pub r_tput_bps: Vec<f64>,
    /// The packet trace being recorded (`output.trace`).
    pub trace: Option<Box<trace::Trace>>,
    /// A parallel run's partitions' peak packets in flight, summed (None: one simulation, whose
    /// arena says).
    pub packets_live_max: Option<u64>,
    /// A parallel run's synchronization counts.
    pub sync: Option<SyncStats>,
}

/// How a parallel run (`engine::parallel`) synchronized, reported in `summary.perf.parallel`
/// (wall-clock parts vary from run to run; the rest is deterministic).
#[derive(Clone, Debug, Default)]
pub struct SyncStats {
    pub partitions: usize,
    pub threads: usize,
    /// The smallest propagation delay of a link between partitions: a window's length.
    pub lookahead_ps: u64,
    pub windows: u64,
    /// Packets and PFC frames that crossed between partitions.
    pub crossings: u64,
    /// Per thread: seconds spent running partitions (the rest of the run it waited).
    pub busy_s: Vec<f64>,
    /// Seconds between windows: the coordinator's whole-fabric work, every other thread waiting.
    pub serial_s: f64,
    /// Per window, the seconds of its slowest partition, summed: with a thread per partition
    /// running at the speed these ran, the run could take no less than this plus `serial_s`.
    pub critical_s: f64,
    /// Seconds the partitions ran, all windows and partitions summed.
    pub work_s: f64,
}

/// The result tables of every run, in output order (each is `<name>.csv` in a run directory).
pub const TABLES: &[&str] = &[
    "flows",
    "pfc_events",
    "pfc_ports",
    "queues",
    "flow_queues",
    "rates",
    "halts",
    "collectives",
];

/// A column of a results table.
#[derive(Clone, Debug)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    fn cell(&self, i: usize, out: &mut String) {
        use std::fmt::Write;
        match self {
            Column::U64(v) => write!(out, "{}", v[i]).unwrap(),
            Column::I64(v) => write!(out, "{}", v[i]).unwrap(),
            Column::F64(v) => {
                if v[i].is_finite() {
                    write!(out, "{}", v[i]).unwrap()
                }
            }
            Column::Str(v) => out.push_str(&v[i]),
        }
    }
}

/// A named columnar table.
#[derive(Clone, Debug)]
pub struct Table {
    /// One of `TABLES`.
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// CSV text (header + rows); NaN is written as an empty cell.
    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        let names: Vec<&str> = self.columns.iter().map(|c| c.0).collect();
        s.push_str(&names.join(","));
        s.push('\n');
        let n = self.columns.first().map_or(0, |c| c.1.len());
        for i in 0..n {
            for (j, (_, c)) in self.columns.iter().enumerate() {
                if j > 0 {
                    s.push(',');
                }
                c.cell(i, &mut s);
            }
            s.push('\n');
        }
        s
    }
}

/// A finished run: tables, deterministic summary, and the resolved config.
pub struct Results {
    pub tables: Vec<Table>,
    pub summary: Value,
    pub config_toml: String,
    /// The pcapng packet trace (`output.trace`), written as `trace.pcapng`.
    pub trace: Option<Vec<u8>>,
    /// A parallel run's synchronization (into `perf` only: it holds wall-clock times).
    pub sync: Option<SyncStats>,
    /// Packet slots in use at once, at most (into `perf`: a parallel run counts each
    /// partition's high-water mark).
    pub packets_live_max: u64,
}

impl Results {
    /// The summary with the wall-clock `perf` block added: `build_s` to build the simulation,
    /// `wall_s` to run it (the rates are per second of `wall_s`).
    pub fn summary_with_perf(&self, build_s: f64, wall_s: f64) -> Value {
        let mut s = self.summary.clone();
        let ev = s["events"].as_u64().unwrap_or(0) as f64;
        let tr = s["link_traversals"].as_u64().unwrap_or(0) as f64;
        let sim_ms = s["sim_time_ps"].as_u64().unwrap_or(0) as f64 / 1e9;
        let w = wall_s.max(1e-9);
        s["perf"] = json!({
            "build_s": build_s,
            "wall_s": wall_s,
            "events_per_s": ev / w,
            "traversals_per_s": tr / w,
            "wall_s_per_sim_ms": if sim_ms > 0.0 { wall_s / sim_ms } else { 0.0 },
            "packets_live_max": self.packets_live_max,
        });
        if let Some(p) = &self.sync {
            s["perf"]["parallel"] = json!({
                "partitions": p.partitions,
                "threads": p.threads,
                "lookahead_us": p.lookahead_ps as f64 / 1e6,
                "windows": p.windows,
                "windows_per_sim_ms": if sim_ms > 0.0 { p.windows as f64 / sim_ms } else { 0.0 },
                "crossings": p.crossings,
                "busy_s": p.busy_s,
                "idle_fraction": p.busy_s.iter().map(|b| 1.0 - b / w).collect::<Vec<f64>>(),
                "serial_s": p.serial_s,
                "critical_path_s": p.critical_s + p.serial_s,
                "partition_work_s": p.work_s,
            });
        }
        s
    }

    /// Write the run directory: one CSV per table, config.toml, trace.pcapng (with a trace),
    /// then summary.json, whose `files` block records each file's bytes, rows (tables) and
    /// CRC-32 for readers to check. Every file is written under a temporary name and renamed
    /// into place, and the old summary goes first: a directory whose summary is missing holds
    /// no complete run.
    pub fn write_dir(
        &self,
        dir: &std::path::Path,
        build_s: f64,
        wall_s: f64,
    ) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        remove_if_there(&dir.join("summary.json"))?;
        let mut files = serde_json::Map::new();
        let mut put = |name: String, bytes: &[u8], rows: Option<usize>| -> std::io::Result<()> {
            write_atomic(&dir.join(&name), bytes)?;
            let mut rec = json!({"bytes": bytes.len(), "crc32": crc32(bytes)});
            if let Some(r) = rows {
                rec["rows"] = json!(r);
            }
            files.insert(name, rec);
            Ok(())
        };
        for t in &self.tables {
            let rows = t.columns.first().map_or(0, |c| c.1.len());
            put(format!("{}.csv", t.name), t.to_csv().as_bytes(), Some(rows))?;
        }
        put("config.toml".into(), self.config_toml.as_bytes(), None)?;
        match &self.trace {
            Some(t) => put("trace.pcapng".into(), t, None)?,
            None => remove_if_there(&dir.join("trace.pcapng"))?,
        }
        let mut summary = self.summary_with_perf(build_s, wall_s);
        summary["files"] = Value::Object(files);
        let mut text = serde_json::to_string_pretty(&summary).unwrap();
        text.push('\n');
        write_atomic(&dir.join("summary.json"), text.as_bytes())
    }
}

/// Write `path` whole or not at all: into a temporary file beside it, then renamed over it. An
/// error names the file (e.g. a directory of that name in the way).
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".tmp-{name}"));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| naming(path, e))
}

fn remove_if_there(path: &std::path::Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(naming(path, e)),
        _ => Ok(()),
    }
}

/// `e` with the file it happened to.
fn naming(path: &std::path::Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("`{}`: {e}", path.display()))
}

/// CRC-32 (IEEE 802.3, as zlib's and Python's `zlib.crc32`) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    !bytes.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
    })
}

/// Size bins of the seed papers: ACC (<100KB, 100KB-10MB, >10MB) and PCN/AMRT (S/M/L/XL).
pub const SIZE_BINS: &[(&str, &str, u64, u64)] = &[
    ("acc", "<100KB", 0, 100_000),
    ("acc", "100KB-10MB", 100_000, 10_000_000),
    ("acc", ">10MB", 10_000_000, u64::MAX),
    ("pcn", "S:<10KB", 0, 10_000),
    ("pcn", "M:10KB-100KB", 10_000, 100_000),
    ("pcn", "L:100KB-1MB", 100_000, 1_000_000),
    ("pcn", "XL:>1MB", 1_000_000, u64::MAX),
];

/// Nearest-rank percentile of a sorted slice (p in [0, 1]).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(crate) fn fct_stats(fct_us: &mut [f64], slow: &mut [f64]) -> Value {
    fct_us.sort_by(|a, b| a.total_cmp(b));
    slow.sort_by(|a, b| a.total_cmp(b));
    let mean = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    json!({
        "count": fct_us.len(),
        "fct_avg_us": num(mean(fct_us)),
        "fct_p50_us": num(percentile(fct_us, 0.5)),
        "fct_p99_us": num(percentile(fct_us, 0.99)),
        "slowdown_avg": num(mean(slow)),
        "slowdown_p50": num(percentile(slow, 0.5)),
        "slowdown_p99": num(percentile(slow, 0.99)),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926); // the standard check value
        assert_eq!(super::crc32(b""), 0);
    }
}
