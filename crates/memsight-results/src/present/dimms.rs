//! The DIMM inventory: slots, decoded part numbers, ceilings per socket, efficiency of a
//! measured bandwidth, the DIMM map; and the what-if plans side by side.

use memsight_core::units::format_bytes;
use memsight_model::plan::{ChannelFill, Plan, PlannedPart};

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::Key;
use crate::view::{Block, Cell, Table, View};
use memsight_suites::dimms::{DimmsResults, PlanResults};

fn slots(r: &DimmsResults) -> Table {
    let mut t = Table::new(
        "",
        &[
            "locator",
            "bank",
            "size",
            "type",
            "form",
            "rated MT/s",
            "configured MT/s",
            "rank",
            "width total/data",
            "manufacturer",
            "part number",
        ],
    );
    for d in &r.inventory.devices {
        let opt = |v: &Option<String>| Cell::Text(v.clone().unwrap_or_else(|| "-".into()));
        let num = |v: Option<u32>| Cell::Num(v.map_or("-".into(), |x| x.to_string()));
        t.rows.push(vec![
            opt(&d.locator),
            opt(&d.bank_locator),
            Cell::Num(d.size_bytes.map_or("empty".into(), format_bytes)),
            Cell::Text(
                d.memory_type
                    .clone()
                    .or_else(|| d.inferred_type.clone())
                    .unwrap_or_else(|| "-".into())
                    + if d.non_volatile { " (persistent)" } else { "" },
            ),
            opt(&d.form_factor),
            num(d.speed_mts),
            num(d.configured_mts),
            num(d.rank),
            Cell::Text(format!(
                "{}/{}",
                d.total_width.map_or("-".into(), |x| x.to_string()),
                d.data_width.map_or("-".into(), |x| x.to_string())
            )),
            opt(&d.manufacturer),
            opt(&d.part_number),
        ]);
    }
    t
}

fn decoded(r: &DimmsResults) -> Option<Table> {
    if !r.modules.iter().any(|m| m.decoded.is_some()) {
        return None;
    }
    let mut t = Table::new(
        "Decoded from part numbers (docs/reference/dimm-part-numbers.md)",
        &[
            "locator",
            "part number",
            "vendor",
            "type",
            "organisation",
            "package",
            "chips",
            "page",
            "tFAW ns",
            "confidence",
        ],
    );
    for m in &r.modules {
        let Some(d) = &m.decoded else { continue };
        t.rows.push(vec![
            Cell::Text(m.locator.clone().unwrap_or_else(|| m.handle.clone())),
            Cell::Text(m.part_number.clone().unwrap_or_default()),
            Cell::Text(d.vendor.clone()),
            Cell::Text(format!("{} {}", d.generation, d.module_type)),
            Cell::Text(format!(
                "{} ({} Gb{})",
                d.organisation(),
                d.density_gbit,
                d.die_revision
                    .as_ref()
                    .map_or(String::new(), |r| format!(", {r}-die"))
            )),
            Cell::Text(d.package.clone().unwrap_or_else(|| "-".into())),
            Cell::Num(m.chips.map_or("-".into(), |c| c.to_string())),
            Cell::Num(m.page_bytes.map_or("-".into(), format_bytes)),
            Cell::Num(m.tfaw_ns.map_or("-".into(), |t| format!("{t:.1}"))),
            Cell::Text(d.confidence.clone()),
        ]);
    }
    Some(t)
}

/// One part's DRAM model: the device (generation, density, width), its organisation and the
/// timings that bound activates, at the speed the part runs.
pub struct DramRow<'a> {
    pub label: String,
    pub decoded: &'a memsight_model::partnum::Decoded,
    pub chips: Option<u32>,
    pub organisation: Option<&'a memsight_model::ddr::Organisation>,
    pub timings: Option<&'a memsight_model::ddr::Timings>,
}

/// The DRAM organisation behind each part, as Shen's DDR4 study draws it (figs. 1–3): bank
/// groups × banks, rows × columns, device depth, page, and the activate-window (tFAW) bound
/// on a rank's closed-page bandwidth.
fn dram_table(rows: &[DramRow]) -> Option<Table> {
    if rows.iter().all(|r| r.organisation.is_none()) {
        return None;
    }
    let mut t = Table::new(
        "DRAM organisation per part (JEDEC tables, docs/reference/jedec-ddr.md): depth = rows × columns × banks per device; a rank opens one page per device per ACTIVATE; closed-page ceiling per rank = 4 ACTIVATEs per tFAW × 64 B",
        &[
            "part",
            "device",
            "ranks × chips",
            "bank groups × banks",
            "rows × columns",
            "depth",
            "page",
            "MT/s",
            "tFAW ns",
            "tRRD_S / tRRD_L ns",
            "tCCD_L ns",
            "activate ceiling per rank",
            "refresh",
        ],
    );
    for r in rows {
        let d = r.decoded;
        let o = r.organisation;
        let tm = r.timings;
        let depth = |o: &memsight_model::ddr::Organisation| {
            // Depth in words of the device width: 2G × 8 for a 16 Gb x8 device.
            let g = o.depth as f64 / f64::from(1u32 << 30);
            if g >= 1.0 {
                format!("{g:.0}G × {}", d.device_width)
            } else {
                format!(
                    "{:.0}M × {}",
                    o.depth as f64 / f64::from(1u32 << 20),
                    d.device_width
                )
            }
        };
        let ns = |l: &memsight_model::ddr::Limit, mts| format!("{:.1}", l.ns_at(mts));
        t.rows.push(vec![
            Cell::Text(r.label.clone()),
            Cell::Text(format!(
                "{} {} Gb x{}",
                d.generation, d.density_gbit, d.device_width
            )),
            Cell::Text(format!(
                "{} × {}",
                d.ranks,
                r.chips
                    .map_or("?".into(), |c| (c / d.ranks.max(1)).to_string())
            )),
            Cell::Text(o.map_or("-".into(), |o| {
                format!("{} × {}", o.bank_groups, o.banks_per_group)
            })),
            Cell::Text(o.map_or("-".into(), |o| format!("{} × {}", o.rows, o.columns))),
            Cell::Text(o.map_or("-".into(), depth)),
            Cell::Num(o.map_or("-".into(), |o| format_bytes(o.page_bytes))),
            Cell::Num(tm.map_or("-".into(), |t| t.mts.to_string())),
            Cell::Num(tm.map_or("-".into(), |t| ns(&t.tfaw, t.mts))),
            Cell::Num(tm.map_or("-".into(), |t| {
                format!("{} / {}", ns(&t.trrd_s, t.mts), ns(&t.trrd_l, t.mts))
            })),
            Cell::Num(tm.map_or("-".into(), |t| ns(&t.tccd_l, t.mts))),
            Cell::Num(tm.map_or("-".into(), |t| {
                format!("{:.1} GB/s", t.act_limited_mbs() / 1000.0)
            })),
            Cell::Num(
                tm.and_then(|t| t.refresh_overhead())
                    .map_or("-".into(), |r| format!("{:.1}% of the time", 100.0 * r)),
            ),
        ]);
    }
    Some(t)
}

fn ceilings(r: &DimmsResults) -> Option<Table> {
    let c = &r.ceilings;
    if c.sockets.is_empty() {
        return None;
    }
    let platform = c
        .platform
        .as_ref()
        .map_or("platform not identified".to_string(), |p| {
            format!(
                "{}, {} channels of {}, {} MT/s at 1 DIMM per channel{}; source {}{}",
                p.name,
                p.channels_per_socket,
                p.memory,
                p.max_mts,
                p.max_mts_2dpc
                    .map_or(String::new(), |m| format!(", {m} at 2")),
                p.source,
                if p.verified { "" } else { " (unverified)" }
            )
        });
    let mut t = Table::new(
        &format!(
            "Ceilings ({platform}; {} MB/s for the system)",
            c.system_dram_mbs
        ),
        &[
            "socket",
            "DIMMs",
            "channels used / platform",
            "slot names read as",
            "MT/s (slowest configured)",
            "DRAM peak MB/s",
            "fabric read / write MB/s",
            "binding read / write MB/s",
        ],
    );
    let pair = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(r), Some(w)) => format!("{r} / {w}"),
        _ => "-".into(),
    };
    for s in &c.sockets {
        t.rows.push(vec![
            Cell::Text(s.array.clone()),
            Cell::Num(s.dimms.to_string()),
            Cell::Num(format!(
                "{}{} / {}",
                s.channels_used,
                if s.channel_bits == 64 {
                    String::new()
                } else {
                    format!(" × {}-bit", s.channel_bits)
                },
                s.channels.map_or("?".into(), |c| c.to_string())
            )),
            Cell::Text(s.scheme.describe().to_string()),
            Cell::Num(s.mts.to_string()),
            Cell::Num(s.dram_mbs.to_string()),
            Cell::Num(pair(c.fabric_read_mbs, c.fabric_write_mbs)),
            Cell::Num(pair(c.binding_read_mbs, c.binding_write_mbs)),
        ]);
    }
    Some(t)
}

fn efficiency(r: &DimmsResults) -> Option<Table> {
    if r.efficiency.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Efficiency",
        &[
            "test",
            "threads",
            "measured MB/s (DRAM est.)",
            "ceiling MB/s",
            "efficiency",
        ],
    );
    for e in &r.efficiency {
        t.rows.push(vec![
            Cell::Text(if e.disturbed {
                format!("⚠ {}", e.test)
            } else {
                e.test.clone()
            }),
            Cell::Num(e.threads.to_string()),
            Cell::Num(format!("{:.0}", e.measured_mbs)),
            Cell::Num(e.ceiling_mbs.to_string()),
            Cell::Num(format!("{:.0}%", 100.0 * e.efficiency)),
        ]);
    }
    Some(t)
}

impl Present for DimmsResults {
    /// Slots and the theoretical peak.
    fn headline(&self) -> Vec<String> {
        vec![format!(
            "DIMMs: {} of {} slots, {} MB/s theoretical peak",
            self.populated, self.slots, self.ceilings.system_dram_mbs
        )]
    }

    fn view(&self) -> View {
        let mut blocks = vec![
            Block::Grid(
                super::dimm_grid::grid(self),
                "Slots by socket and channel, as the slot names say; darker = larger module."
                    .into(),
            ),
            Block::Table(slots(self)),
        ];
        let mut seen = Vec::new();
        let dram: Vec<DramRow> = self
            .modules
            .iter()
            .filter_map(|m| {
                let d = m.decoded.as_ref()?;
                let part = m.part_number.clone().unwrap_or_default();
                (!seen.contains(&part)).then(|| {
                    seen.push(part.clone());
                    DramRow {
                        label: part,
                        decoded: d,
                        chips: m.chips,
                        organisation: m.organisation.as_ref(),
                        timings: m.timings.as_ref(),
                    }
                })
            })
            .collect();
        blocks.extend(
            [
                decoded(self),
                dram_table(&dram),
                ceilings(self),
                efficiency(self),
            ]
            .into_iter()
            .flatten()
            .map(Block::Table),
        );
        View {
            id: "dimms",
            title: "DIMMs and ceilings".into(),
            method: format!(
                "source: {} · {} of {} slots populated · {}",
                self.source,
                self.populated,
                self.slots,
                self.capacity()
            ),
            facts: Vec::new(),
            blocks,
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        vec![Figure::scalar(
            Key::Dimms {
                statistic: "peak".into(),
            },
            "theoretical DRAM peak of the installed DIMMs".into(),
            "MB/s",
            Better::Higher,
            self.ceilings.system_dram_mbs as f64,
        )]
    }
}

/// One row of the side-by-side table: a name, and a cell per plan.
fn row(r: &PlanResults, name: &str, f: &dyn Fn(&Plan) -> String) -> Vec<Cell> {
    let mut v = vec![Cell::Text(name.to_string())];
    v.extend(r.plans.iter().map(|p| Cell::Text(f(p))));
    v
}

fn part_line(x: &PlannedPart) -> String {
    let d = &x.decoded;
    format!(
        "{} {} {}: {} Gb x{}, {} chips, page {}, tFAW {}",
        format_bytes(d.capacity_bytes),
        d.module_type,
        d.organisation(),
        d.density_gbit,
        d.device_width,
        x.chips,
        x.page_bytes.map_or("?".into(), format_bytes),
        x.tfaw_ns
            .map_or("? (no JEDEC bin)".into(), |t| format!("{t:.1} ns"))
    )
}

/// Per socket: DIMMs on each channel, e.g. `socket 0: 1 1 1 1 0 0 (4 of 6 channels)`.
fn population(p: &Plan) -> String {
    (0..p.sockets)
        .map(|s| {
            let chans: Vec<&ChannelFill> = p.channels.iter().filter(|c| c.socket == s).collect();
            let used = chans.iter().filter(|c| !c.parts.is_empty()).count();
            format!(
                "socket {s}: {} ({used} of {} channels)",
                chans
                    .iter()
                    .map(|c| c.parts.len().to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                chans.len()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// DRAM devices in a plan: what its power scales with (Cloudflare's DDR4 study, Shen 2020, quotes Micron: 2Rx8 32 GB
/// modules of 16 Gb devices draw 31% less than 2Rx4 32 GB modules of 8 Gb devices).
fn chips(p: &Plan) -> u32 {
    p.parts.iter().map(|x| x.count * x.chips).sum()
}

/// The DRAM model of every part of every plan.
fn plan_dram(r: &PlanResults) -> Option<Table> {
    let rows: Vec<DramRow> = r
        .plans
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            p.parts.iter().map(move |x| DramRow {
                label: format!("plan {}: {}", i + 1, x.part),
                decoded: &x.decoded,
                chips: Some(x.chips),
                organisation: x.organisation.as_ref(),
                timings: x.timings.as_ref(),
            })
        })
        .collect();
    dram_table(&rows)
}

/// The plans side by side: one column each, one row per property, and the estimates (power,
/// fabric) only where some plan has them.
fn plans_table(r: &PlanResults) -> Table {
    let mut header = vec!["".to_string()];
    header.extend(
        r.plans
            .iter()
            .enumerate()
            .map(|(i, p)| format!("plan {}: {}", i + 1, p.asked)),
    );
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new("", &refs);
    t.rows = vec![
        row(r, "platform", &|p| {
            format!(
                "{} × {}{}",
                p.sockets,
                p.platform.name,
                if p.platform.verified {
                    ""
                } else {
                    " (unverified row)"
                }
            )
        }),
        row(r, "takes", &|p| {
            format!(
                "{} channels/socket of {}",
                p.platform.channels_per_socket, p.platform.memory
            )
        }),
        row(r, "DIMMs", &|p| {
            p.parts
                .iter()
                .map(|x| format!("{} × {}", x.count, x.part))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        row(r, "organisation", &|p| {
            p.parts.iter().map(part_line).collect::<Vec<_>>().join("\n")
        }),
        row(r, "population", &population),
        row(r, "speed", &|p| {
            format!(
                "{} MT/s at {} DIMM(s) per channel",
                p.mts, p.dimms_per_channel
            )
        }),
        row(r, "theoretical peak", &|p| {
            format!(
                "{:.1} GB/s (all channels at {} MT/s: {:.1})",
                p.peak_mbs as f64 / 1000.0,
                p.platform.max_mts,
                p.platform_peak_mbs as f64 / 1000.0
            )
        }),
        row(r, "capacity", &|p| format_bytes(p.capacity_bytes)),
    ];
    t.rows.extend(estimate_rows(r));
    t
}

/// The DRAM power and fabric rows, each only when some plan has the estimate.
fn estimate_rows(r: &PlanResults) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    if r.plans.iter().any(|p| p.power.is_some()) {
        rows.push(row(r, "DRAM device power (est.)", &|p| {
            p.power.as_ref().map_or("-".into(), |w| {
                format!(
                    "{:.1} W idle, {:.1} W at {:.0} GB/s",
                    w.idle_w,
                    w.loaded_w,
                    w.at_mbs / 1000.0
                )
            })
        }));
    }
    if r.plans.iter().any(|p| p.fabric.is_some()) {
        rows.push(row(r, "CCD→IOD fabric per socket", &|p| {
            p.fabric.map_or("-".into(), |f| {
                format!(
                    "read {:.1} / write {:.1} GB/s ({} CCDs at {} MHz)",
                    f.read_mbs as f64 / 1000.0,
                    f.write_mbs as f64 / 1000.0,
                    f.ccds,
                    f.fclk_mhz
                )
            })
        }));
    }
    rows
}

/// Every plan's findings, tagged with its plan, and each later plan set against the first.
fn plan_findings(r: &PlanResults) -> Vec<String> {
    let mut findings = Vec::new();
    for (i, p) in r.plans.iter().enumerate() {
        let tag = format!("plan {} ({})", i + 1, p.asked);
        findings.extend(p.findings.iter().map(|f| format!("{tag}: {f}")));
        findings.push(format!("{tag}: platform source: {}", p.platform.source));
        if i > 0 {
            let first = &r.plans[0];
            findings.push(format!(
                "{tag} against plan 1: peak ×{:.2}, capacity ×{:.2}, DRAM chips ×{:.2}",
                p.peak_mbs as f64 / first.peak_mbs.max(1) as f64,
                p.capacity_bytes as f64 / first.capacity_bytes.max(1) as f64,
                chips(p) as f64 / chips(first).max(1) as f64
            ));
            if let (Some(a), Some(b)) = (&first.power, &p.power) {
                findings.push(format!(
                    "{tag} against plan 1: DRAM device power ×{:.2} idle, ×{:.2} loaded (estimated)",
                    b.idle_w / a.idle_w.max(1e-9),
                    b.loaded_w / a.loaded_w.max(1e-9)
                ));
            }
        }
    }
    findings
}

impl Present for PlanResults {
    fn view(&self) -> View {
        View {
            id: "dimms-plan",
            title: "DIMM plan".into(),
            method: "No hardware: part-number decoder, JEDEC tables, platform table.".into(),
            facts: Vec::new(),
            blocks: [Some(plans_table(self)), plan_dram(self)]
                .into_iter()
                .flatten()
                .map(Block::Table)
                .collect(),
            findings: plan_findings(self),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        self.plans
            .iter()
            .enumerate()
            .map(|(i, p)| {
                Figure::scalar(
                    Key::DimmsPlan {
                        plan: i as u64 + 1,
                        statistic: "peak".into(),
                    },
                    format!("theoretical peak of plan {} ({})", i + 1, p.asked),
                    "MB/s",
                    Better::Higher,
                    p.peak_mbs as f64,
                )
            })
            .collect()
    }
}
