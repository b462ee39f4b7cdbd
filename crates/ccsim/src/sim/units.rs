//! Units: time is `u64` picoseconds, rates are bits per second, sizes are bytes.
//! Parsing accepts strings with an explicit unit ("100Gbps", "1us", "32MB") and rejects
//! anything ambiguous, so a scenario can never silently mean 1000x what it says.

/// Picoseconds per nanosecond, microsecond, millisecond, second.
pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// `ps` cut down to whole ns when `floor_ns` (ns-3's `Seconds(double)` at ns resolution, for
/// serialization and pacing under `fabric.tx_time = "floor_ns"`).
#[inline]
pub fn cut_to_ns(ps: u64, floor_ns: bool) -> u64 {
    if floor_ns {
        ps - ps % PS_PER_NS
    } else {
        ps
    }
}

/// Time to serialize `bytes` at `rate_bps`, rounded up to the next picosecond.
#[inline]
pub fn tx_time_ps(bytes: u64, rate_bps: u64) -> u64 {
    // 64-bit division when the product fits (any packet); 128-bit only for huge byte counts.
    match bytes.checked_mul(8 * PS_PER_S) {
        Some(num) => num.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * PS_PER_S as u128)
            .div_ceil(rate_bps as u128)
            .min(u64::MAX as u128) as u64,
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    // "1e3us": 'e' followed by a letter would be ambiguous; we only accept plain decimals + unit.
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

/// Largest time any input may give: 10^6 s of simulated time (10^18 ps), so that sums of
/// times stay far from u64's end.
pub const MAX_TIME_PS: u64 = 1_000_000_000_000_000_000;
/// Largest size (1 PB) and rate (1 Pbps) an input may give.
pub const MAX_SIZE_BYTES: u64 = 1_000_000_000_000_000;
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;

/// `v` x `mult` as a whole number of the base unit (`unit`), at most `max`. A value between
/// two steps of the base unit is an error, not silently rounded.
fn scaled(v: f64, mult: f64, max: u64, unit: &str, max_text: &str) -> Result<u64, String> {
    if !v.is_finite() || v < 0.0 {
        return Err("must be a non-negative number".into());
    }
    let x = v * mult;
    if x > max as f64 {
        return Err(format!("is too large: at most {max_text}"));
    }
    if (x - x.round()).abs() > 1e-9 * x.max(1.0) {
        return Err(format!(
            "is not a whole number of {unit}; the smallest step is 1{unit}"
        ));
    }
    Ok(x.round() as u64)
}

/// Parse a time such as "1us", "2.5ms", "100ns", "3s", "250ps" into picoseconds.
pub fn parse_time_ps(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)
        .ok_or_else(|| format!("`{s}` is not a time; write e.g. \"2us\", \"10ms\""))?;
    let mult = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write e.g. \"{s}us\" (units: ps, ns, us, ms, s)"
            ))
        }
        _ => {
            return Err(format!(
                "`{s}`: unknown time unit `{unit}`; use ps, ns, us, ms or s"
            ))
        }
    };
    scaled(v, mult, MAX_TIME_PS, "ps", "1000000s").map_err(|e| format!("`{s}` {e}"))
}

/// Parse a rate such as "100Gbps", "40Mbps", "1Tbps" into bits per second.
pub fn parse_rate_bps(s: &str) -> Result<u64, String> {
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a rate; write e.g. \"100Gbps\""))?;
    let mult = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        "" => {
            return Err(format!(
                "`{s}` has no unit; write e.g. \"{s}Gbps\" (units: bps, Kbps, Mbps, Gbps, Tbps)"
            ))
        }
        _ => {
            return Err(format!(
                "`{s}`: unknown rate unit `{unit}`; use bps, Kbps, Mbps, Gbps or Tbps"
            ))
        }
    };
    scaled(v, mult, MAX_RATE_BPS, "bps", "1000Tbps").map_err(|e| format!("`{s}` {e}"))
}

/// Parse a size such as "1000B", "512KB" (10^3), "32MiB" (2^20) into bytes.
pub fn parse_size_bytes(s: &str) -> Result<u64, String> {
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("`{s}` is not a size; write e.g. \"64KB\""))?;
    let mult = match unit {
        "B" | "" => 1.0,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "`{s}`: unknown size unit `{unit}`; use B, KB, MB, GB, KiB, MiB or GiB"
            ))
        }
    };
    scaled(v, mult, MAX_SIZE_BYTES, "B", "1000000GB").map_err(|e| format!("`{s}` {e}"))
}

fn fmt_exact(v: u64, units: &[(&str, u64)]) -> String {
    for &(name, m) in units {
        if v != 0 && v.is_multiple_of(m) {
            return format!("{}{}", v / m, name);
        }
    }
    let (name, _) = units[units.len() - 1];
    format!("{v}{name}")
}

/// Canonical, exact string for a time in picoseconds ("2us", "1500ns").
/// A time for people, to 3 significant digits in the largest unit under it ("37.8ms").
pub fn fmt_time_approx(ps: u64) -> String {
    let units = [
        ("s", PS_PER_S),
        ("ms", PS_PER_MS),
        ("us", PS_PER_US),
        ("ns", PS_PER_NS),
    ];
    match units.iter().find(|(_, per)| ps >= *per) {
        Some((name, per)) => format!("{:.3}{name}", ps as f64 / *per as f64).replace(".000", ""),
        None => format!("{ps}ps"),
    }
}

pub fn fmt_time(ps: u64) -> String {
    if ps == 0 {
        return "0us".into();
    }
    fmt_exact(
        ps,
        &[
            ("s", PS_PER_S),
            ("ms", PS_PER_MS),
            ("us", PS_PER_US),
            ("ns", PS_PER_NS),
            ("ps", 1),
        ],
    )
}

/// Canonical, exact string for a rate ("100Gbps").
pub fn fmt_rate(bps: u64) -> String {
    fmt_exact(
        bps,
        &[
            ("Tbps", 1_000_000_000_000),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("Kbps", 1_000),
            ("bps", 1),
        ],
    )
}

/// Canonical, exact string for a size ("32MB", "1000B").
pub fn fmt_size(bytes: u64) -> String {
    if bytes == 0 {
        return "0B".into();
    }
    fmt_exact(
        bytes,
        &[
            ("GB", 1_000_000_000),
            ("MB", 1_000_000),
            ("KB", 1_000),
            ("B", 1),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_round_trip() {
        assert_eq!(parse_time_ps("1us").unwrap(), PS_PER_US);
        assert_eq!(parse_time_ps("2.5ms").unwrap(), 2_500_000_000);
        assert_eq!(parse_rate_bps("100Gbps").unwrap(), 100_000_000_000);
        assert_eq!(parse_size_bytes("32MiB").unwrap(), 32 << 20);
        assert_eq!(parse_size_bytes("512KB").unwrap(), 512_000);
        assert_eq!(fmt_time(1_500_000), "1500ns");
        assert_eq!(fmt_rate(400_000_000_000), "400Gbps");
        for s in ["1us", "2ms", "1500ns", "3s"] {
            assert_eq!(fmt_time(parse_time_ps(s).unwrap()), s);
        }
    }

    #[test]
    fn rejects_missing_or_wrong_units() {
        assert!(parse_time_ps("10").unwrap_err().contains("no unit"));
        assert!(parse_rate_bps("100GB")
            .unwrap_err()
            .contains("unknown rate unit"));
        assert!(parse_time_ps("-1us").is_err());
    }

    #[test]
    fn serialization_time_is_exact_at_100g() {
        // 1 byte at 100 Gb/s is exactly 80 ps.
        assert_eq!(tx_time_ps(1000, 100_000_000_000), 80_000);
        assert_eq!(tx_time_ps(1, 3), 2_666_666_666_667); // rounded up
    }
}
