//! Scenario files: TOML text + `--set key=value` overrides -> a validated, fully resolved
//! config (every default filled in, written back as `config.toml` so any run can be repeated)
//! -> a built `Simulation`. Every error names the field and says how to fix it.

pub mod build;
pub mod config;

pub use crate::sim::input::{from_value, from_value_at, parse_toml_as, ScenarioError};
use crate::sim::quantity;
use config::{ScenarioCfg, TopologyCfg, WorkloadCfg};

/// Apply one `dotted.key=value` override. The value is read as a TOML literal ("3", "1.5",
/// "[1, 2]", "true", "\"x\""), and as a plain string otherwise ("100Gbps"). `~dotted.key`
/// removes the key instead (`--unset`), so its default applies.
pub fn apply_override(root: &mut toml::Table, spec: &str) -> Result<(), ScenarioError> {
    if let Some(key) = spec.strip_prefix('~') {
        return unset_key(root, key.trim());
    }
    let (key, raw) = spec.split_once('=').ok_or_else(|| {
        ScenarioError::new(
            "--set",
            format!("`{spec}` is not key=value; write e.g. --set topology.hosts=8"),
        )
    })?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|p| p.is_empty()) {
        return Err(ScenarioError::new(
            "--set",
            format!("`{key}` is not a dotted key like cc.params.g"),
        ));
    }
    let raw = raw.trim();
    let value = match format!("v = {raw}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("parsed"),
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let parts: Vec<&str> = key.split('.').collect();
    let not_container = |i: usize| {
        ScenarioError::new(
            "--set",
            format!(
                "`{}` is not a table or list, so `{key}` cannot be set",
                parts[..i].join(".")
            ),
        )
    };
    let mut cur = root.entry(parts[0].to_string()).or_insert_with(|| {
        if parts.len() > 1 {
            toml::Value::Table(toml::Table::new())
        } else {
            toml::Value::Boolean(false)
        }
    });
    for (i, p) in parts.iter().enumerate().skip(1) {
        cur = match cur {
            toml::Value::Table(t) => t.entry(p.to_string()).or_insert_with(|| {
                if i + 1 < parts.len() {
                    toml::Value::Table(toml::Table::new())
                } else {
                    toml::Value::Boolean(false)
                }
            }),
            // `workload.0.load`: a numeric part indexes a list (an array of tables).
            toml::Value::Array(a) => {
                let idx: usize = p.parse().map_err(|_| {
                    ScenarioError::new(
                        "--set",
                        format!(
                            "`{}` is a list; index it with a number, e.g. {}.0",
                            parts[..i].join("."),
                            parts[..i].join(".")
                        ),
                    )
                })?;
                let len = a.len();
                a.get_mut(idx).ok_or_else(|| {
                    ScenarioError::new(
                        "--set",
                        format!(
                            "`{}` has {len} entries; index {idx} is out of range",
                            parts[..i].join(".")
                        ),
                    )
                })?
            }
            _ => return Err(not_container(i)),
        };
    }
    if cur.is_table() && !value.is_table() {
        return Err(ScenarioError::new(
            "--set",
            format!("`{key}` is a table: set one of its keys ({key}.x=...) or give a table ({key}={{ ... }}), not `{raw}`"),
        ));
    }
    *cur = value;
    Ok(())
}

/// Remove one dotted key (`output.trace`, `workload.0.stop`) from the scenario; a key that is
/// not there is an error, so a misspelt one does not pass silently.
fn unset_key(root: &mut toml::Table, key: &str) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ScenarioError::new(
            "--unset",
            format!("`{key}` is not a dotted key like output.trace"),
        ));
    }
    if unset_in(root, &parts) {
        return Ok(());
    }
    Err(ScenarioError::new(
        "--unset",
        format!("`{key}` is not set in the scenario (a list's entry is unset by its keys, e.g. workload.0.stop), so there is nothing to unset"),
    ))
}

fn unset_in(table: &mut toml::Table, parts: &[&str]) -> bool {
    match parts {
        [last] => table.remove(*last).is_some(),
        [first, rest @ ..] => match table.get_mut(*first) {
            Some(toml::Value::Table(t)) => unset_in(t, rest),
            // `workload.0.stop`: a numeric part indexes a list (an array of tables).
            Some(toml::Value::Array(list)) => match rest {
                [idx, inner @ ..] if !inner.is_empty() => idx
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| list.get_mut(i))
                    .and_then(toml::Value::as_table_mut)
                    .is_some_and(|t| unset_in(t, inner)),
                _ => false,
            },
            _ => false,
        },
        [] => false,
    }
}

/// The first key holding a NaN float, as a dotted path.
fn nan_key(table: &toml::Table, prefix: &str) -> Option<String> {
    fn walk(v: &toml::Value, path: String) -> Option<String> {
        match v {
            toml::Value::Float(x) if x.is_nan() => Some(path),
            toml::Value::Table(t) => nan_key(t, &path),
            toml::Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, format!("{path}[{i}]"))),
            _ => None,
        }
    }
    table.iter().find_map(|(k, v)| {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        walk(v, path)
    })
}

/// Fill the fabric-detail settings `compat` gives defaults for (`config::Compat`).
fn resolve_compat(cfg: &mut ScenarioCfg) {
    use config::{BaseRttBytes, Compat, TxTime};
    let sim = cfg.compat == Compat::HpccSim;
    cfg.fabric
        .tx_time
        .get_or_insert(if sim { TxTime::FloorNs } else { TxTime::Exact });
    cfg.host.base_rtt_bytes.get_or_insert(if sim {
        BaseRttBytes::Payload
    } else {
        BaseRttBytes::FullPacket
    });
    // PFC's own settings exist on a lossless fabric only (`resolve_fabric_mode` refuses them
    // elsewhere), alpha_per_rate in the dynamic mode only.
    let pfc = &mut cfg.fabric.pfc;
    if pfc.enabled {
        pfc.reserve
            .get_or_insert(quantity::Size(if sim { 4096 } else { 0 }));
        pfc.headroom_mtus.get_or_insert(if sim { 0 } else { 2 });
        if pfc.mode() == config::PfcMode::Dynamic {
            pfc.alpha_per_rate.get_or_insert(sim);
        }
    }
}

/// Check the options that belong to one fabric mode only, and resolve the lossy fabric's drop
/// policy and host recovery when PFC is off.
fn resolve_fabric_mode(
    cfg: &mut config::ScenarioCfg,
    info: &crate::cc::SchemeInfo,
) -> Result<(), ScenarioError> {
    use crate::cc::FabricMode;
    use config::{DropMode, LossCfg};
    let lossless = cfg.fabric.pfc.enabled;
    match info.fabric {
        FabricMode::Lossless if !lossless => return only_on("cc.scheme", false),
        FabricMode::Lossy if lossless => return only_on("cc.scheme", true),
        _ => {}
    }
    if lossless {
        resolve_pfc(&mut cfg.fabric.pfc)?;
        if cfg.fabric.loss.is_some() {
            return only_on("fabric.loss", true);
        }
        if cfg.host.recovery.is_some() {
            return only_on("host.recovery", true);
        }
        return Ok(());
    }
    refuse_pfc_keys(&cfg.fabric.pfc)?;
    let loss = cfg.fabric.loss.get_or_insert(LossCfg {
        mode: DropMode::Dynamic,
        queue_packets: None,
        queue_bytes: None,
        alpha: None,
        port_packets: None,
        port_bytes: None,
        ctrl_packets: None,
        header_turns: None,
    });
    resolve_loss(loss, info)?;
    check_recovery(cfg.host.recovery.get_or_insert_with(Default::default))
}

/// The error for `field`, set where it does nothing: it applies only to a lossy fabric
/// (`lossy`) or only to a lossless one.
fn only_on(field: &str, lossy: bool) -> Result<(), ScenarioError> {
    let (want, set) = if lossy {
        ("a lossy fabric", "false")
    } else {
        ("a lossless fabric", "true")
    };
    Err(ScenarioError::new(
        field,
        format!("applies only to {want} (fabric.pfc.enabled = {set}); remove it or change fabric.pfc.enabled"),
    ))
}

/// A lossless fabric's PFC thresholds: the dynamic mode's alpha (default 1/8), none in the
/// static mode.
fn resolve_pfc(pfc: &mut config::PfcCfg) -> Result<(), ScenarioError> {
    pfc.fill_defaults();
    match pfc.mode() {
        config::PfcMode::Static if pfc.alpha.is_some() || pfc.alpha_per_rate.is_some() => {
            let field = if pfc.alpha.is_some() {
                "alpha"
            } else {
                "alpha_per_rate"
            };
            return Err(ScenarioError::new(
                &format!("fabric.pfc.{field}"),
                "applies only to mode = \"dynamic\"; the static mode pauses at xoff",
            ));
        }
        config::PfcMode::Static => {}
        config::PfcMode::Dynamic => {
            let a = *pfc.alpha.get_or_insert(0.125);
            if !(a > 0.0 && a <= 64.0) {
                return Err(ScenarioError::new(
                    "fabric.pfc.alpha",
                    format!("{a} is out of range: the dynamic threshold factor is in (0, 64] (1/8 in the HPCC simulator)"),
                ));
            }
        }
    }
    Ok(())
}

/// PFC's keys do nothing on a lossy fabric: one set, even to its default, is an error, not
/// silently ignored (a lossy fabric's resolved config writes none of them).
fn refuse_pfc_keys(pfc: &config::PfcCfg) -> Result<(), ScenarioError> {
    for (field, set) in [
        ("headroom", pfc.headroom.is_some()),
        ("headroom_mtus", pfc.headroom_mtus.is_some()),
        ("max_t_on", pfc.max_t_on.is_some()),
        ("reserve", pfc.reserve.is_some()),
        ("alpha_per_rate", pfc.alpha_per_rate.is_some()),
        ("alpha", pfc.alpha.is_some()),
        ("mode", pfc.mode.is_some()),
        ("xoff", pfc.xoff.is_some()),
        ("resume_offset", pfc.resume_offset.is_some()),
        ("frame_bytes", pfc.frame_bytes.is_some()),
        ("deadlock_after", pfc.deadlock_after.is_some()),
    ] {
        if set {
            return only_on(&format!("fabric.pfc.{field}"), false);
        }
    }
    Ok(())
}

/// A lossy fabric's drop policy: drop-tail's limits or the dynamic mode's alpha (default 1),
/// and the trimming queue's turns for a trimming scheme only.
fn resolve_loss(
    loss: &mut config::LossCfg,
    info: &crate::cc::SchemeInfo,
) -> Result<(), ScenarioError> {
    use config::DropMode;
    if let Some(turns) = loss.header_turns {
        if !info.trim {
            return Err(ScenarioError::new(
                "fabric.loss.header_turns",
                format!(
                    "applies only to a trimming scheme (ndp); `{}` does not trim: remove it",
                    info.name
                ),
            ));
        }
        if turns == 0 {
            return Err(ScenarioError::new(
                "fabric.loss.header_turns",
                "must be >= 1 header turn per data turn (10: the NDP authors' htsim; 100000: csg-htsim)",
            ));
        }
    }
    match loss.mode {
        DropMode::DropTail => {
            if loss.alpha.is_some() {
                return Err(ScenarioError::new(
                    "fabric.loss.alpha",
                    "applies only to mode = \"dynamic\"; drop-tail takes queue_packets or queue_bytes",
                ));
            }
            let none = |n: Option<u32>, b: Option<quantity::Size>| {
                n.unwrap_or(0) == 0 && b.is_none_or(|b| b.0 == 0)
            };
            for (packets, bytes, what) in [
                (loss.queue_packets, loss.queue_bytes, "queue"),
                (loss.port_packets, loss.port_bytes, "port"),
            ] {
                if packets.is_some() && bytes.is_some() {
                    return Err(ScenarioError::new(
                        &format!("fabric.loss.{what}_bytes"),
                        format!(
                            "a {what} has one limit: set {what}_packets or {what}_bytes, not both"
                        ),
                    ));
                }
            }
            if none(loss.queue_packets, loss.queue_bytes)
                && none(loss.port_packets, loss.port_bytes)
            {
                return Err(ScenarioError::new(
                    "fabric.loss.queue_packets",
                    "drop-tail needs a limit > 0: set queue_packets (e.g. 128), queue_bytes, port_packets or port_bytes",
                ));
            }
        }
        DropMode::Dynamic => {
            for (field, set) in [
                ("queue_packets", loss.queue_packets.is_some()),
                ("queue_bytes", loss.queue_bytes.is_some()),
                ("port_packets", loss.port_packets.is_some()),
                ("port_bytes", loss.port_bytes.is_some()),
            ] {
                if set {
                    return Err(ScenarioError::new(
                        &format!("fabric.loss.{field}"),
                        "applies only to mode = \"drop_tail\"; the dynamic mode takes alpha",
                    ));
                }
            }
            let a = *loss.alpha.get_or_insert(1.0);
            if !(a > 0.0 && a.is_finite()) {
                return Err(ScenarioError::new("fabric.loss.alpha", "must be > 0"));
            }
        }
    }
    Ok(())
}

/// The host's loss recovery: timeouts > 0, IRN's low timeout under its high one, and no
/// timeout of the other mode.
fn check_recovery(r: &crate::transport::loss::Recovery) -> Result<(), ScenarioError> {
    for (field, t) in [
        ("rto", r.rto),
        ("rto_low", r.rto_low),
        ("rto_high", r.rto_high),
    ] {
        if t.0 == 0 {
            return Err(ScenarioError::new(
                &format!("host.recovery.{field}"),
                "must be > 0",
            ));
        }
    }
    if r.rto_low > r.rto_high {
        return Err(ScenarioError::new(
            "host.recovery.rto_low",
            "must not exceed rto_high (IRN uses the low timeout while few packets are in flight)",
        ));
    }
    // IRN's timeouts do nothing under go-back-N (and its `rto` nothing under IRN).
    let d = crate::transport::loss::Recovery::default();
    let unused = match r.mode {
        crate::transport::loss::RecoveryMode::GoBackN => [
            ("rto_low", r.rto_low != d.rto_low),
            ("rto_high", r.rto_high != d.rto_high),
            ("rto_low_packets", r.rto_low_packets != d.rto_low_packets),
        ],
        _ => [("rto", r.rto != d.rto), ("", false), ("", false)],
    };
    if let Some((field, _)) = unused.iter().find(|(_, set)| *set) {
        let (this, other) = match r.mode {
            crate::transport::loss::RecoveryMode::GoBackN => ("IRN's", "mode = \"irn\""),
            _ => ("go-back-N's", "mode = \"go_back_n\""),
        };
        return Err(ScenarioError::new(
            &format!("host.recovery.{field}"),
            format!("is {this} timeout setting and does nothing here; remove it or set {other}"),
        ));
    }
    Ok(())
}

/// A loaded scenario: the resolved config and where its relative paths point.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub cfg: ScenarioCfg,
    pub cc_params: crate::cc::CcParams,
    pub base_dir: std::path::PathBuf,
    /// Defaults the scenario relies on that a user may not expect, one line each naming the
    /// field; the summary lists them and the Python front prints them.
    pub warnings: Vec<String>,
}

/// Input files (topology, flow files, CDF files) named by absolute paths in the resolved
/// config, so that `config.toml` re-runs from any directory. A path that names no file is
/// left as written: building reports it.
fn absolute_paths(cfg: &mut ScenarioCfg, base_dir: &std::path::Path) {
    let fix = |p: &mut String| {
        if let Ok(abs) = base_dir.join(&*p).canonicalize() {
            if abs.is_file() {
                *p = abs.to_string_lossy().into_owned();
            }
        }
    };
    match &mut cfg.topology {
        TopologyCfg::File { path } | TopologyCfg::Hpcc { path } => fix(path),
        _ => {}
    }
    for w in &mut cfg.workload {
        match w {
            WorkloadCfg::FlowFile(f) => fix(&mut f.path),
            WorkloadCfg::Dag(d) => fix(&mut d.path),
            WorkloadCfg::Poisson(p) if !crate::workload::is_builtin_cdf(&p.cdf) => fix(&mut p.cdf),
            _ => {}
        }
    }
}

impl Scenario {
    /// Parse, override, validate and resolve a scenario.
    pub fn load(
        text: &str,
        base_dir: &std::path::Path,
        seed: Option<u64>,
        overrides: &[String],
    ) -> Result<Scenario, ScenarioError> {
        let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ScenarioError::new(
                "scenario",
                format!("TOML syntax error: {}", e.message().trim()),
            )
        })?;
        for o in overrides {
            apply_override(&mut root, o)?;
        }
        if let Some(s) = seed {
            root.insert("seed".into(), toml::Value::Integer(s as i64));
        }
        // serde would read a list as a table of defaults (`cc = []` as no scheme): refuse it.
        for key in ["topology", "fabric", "cc", "host", "output"] {
            if root.get(key).is_some_and(|v| !v.is_table()) {
                return Err(ScenarioError::new(
                    key,
                    format!("must be a table ([{key}] or {key} = {{ ... }})"),
                ));
            }
        }
        if let Some(key) = nan_key(&root, "") {
            return Err(ScenarioError::new(
                &key,
                "is NaN, which is not a number any setting takes; give a value",
            ));
        }
        let mut warnings = Vec::new();
        if !root.contains_key("cc") {
            warnings.push(
                "cc: not given, so no congestion control runs (scheme = \"none\"); add [cc] with scheme = \"none\" or a scheme to say so".to_string(),
            );
        }
        let mut cfg: ScenarioCfg = from_value(toml::Value::Table(root), "")?;
        let most = crate::engine::parallel::MAX_PARTITIONS as u32;
        if let Some(n) = cfg.partitions.filter(|n| !(1..=most).contains(n)) {
            return Err(ScenarioError::new(
                "partitions",
                format!("must be 1 to {most} (the most a fabric is cut into); got {n}"),
            ));
        }
        let cc_params = crate::cc::CcParams::parse(&cfg.cc.scheme, &cfg.cc.params)?;
        let info = crate::cc::scheme(&cfg.cc.scheme)
            .expect("CcParams::parse accepts only registered schemes");
        cfg.cc.params = cc_params.to_table();
        // Fill scheme-dependent defaults so the resolved config is explicit.
        let ecn = &mut cfg.fabric.ecn;
        ecn.enabled.get_or_insert(info.ecn.is_some());
        if ecn.enabled == Some(true) {
            // A scheme without ECN that the scenario turns it on for gets the default thresholds.
            let d = info.ecn.unwrap_or(crate::cc::DEFAULT_ECN);
            ecn.kmin.get_or_insert(quantity::Size(d.kmin_bytes));
            ecn.kmax.get_or_insert(quantity::Size(d.kmax_bytes));
            ecn.pmax.get_or_insert(d.pmax);
            ecn.ref_rate.get_or_insert(quantity::Rate(d.ref_rate_bps));
        }
        resolve_fabric_mode(&mut cfg, info)?;
        resolve_compat(&mut cfg);
        absolute_paths(&mut cfg, base_dir);
        if cfg.fabric.priority_by_size.is_empty() {
            cfg.fabric
                .data_priority
                .get_or_insert(config::DEFAULT_DATA_PRIORITY);
        }
        let data_priority = cfg
            .fabric
            .data_priority
            .unwrap_or(config::DEFAULT_DATA_PRIORITY);
        let nic_ack = *cfg
            .host
            .ack_priority
            .get_or_insert(info.ack_priority.unwrap_or(data_priority));
        cfg.fabric
            .ack_priority
            .get_or_insert(if info.switch_acks_in_data_queue {
                data_priority
            } else {
                nic_ack
            });
        Ok(Scenario {
            cfg,
            cc_params,
            base_dir: base_dir.to_path_buf(),
            warnings,
        })
    }

    /// The fully resolved config as TOML (re-loadable to the same run).
    pub fn resolved_toml(&self) -> String {
        toml::to_string(&self.cfg).expect("config serializes")
    }
}
