//! What `pmempool info` (PMDK's tool, package `pmdk-tools`) says about a filled pool's chunks:
//! runs (chunks per run, block size, bitmap slots used of total), used chunks (huge objects)
//! and free chunks. Used to split the bytes that are neither objects nor their headers.

use std::path::Path;
use std::process::Command;

/// PMDK's chunk size.
pub const CHUNK: u64 = 256 << 10;

/// Totals over the pool's chunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunks {
    pub runs: u64,
    pub run_chunks: u64,
    pub used_chunks: u64,
    pub free_bytes: u64,
    /// Bytes of runs beyond their slots (run header, bitmap, unusable tail).
    pub run_metadata_bytes: u64,
    /// Slots of runs left empty.
    pub empty_slot_bytes: u64,
}

/// Parses `pmempool info -H -Z -C` output.
pub fn parse(text: &str) -> Chunks {
    let mut c = Chunks::default();
    // One record per "Chunk" line; fields follow until the next record.
    let mut kind = String::new();
    let mut size_idx = 0u64;
    let mut block = 0u64;
    let mut bitmap: Option<(u64, u64)> = None;
    let flush =
        |kind: &str, size_idx: u64, block: u64, bitmap: Option<(u64, u64)>, c: &mut Chunks| {
            let chunks = size_idx.max(1);
            match kind {
                "run" => {
                    c.runs += 1;
                    c.run_chunks += chunks;
                    if let Some((used, total)) = bitmap {
                        let slots = total * block;
                        c.run_metadata_bytes += (chunks * CHUNK).saturating_sub(slots);
                        c.empty_slot_bytes += (total - used.min(total)) * block;
                    }
                }
                "used" => c.used_chunks += chunks,
                "free" => c.free_bytes += chunks * CHUNK,
                _ => {}
            }
        };
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "Chunk" => {
                flush(&kind, size_idx, block, bitmap, &mut c);
                kind.clear();
                size_idx = 0;
                block = 0;
                bitmap = None;
            }
            "Type" => kind = value.to_string(),
            "Size idx" => size_idx = value.parse().unwrap_or(0),
            "Block size" => block = value.parse().unwrap_or(0),
            "Bitmap" => {
                let mut it = value.split('/').map(|x| x.trim().parse::<u64>().ok());
                if let (Some(Some(u)), Some(Some(t))) = (it.next(), it.next()) {
                    bitmap = Some((u, t));
                }
            }
            _ => {}
        }
    }
    flush(&kind, size_idx, block, bitmap, &mut c);
    c
}

/// Runs `pmempool info` on a closed pool file; `None` when the tool is missing or fails.
pub fn read(pool: &Path) -> Option<Chunks> {
    let out = Command::new("pmempool")
        .args(["info", "-H", "-Z", "-C"])
        .arg(pool)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse(&String::from_utf8_lossy(&out.stdout)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_talks_listings_parse() {
        // From MemVerge's PMDK talk (Li and Kang, 2019): 1 MiB objects in runs of 16 chunks, 24 of 31 slots used, and a custom
        // class of 255 × 1 MiB slots with no header.
        let text = "Chunk size      : 262144\nZone 0:\nChunk      : 0\nType       : run\nFlags      : 0x9 compact header\nSize idx   : 16\nBlock size : 135296\nBitmap     : 24 / 31\nChunk      : 16\nType       : free\nSize idx   : 3\n";
        let c = parse(text);
        assert_eq!((c.runs, c.run_chunks), (1, 16));
        assert_eq!(c.run_metadata_bytes, 16 * CHUNK - 31 * 135296);
        assert_eq!(c.empty_slot_bytes, 7 * 135296);
        assert_eq!(c.free_bytes, 3 * CHUNK);
    }
}
