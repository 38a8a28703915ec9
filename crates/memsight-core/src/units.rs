//! Sizes as people type them and as memsight prints them.
//!
//! Memory sizes use binary multiples: `K`, `KB` and `KiB` all mean 1024 bytes, as in `lat_mem_rd`,
//! MLC and the kernel's own files. Rates (MB/s, GB/s) are decimal ([`parse_rate`]).

use crate::error::{Error, Result};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;

/// Parses a bandwidth in GB/s: `10`, `10GB/s`, `10G`, or MB/s as `500MB/s`, `500M` (decimal
/// units, as memsight prints them). Zero, negative and unknown inputs are errors naming the form.
pub fn parse_rate(text: &str) -> Result<f64> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (number, scale) = if let Some(n) = lower
        .strip_suffix("gb/s")
        .or_else(|| lower.strip_suffix('g'))
    {
        (n, 1.0)
    } else if let Some(n) = lower
        .strip_suffix("mb/s")
        .or_else(|| lower.strip_suffix('m'))
    {
        (n, 1e-3)
    } else {
        (lower.as_str(), 1.0)
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * scale),
        _ => Err(Error::input(format!(
            "'{t}' is not a bandwidth: give GB/s or MB/s, e.g. 10GB/s or 500MB/s"
        ))),
    }
}

/// Parses `4096`, `64K`, `1.5MiB`, `2g`, `1 GiB` into bytes. Zero, negative, fractional-byte and
/// unknown-suffix inputs are errors naming the accepted form.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::input(format!(
            "invalid size '{text}': use a positive number of bytes with an optional K, M, G or T suffix (binary), e.g. 64K or 1.5GiB"
        ))
    };
    if t.is_empty() || t.starts_with('-') {
        return Err(bad());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| bad())?;
    let mult = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => 1024 * GIB,
        _ => return Err(bad()),
    };
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(Error::input(format!(
            "invalid size '{text}': it must be at least 1 byte"
        )));
    }
    Ok(bytes.round() as u64)
}

/// Formats bytes with a binary unit: `512 B`, `48 KiB`, `1.5 MiB`, `32 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 || (v - v.round()).abs() < 0.005 {
        format!("{} {}", v.round() as u64, UNITS[i])
    } else if v < 10.0 {
        format!("{v:.2} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Parses a CPU list as Linux prints it (`0-3,8,10-11`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>> {
    let bad = || {
        Error::input(format!(
            "invalid CPU list '{text}': use numbers and ranges like 0-3,8"
        ))
    };
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let part = part.trim();
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a || b - a > 1 << 20 {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Formats a sorted CPU or node list compactly (`0-3,8`).
pub fn format_list(items: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let start = items[i];
        let mut end = start;
        while i + 1 < items.len() && items[i + 1] == end + 1 {
            i += 1;
            end = items[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64K").unwrap(), 65536);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("1.5MiB").unwrap(), 3 * MIB / 2);
        assert_eq!(parse_size("2g").unwrap(), 2 * GIB);
        assert_eq!(parse_size(" 1 GiB ").unwrap(), GIB);
    }

    #[test]
    fn bad_sizes_are_input_errors() {
        for bad in ["", "0", "-1", "-4K", "abc", "12Q", "0.1", "K"] {
            let err = parse_size(bad).unwrap_err();
            assert!(matches!(err, Error::Input(_)), "{bad}: {err}");
        }
    }

    #[test]
    fn bytes_format_round_trip_for_common_sizes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(48 * KIB), "48 KiB");
        assert_eq!(format_bytes(3 * MIB / 2), "1.50 MiB");
        assert_eq!(format_bytes(32 * GIB), "32 GiB");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8").unwrap(), vec![0, 1, 2, 3, 8]);
        assert_eq!(format_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }
}
