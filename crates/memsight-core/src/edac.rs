//! Memory health as the kernel's EDAC subsystem counts it: corrected (CE) and uncorrected (UE)
//! errors per memory controller and per DIMM (or rank), with the DIMM's label and location, from
//! `/sys/devices/system/edac/mc/mc*/` (Documentation/ABI/testing/sysfs-devices-edac and
//! Documentation/admin-guide/ras.rst in the kernel sources). Drivers: Intel `skx_edac`,
//! `i10nm_edac`, AMD `amd64_edac`, Arm `ghes_edac` and others; a VM usually has none.
//!
//! Rising corrected errors on one DIMM are the usual first sign of a failing part; an
//! uncorrected error has already cost data or a crash.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sysfs::FsRoot;

const ROOT: &str = "/sys/devices/system/edac/mc";

/// One DIMM (or rank, on drivers that report ranks) of a controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Dimm {
    /// `dimm0`, `rank3`, …
    pub name: String,
    /// The board's name for the slot (`dimm_label`), e.g. `CPU_SrcID#0_MC#0_Chan#0_DIMM#0`.
    pub label: Option<String>,
    /// Where the controller sees it (`dimm_location`), e.g. `channel 0 slot 0`.
    pub location: Option<String>,
    pub size_mb: Option<u64>,
    pub ce: u64,
    pub ue: u64,
}

/// One memory controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Controller {
    /// `mc0`, …
    pub name: String,
    /// The driver's name for it (`mc_name`), e.g. `Skylake Socket#0 IMC#0`.
    pub driver_name: Option<String>,
    pub ce: u64,
    pub ue: u64,
    /// Errors the driver could not attribute to a DIMM.
    pub ce_noinfo: u64,
    pub ue_noinfo: u64,
    pub seconds_since_reset: Option<u64>,
    pub dimms: Vec<Dimm>,
}

/// Every controller EDAC publishes under `fs`; empty when there is no EDAC driver.
pub fn controllers(fs: &FsRoot) -> Vec<Controller> {
    let mut mcs: Vec<String> = fs
        .list(ROOT)
        .into_iter()
        .filter(|n| {
            n.strip_prefix("mc")
                .is_some_and(|i| i.parse::<u32>().is_ok())
        })
        .collect();
    mcs.sort_by_key(|n| n[2..].parse::<u32>().unwrap_or(u32::MAX));
    mcs.into_iter()
        .map(|name| {
            let at = |f: &str| fs.read(&format!("{ROOT}/{name}/{f}"));
            let n = |f: &str| at(f).and_then(|v| v.parse().ok());
            Controller {
                driver_name: at("mc_name"),
                ce: n("ce_count").unwrap_or(0),
                ue: n("ue_count").unwrap_or(0),
                ce_noinfo: n("ce_noinfo_count").unwrap_or(0),
                ue_noinfo: n("ue_noinfo_count").unwrap_or(0),
                seconds_since_reset: n("seconds_since_reset"),
                dimms: dimms(fs, &name),
                name,
            }
        })
        .collect()
}

fn dimms(fs: &FsRoot, mc: &str) -> Vec<Dimm> {
    let mut names: Vec<String> = fs
        .list(&format!("{ROOT}/{mc}"))
        .into_iter()
        .filter(|n| {
            ["dimm", "rank"]
                .iter()
                .any(|p| n.strip_prefix(p).is_some_and(|i| i.parse::<u32>().is_ok()))
        })
        .collect();
    names.sort_by_key(|n| {
        n.trim_start_matches(char::is_alphabetic)
            .parse::<u32>()
            .unwrap_or(0)
    });
    names
        .into_iter()
        .map(|name| {
            let at = |f: &str| fs.read(&format!("{ROOT}/{mc}/{name}/{f}"));
            let n = |f: &str| at(f).and_then(|v| v.parse().ok());
            Dimm {
                label: at("dimm_label").filter(|l| !l.is_empty()),
                location: at("dimm_location").filter(|l| !l.is_empty()),
                size_mb: n("size"),
                ce: n("dimm_ce_count").unwrap_or(0),
                ue: n("dimm_ue_count").unwrap_or(0),
                name,
            }
        })
        .collect()
}

/// Totals over every controller: (corrected, uncorrected).
pub fn totals(mcs: &[Controller]) -> (u64, u64) {
    mcs.iter().fold((0, 0), |(c, u), m| (c + m.ce, u + m.ue))
}

/// What the counts say, one sentence per controller or DIMM with errors; empty when clean.
pub fn describe(mcs: &[Controller]) -> Vec<String> {
    let mut out = Vec::new();
    for m in mcs.iter().filter(|m| m.ce + m.ue > 0) {
        let since = m.seconds_since_reset.map_or(String::new(), |s| {
            format!(" in {:.1} days", s as f64 / 86400.0)
        });
        let bad: Vec<String> = m
            .dimms
            .iter()
            .filter(|d| d.ce + d.ue > 0)
            .map(|d| {
                format!(
                    "{} ({}{}): {} corrected, {} uncorrected",
                    d.label.as_deref().unwrap_or(&d.name),
                    d.location.as_deref().unwrap_or("location not exposed"),
                    d.size_mb.map_or(String::new(), |s| format!(", {s} MB")),
                    d.ce,
                    d.ue
                )
            })
            .collect();
        out.push(format!(
            "memory controller {}{}: {} corrected and {} uncorrected errors{since}{}{}",
            m.name,
            m.driver_name
                .as_ref()
                .map_or(String::new(), |d| format!(" ({d})")),
            m.ce,
            m.ue,
            if bad.is_empty() {
                "; the driver does not attribute them to a DIMM".to_string()
            } else {
                format!("; {}", bad.join("; "))
            },
            if m.ue > 0 {
                ": uncorrected errors mean lost data or a crash: replace the DIMM named"
            } else {
                ": corrected errors that keep rising are the usual first sign of a failing DIMM: watch the count, reseat or replace the part named"
            }
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A two-controller Skylake-SP tree as `skx_edac` lays it out (kernel ABI:
    /// sysfs-devices-edac), one DIMM with corrected errors, written under `fs`.
    pub fn skx_tree(fs: &FsRoot) {
        let r = ROOT;
        for (mc, ce) in [("mc0", "12"), ("mc1", "0")] {
            fs.put(
                &format!("{r}/{mc}/mc_name"),
                &format!("Skylake Socket#{} IMC#0", &mc[2..]),
            )
            .unwrap();
            fs.put(&format!("{r}/{mc}/ce_count"), ce).unwrap();
            fs.put(&format!("{r}/{mc}/ue_count"), "0").unwrap();
            fs.put(&format!("{r}/{mc}/ce_noinfo_count"), "0").unwrap();
            fs.put(&format!("{r}/{mc}/seconds_since_reset"), "864000")
                .unwrap();
            for (d, chan) in [("dimm0", 0), ("dimm1", 1)] {
                let dir = format!("{r}/{mc}/{d}");
                fs.put(
                    &format!("{dir}/dimm_label"),
                    &format!("CPU_SrcID#{}_MC#0_Chan#{chan}_DIMM#0", &mc[2..]),
                )
                .unwrap();
                fs.put(
                    &format!("{dir}/dimm_location"),
                    &format!("channel {chan} slot 0"),
                )
                .unwrap();
                fs.put(&format!("{dir}/size"), "32768").unwrap();
                let n = if mc == "mc0" && d == "dimm1" { ce } else { "0" };
                fs.put(&format!("{dir}/dimm_ce_count"), n).unwrap();
                fs.put(&format!("{dir}/dimm_ue_count"), "0").unwrap();
            }
        }
        fs.put(&format!("{r}/power/control"), "auto").unwrap();
    }

    #[test]
    fn controllers_dimms_and_counts_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsRoot::at(dir.path().to_path_buf());
        skx_tree(&fs);
        let mcs = controllers(&fs);
        assert_eq!(mcs.len(), 2, "power/ is not a controller");
        assert_eq!(mcs[0].dimms.len(), 2);
        assert_eq!(mcs[0].dimms[1].ce, 12);
        assert_eq!(
            mcs[0].dimms[1].location.as_deref(),
            Some("channel 1 slot 0")
        );
        assert_eq!(totals(&mcs), (12, 0));
        let said = describe(&mcs);
        assert_eq!(said.len(), 1, "only the controller with errors: {said:?}");
        assert!(
            said[0].contains("CPU_SrcID#0_MC#0_Chan#1_DIMM#0") && said[0].contains("10.0 days")
        );
        assert!(said[0].contains("replace the part named"));
        assert!(controllers(&FsRoot::at("/nonexistent".into())).is_empty());
    }
}
