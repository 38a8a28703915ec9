//! DIMM inventory from SMBIOS type 16/17 records: from a `dmidecode` text file, or by running
//! `dmidecode --type 16,17` here (root). Parsing is `memsight_model::dmidecode`.

mod suite;
pub use suite::Dimms;

use memsight_core::finding::{Cited, Finding};
use memsight_core::units::format_bytes;
use memsight_core::{Error, Result};
use memsight_model::ddr::{Device, Module, Timings, timings};
use memsight_model::dmidecode::{Inventory, MemoryDevice};
use memsight_model::partnum::{Decoded, decode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the inventory comes from and what to compare it with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DimmsSettings {
    /// A `dmidecode` text or `--dump-bin` file; `None`: this machine's SMBIOS tables (root).
    pub dmidecode: Option<std::path::PathBuf>,
    /// A `memsight bandwidth --json` result measured on this machine.
    pub bandwidth: Option<std::path::PathBuf>,
    /// AMD chiplet parts: CCDs per socket, for the CCD→IOD fabric limit.
    pub ccds: Option<u32>,
    /// AMD chiplet parts: fabric clock, MHz (default: half the memory transfer rate).
    pub fclk: Option<u32>,
}

impl DimmsSettings {
    /// What `memsight run` reads at `level`: the inventory at every level, as given (it costs
    /// nothing to read, and the ceilings and references need it).
    pub fn at_level(self, _level: crate::measure::level::Level) -> Option<Self> {
        Some(self)
    }
}

/// The `dimms` command's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DimmsResults {
    /// Where the records came from.
    pub source: String,
    pub inventory: Inventory,
    pub populated: usize,
    pub slots: usize,
    /// Everything installed: DRAM and persistent memory.
    pub total_bytes: u64,
    /// Installed DRAM.
    #[serde(default)]
    pub dram_bytes: u64,
    /// Installed persistent memory (Optane DC PMM, NVDIMM) as SMBIOS reports it.
    #[serde(default)]
    pub persistent_bytes: u64,
    /// Persistent memory in Memory Mode: the OS sees the persistent capacity as memory and the
    /// DRAM serves as its cache.
    #[serde(default)]
    pub memory_mode: bool,
    /// What each populated DIMM's part number says, and how it compares with the BIOS.
    pub modules: Vec<ModuleView>,
    /// Theoretical ceilings per socket and system, and the fabric limit where known.
    pub ceilings: memsight_model::platform::Ceilings,
    /// Measured ÷ ceiling for each test of a bandwidth result given with --bandwidth.
    #[serde(default)]
    pub efficiency: Vec<Efficiency>,
    /// Persistent-memory regions and their persistence domains (ADR, eADR) from
    /// `/sys/bus/nd`, when the inventory is this machine's.
    #[serde(default)]
    pub persistence: Vec<memsight_core::nvdimm::Region>,
    /// Findings: facts of the inventory and model cite nothing sampled; the efficiency cites the
    /// measured figure (bare strings before schema 4).
    pub findings: Vec<Finding>,
}

/// A populated DIMM seen through its part number and the DRAM model.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ModuleView {
    pub handle: String,
    pub locator: Option<String>,
    pub part_number: Option<String>,
    pub decoded: Option<Decoded>,
    /// Devices on the module (ECC included when the BIOS reports a 72/80-bit width).
    pub chips: Option<u32>,
    /// Bytes one ACTIVATE opens in a device.
    pub page_bytes: Option<u64>,
    /// tFAW at the configured speed, ns (JEDEC tables by page size).
    pub tfaw_ns: Option<f64>,
    /// Activate, CAS and refresh timings at the configured speed.
    pub timings: Option<Timings>,
    /// The device's bank groups, banks, rows, columns, depth and page (JEDEC tables).
    #[serde(default)]
    pub organisation: Option<memsight_model::ddr::Organisation>,
    /// Where the part number and the BIOS disagree.
    pub mismatches: Vec<String>,
}

fn view(d: &MemoryDevice) -> ModuleView {
    let decoded = d.part_number.as_deref().and_then(decode);
    let mut mismatches = Vec::new();
    let (mut chips, mut page_bytes, mut tfaw_ns, mut t) = (None, None, None, None);
    let mut organisation = None;
    if let Some(x) = &decoded {
        if let Some(size) = d.size_bytes.filter(|&s| s != x.capacity_bytes) {
            mismatches.push(format!(
                "BIOS size {} vs part number {}",
                format_bytes(size),
                format_bytes(x.capacity_bytes)
            ));
        }
        if let Some(r) = d.rank.filter(|&r| r != x.ranks) {
            mismatches.push(format!("BIOS rank {r} vs part number {}", x.ranks));
        }
        if let (Some(bin), Some(bios)) = (x.speed_mts, d.speed_mts)
            && bios.abs_diff(bin) > 1
        {
            mismatches.push(format!(
                "BIOS rated speed {bios} MT/s vs the part number's {bin} MT/s bin"
            ));
        }
        let device = Device {
            generation: x.generation,
            density_gbit: x.density_gbit,
            width: x.device_width,
        };
        let ecc = d.total_width.zip(d.data_width).is_some_and(|(t, w)| t > w);
        chips = Some(
            Module {
                device,
                ranks: x.ranks,
                ecc,
            }
            .chips(),
        );
        organisation = device.organisation();
        page_bytes = organisation.map(|o| o.page_bytes);
        t = d
            .configured_mts
            .or(d.speed_mts)
            .and_then(|mts| timings(&device, mts));
        tfaw_ns = t.map(|t| t.tfaw.ns_at(t.mts));
    }
    ModuleView {
        handle: d.handle.clone(),
        locator: d.locator.clone(),
        part_number: d.part_number.clone(),
        decoded,
        chips,
        page_bytes,
        tfaw_ns,
        timings: t,
        organisation,
        mismatches,
    }
}

impl DimmsResults {
    /// Installed capacity for people: DRAM and persistent memory apart, and in Memory Mode which
    /// one the OS sees.
    pub fn capacity(&self) -> String {
        use memsight_core::units::format_bytes;
        if self.persistent_bytes == 0 {
            return format!("{} installed", self.installed());
        }
        let visible = if self.memory_mode {
            format!(
                "Memory Mode: the OS sees the {} persistent capacity as memory, the DRAM is its cache",
                format_bytes(self.persistent_bytes)
            )
        } else {
            format!(
                "the OS sees the {} DRAM as memory; the persistent memory is separate: App Direct or unconfigured",
                format_bytes(self.dram_bytes)
            )
        };
        format!("{} installed ({visible})", self.installed())
    }

    /// Installed capacity in short: `128 GiB DRAM` or `192 GiB DRAM + 1011 GiB persistent`.
    pub fn installed(&self) -> String {
        use memsight_core::units::format_bytes;
        let dram = format!("{} DRAM", format_bytes(self.dram_bytes));
        if self.persistent_bytes == 0 {
            dram
        } else {
            format!(
                "{dram} + {} persistent",
                format_bytes(self.persistent_bytes)
            )
        }
    }
}

/// What the ceilings are compared with in a recorded `memsight bandwidth --json` result: its
/// points (the rest of the document is not read).
#[derive(Deserialize)]
struct RecordedBandwidth {
    points: Vec<crate::measure::rate::Point>,
}

/// `dimms --plan`: what-if configurations, side by side.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PlanResults {
    pub plans: Vec<memsight_model::plan::Plan>,
}

/// Plans every alternative; the first that cannot be planned is the error.
pub fn plans(requests: &[memsight_model::plan::PlanRequest]) -> Result<PlanResults> {
    let plans = requests
        .iter()
        .map(|r| memsight_model::plan::plan(r).map_err(Error::input))
        .collect::<Result<Vec<_>>>()?;
    Ok(PlanResults { plans })
}

/// Reads and summarises the inventory.
pub fn run(a: &DimmsSettings) -> Result<DimmsResults> {
    let (inventory, source) = crate::measure::inventory::read(a.dmidecode.as_deref())?;
    let populated = inventory.populated().count();
    let total_bytes = inventory.populated().filter_map(|d| d.size_bytes).sum();
    let persistent_bytes = inventory
        .populated()
        .filter(|d| d.non_volatile)
        .filter_map(|d| d.size_bytes)
        .sum();
    let memory_mode = inventory.populated().any(|d| d.non_volatile)
        && inventory.populated().any(|d| {
            !d.non_volatile
                && d.type_detail
                    .as_deref()
                    .is_some_and(|t| t.contains("Cache"))
        });
    let mut findings = facts(inventory_findings(&inventory, memory_mode));
    let modules: Vec<ModuleView> = inventory
        .populated()
        .filter(|d| !d.non_volatile)
        .map(view)
        .collect();
    findings.extend(facts(module_findings(&modules)));
    let fclk = a.fclk.or_else(|| {
        a.ccds?;
        inventory
            .populated()
            .filter_map(|d| d.configured_mts.or(d.speed_mts))
            .min()
            .map(|m| m / 2)
    });
    let ceilings = memsight_model::platform::ceilings(&inventory, a.ccds, fclk);
    findings.extend(facts(diagnose(&ceilings)));
    let efficiency = match &a.bandwidth {
        Some(path) => efficiency(path, &ceilings)?,
        None => Vec::new(),
    };
    findings.extend(efficiency_finding(&efficiency));
    // The regions are this machine's (or the recorded tree's under HWLOC_FSROOT): beside a dump
    // of another machine they would describe the wrong one.
    let fs = memsight_core::sysfs::FsRoot::from_env();
    let persistence = if a.dmidecode.is_none() || !fs.is_live() {
        memsight_core::nvdimm::regions(&fs)
    } else {
        Vec::new()
    };
    findings.extend(facts(
        persistence.iter().map(memsight_core::nvdimm::describe),
    ));
    if persistent_bytes > 0 && persistence.is_empty() && a.dmidecode.is_none() {
        findings.push(Finding::unsampled("persistent DIMMs are installed but no region is published under /sys/bus/nd: in Memory Mode they are not persistent; in App Direct, `ndctl list -R` shows whether the nfit driver is loaded"));
    }
    Ok(DimmsResults {
        persistence,
        source,
        populated,
        slots: inventory.devices.len(),
        total_bytes,
        dram_bytes: total_bytes - persistent_bytes,
        persistent_bytes,
        memory_mode,
        inventory,
        modules,
        ceilings,
        efficiency,
        findings,
    })
}

/// What the slots say: DIMMs below their rated speed, mixed parts, ranks, vendors and sizes,
/// persistent memory and its mode, empty slots.
fn inventory_findings(inventory: &Inventory, memory_mode: bool) -> Vec<String> {
    let populated = inventory.populated().count();
    let mut findings: Vec<String> = slow_dimms(inventory).into_iter().collect();
    findings.extend(mixed_modules(inventory));
    if inventory.populated().any(|d| d.non_volatile) {
        findings.push(if memory_mode {
            "persistent memory (Optane) in Memory Mode: the DRAM DIMMs serve as its cache (\"Cache DRAM\"), so the OS sees the persistent capacity and DRAM misses cost persistent-memory latency".to_string()
        } else {
            "persistent memory (Optane/NVDIMM) is installed beside DRAM (App Direct or unconfigured: no DRAM is reported as its cache)".to_string()
        });
    }
    if populated < inventory.devices.len() {
        findings.push(format!(
            "{} of {} slots are empty",
            inventory.devices.len() - populated,
            inventory.devices.len()
        ));
    }
    findings
}

/// The DIMMs the BIOS runs below their rated speed.
fn slow_dimms(inventory: &Inventory) -> Option<String> {
    let slow: Vec<String> = inventory
        .populated()
        .filter_map(|d| match (d.speed_mts, d.configured_mts) {
            (Some(r), Some(c)) if c < r => Some(format!(
                "{} ({c} of {r} MT/s)",
                d.locator.as_deref().unwrap_or(&d.handle)
            )),
            _ => None,
        })
        .collect();
    (!slow.is_empty()).then(|| {
        format!(
            "{} DIMM(s) run below their rated speed: {}",
            slow.len(),
            slow.join(", ")
        )
    })
}

/// Sorted, each once.
fn distinct<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Part numbers, and the DRAM DIMMs' rank counts, vendors and sizes, where they differ.
fn mixed_modules(inventory: &Inventory) -> Vec<String> {
    let mut findings = Vec::new();
    let parts = distinct(
        inventory
            .populated()
            .filter_map(|d| d.part_number.as_deref()),
    );
    if parts.len() > 1 {
        findings.push(format!("mixed part numbers: {}", parts.join(", ")));
    }
    let dram = || inventory.populated().filter(|d| !d.non_volatile);
    let ranks = distinct(dram().filter_map(|d| d.rank));
    if ranks.len() > 1 {
        let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
        findings.push(format!(
            "mixed rank counts ({} ranks per DIMM): channels end up with different rank counts, and some platforms lower the speed for mixed ranks",
            ranks.join(" and ")
        ));
    }
    let vendors = distinct(dram().filter_map(|d| d.manufacturer.as_deref()));
    if vendors.len() > 1 {
        findings.push(format!("mixed DRAM vendors: {}", vendors.join(", ")));
    }
    let sizes = distinct(dram().filter_map(|d| d.size_bytes));
    if sizes.len() > 1 {
        let sizes: Vec<String> = sizes.iter().map(|s| format_bytes(*s)).collect();
        findings.push(format!("mixed DRAM module sizes: {}", sizes.join(", ")));
    }
    findings
}

/// Where part numbers and the BIOS disagree, and x4/x8 mixes.
fn module_findings(modules: &[ModuleView]) -> Vec<String> {
    let mut findings = Vec::new();
    for m in modules {
        if !m.mismatches.is_empty() {
            findings.push(format!(
                "{} ({}): {}",
                m.locator.as_deref().unwrap_or(&m.handle),
                m.part_number.as_deref().unwrap_or("?"),
                m.mismatches.join("; ")
            ));
        }
    }
    let widths: std::collections::BTreeSet<u32> = modules
        .iter()
        .filter_map(|m| m.decoded.as_ref().map(|d| d.device_width))
        .collect();
    if widths.contains(&4) && widths.contains(&8) {
        findings.push("x4 and x8 modules are mixed: x4 devices have the smaller page and tFAW, x8 modules use fewer chips (less power); Cloudflare's DDR4 study (Shen, 2020) measured < 4% bandwidth difference between 2Rx4 and 2Rx8".to_string());
    }
    findings
}

/// The best measured efficiency against the ceiling, judged against tuned STREAM.
fn efficiency_finding(efficiency: &[Efficiency]) -> Option<Finding> {
    let best = efficiency
        .iter()
        .max_by(|x, y| x.efficiency.total_cmp(&y.efficiency))?;
    let cites = vec![
        Cited::value(
            format!("{} efficiency", best.test),
            100.0 * best.efficiency,
            "%",
            best.disturbed,
        ),
        Cited::value("ceiling (model)", best.ceiling_mbs as f64, "MB/s", false),
    ];
    let below = best.efficiency < TUNED_BAND.0;
    let text = format!(
        "best measured efficiency: {} at {:.0}% of the {} MB/s ceiling{}",
        best.test,
        100.0 * best.efficiency,
        best.ceiling_mbs,
        if best.efficiency < TUNED_BAND.0 {
            format!(
                " — below the {:.0}–{:.0}% a tuned STREAM Triad reaches on balanced 1DPC servers (platform-limits.md): check population, NUMA placement and thread count",
                100.0 * TUNED_BAND.0,
                100.0 * TUNED_BAND.1
            )
        } else {
            " — within or above the band of tuned systems".to_string()
        }
    );
    // Below the band it advises a check; a figure resting on disturbed samples reads slower
    // than the memory, so that advice is then unconfirmed.
    Some(if below {
        Finding::advice(text, cites)
    } else {
        Finding::citing(text, cites)
    })
}

/// Facts of the inventory and the model: they cite no sampled figure.
fn facts(texts: impl IntoIterator<Item = String>) -> Vec<Finding> {
    texts.into_iter().map(Finding::unsampled).collect()
}

/// How close a measured bandwidth came to the ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Efficiency {
    pub test: String,
    pub threads: u64,
    /// Estimated DRAM bandwidth measured, MB/s.
    pub measured_mbs: f64,
    /// The ceiling it is compared with (system DRAM peak, or the fabric when it binds), MB/s.
    pub ceiling_mbs: u64,
    pub efficiency: f64,
    /// The measured figure rests on disturbed samples (it reads slower than the memory).
    #[serde(default)]
    pub disturbed: bool,
}

/// Tuned STREAM Triad on balanced 1DPC servers reaches 78–85% of the DRAM peak (platform-limits.md §3).
const TUNED_BAND: (f64, f64) = (0.78, 0.85);

/// Reads a `memsight bandwidth --json` file and compares each full-thread-count point's DRAM
/// bandwidth with the ceiling (writes-only tests against the write ceiling).
fn efficiency(
    path: &std::path::Path,
    c: &memsight_model::platform::Ceilings,
) -> Result<Vec<Efficiency>> {
    let text = memsight_core::input::read_text(
        path,
        memsight_core::input::MAX_INPUT_BYTES,
        "--bandwidth file",
    )?;
    // The command first, from any JSON: a result of another command gets a message naming it.
    let command = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| {
            Error::input(format!(
                "'{}' is not a memsight JSON result: {e}",
                path.display()
            ))
        })?
        .get("command")
        .cloned()
        .unwrap_or_default();
    if command != "bandwidth" {
        return Err(Error::input(format!(
            "'{}' is not a 'memsight bandwidth --json' result (command {command})",
            path.display()
        )));
    }
    let doc: memsight_core::report::Envelope<RecordedBandwidth> = serde_json::from_str(&text)
        .map_err(|e| {
            Error::input(format!(
                "'{}' is a bandwidth result this memsight cannot read: {e}",
                path.display()
            ))
        })?;
    let points = doc.results.points;
    let max_threads = points.iter().map(|p| p.threads).max().unwrap_or(0);
    let sockets = c.sockets.len().max(1) as u64;
    let read_ceiling = c
        .binding_read_mbs
        .map_or(c.system_dram_mbs, |b| b * sockets);
    let write_ceiling = c
        .binding_write_mbs
        .map_or(c.system_dram_mbs, |b| b * sockets);
    Ok(points
        .iter()
        .filter(|p| p.threads == max_threads)
        .filter_map(|p| {
            let writes_only = p.dram_ratio.starts_with("0:");
            let ceiling = if writes_only {
                write_ceiling
            } else {
                read_ceiling
            };
            (ceiling > 0).then(|| Efficiency {
                test: p.test.name.clone(),
                threads: max_threads as u64,
                measured_mbs: p.dram_gbs.median * 1000.0,
                ceiling_mbs: ceiling,
                efficiency: p.dram_gbs.median * 1000.0 / ceiling as f64,
                disturbed: p.dram_gbs.rests_on_disturbed(),
            })
        })
        .collect())
}

/// Channel population and speed findings from the ceilings.
fn diagnose(c: &memsight_model::platform::Ceilings) -> Vec<String> {
    let mut out = Vec::new();
    let Some(p) = &c.platform else {
        out.extend(c.notes.iter().cloned());
        return out;
    };
    for s in &c.sockets {
        // Named as the ceilings table names the socket, so the two agree.
        out.extend(socket_findings(&s.array, s, p));
    }
    let counts: std::collections::BTreeSet<u32> = c.sockets.iter().map(|s| s.dimms).collect();
    if counts.len() > 1 {
        out.push(format!(
            "sockets are unbalanced ({} DIMMs): threads on the emptier socket get less bandwidth",
            c.sockets
                .iter()
                .map(|s| s.dimms.to_string())
                .collect::<Vec<_>>()
                .join(" vs ")
        ));
    }
    out.push(format!(
        "theoretical DRAM peak: {} MB/s for the system ({}){}",
        c.system_dram_mbs,
        c.sockets.iter().map(|s| format!("{}: {} ch × {} B × {} MT/s = {} MB/s", s.array, s.channels_used, s.channel_bits / 8, s.mts, s.dram_mbs)).collect::<Vec<_>>().join("; "),
        match (c.fabric_read_mbs, c.fabric_write_mbs) {
            (Some(r), Some(w)) => format!("; CCD→IOD fabric per socket {r} MB/s read, {w} MB/s write, so reads bind at {} and writes at {} MB/s", c.binding_read_mbs.unwrap_or(0), c.binding_write_mbs.unwrap_or(0)),
            _ => String::new(),
        }
    ));
    out.extend(c.notes.iter().cloned());
    out
}

/// One socket's population against its platform: empty channels, DIMMs per channel and the
/// speed that population allows.
fn socket_findings(
    label: &str,
    s: &memsight_model::platform::SocketCeiling,
    p: &memsight_model::platform::Platform,
) -> Vec<String> {
    let mut out = Vec::new();
    let ch = p.channels_per_socket;
    let equivalent = s.channels_used * s.channel_bits / 64;
    if equivalent < ch {
        out.push(format!(
            "{label}: {} DIMM(s) fill {} of {} channels ({}), so the peak is {:.0}% of what the socket can do ({} of {} MB/s)",
            s.dimms, equivalent, ch, p.name,
            100.0 * equivalent as f64 / ch as f64,
            s.dram_mbs,
            memsight_model::ddr::peak_mbs(ch, s.mts)
        ));
    }
    let dpc = if s.max_dimms_per_channel > 0 {
        s.max_dimms_per_channel
    } else {
        s.dimms.div_ceil(ch.max(1))
    };
    let lpddr = s.channel_bits < 64;
    let allowed = p.supported_mts(dpc, lpddr);
    if dpc >= 2 {
        out.push(format!(
            "{label}: {dpc} DIMMs on a channel: {}",
            match p.max_mts_2dpc {
                Some(m) if m < p.max_mts => format!(
                    "the platform supports {m} MT/s at 2 DIMMs per channel instead of {} ({:.0}% less bandwidth per channel)",
                    p.max_mts,
                    100.0 * (1.0 - m as f64 / p.max_mts as f64)
                ),
                Some(_) => "the platform keeps its full speed at 2 DIMMs per channel".to_string(),
                None => "the platform's speed at 2 DIMMs per channel is not recorded".to_string(),
            }
        ));
    }
    if let Some(a) = allowed
        && s.mts < a
    {
        out.push(format!(
            "{label}: memory runs at {} MT/s, below the {a} MT/s the platform supports with this population: the CPU SKU, the DIMMs or the BIOS limit it",
            s.mts
        ));
    }
    if let Some(a) = allowed
        && s.mts > a
    {
        out.push(format!(
            "{label}: memory runs at {} MT/s, above the platform's {a} MT/s: an overclocking profile (XMP/EXPO) or a newer platform than the table knows",
            s.mts
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::finding::Evidence;

    fn eff(gbs: f64, disturbed: bool) -> Efficiency {
        Efficiency {
            test: "read".into(),
            threads: 8,
            measured_mbs: gbs * 1000.0,
            ceiling_mbs: 100_000,
            efficiency: gbs * 1000.0 / 100_000.0,
            disturbed,
        }
    }

    /// Below the tuned band the finding advises a check; on a figure resting on disturbed
    /// samples (slower than the memory) that advice is unconfirmed.
    #[test]
    fn efficiency_advice_on_disturbed_figures_is_unconfirmed() {
        let f = efficiency_finding(&[eff(50.0, true)]).unwrap();
        assert!(
            f.starts_with("⚠ unconfirmed: best measured efficiency: read at 50%"),
            "{f}"
        );
        assert_eq!(f.evidence, Evidence::Mixed);
        let f = efficiency_finding(&[eff(50.0, false)]).unwrap();
        assert!(
            f.starts_with("best measured efficiency") && f.contains("check population"),
            "{f}"
        );
        assert_eq!(f.evidence, Evidence::Clean);
        assert_eq!(f.cites[0].value, 50.0);
        let f = efficiency_finding(&[eff(80.0, false)]).unwrap();
        assert!(f.contains("within or above the band"), "{f}");
    }
}
