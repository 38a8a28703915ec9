//! The DIMM map as a grid: every slot of the inventory, grouped by socket and channel as the
//! slot names say, populated slots labelled with size, type, speed, organisation and part number.
//! The renderer draws the grid without knowing it holds DIMMs.

use std::collections::BTreeMap;

use memsight_core::units::format_bytes;
use memsight_model::dmidecode::MemoryDevice;
use memsight_model::platform::{channel_of, slot_places, socket_of};
use memsight_suites::dimms::DimmsResults;

use crate::view::{Grid, GridBand, GridBox, GridColumn};

/// Sorts names the way people number slots: A2 before A10.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Natural(Vec<(String, u64)>, String);

impl Natural {
    fn new(s: &str) -> Self {
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut digits = String::new();
        for c in s.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
            } else {
                if !digits.is_empty() {
                    parts.push((
                        std::mem::take(&mut text),
                        digits.parse().unwrap_or(u64::MAX),
                    ));
                    digits.clear();
                }
                text.push(c);
            }
        }
        parts.push((text, digits.parse().unwrap_or(0)));
        Natural(parts, s.to_string())
    }
}

/// Slots grouped: socket → channel (or the slot itself when the names say no channel) →
/// devices, in natural slot-name order.
type Layout<'a> = BTreeMap<Natural, BTreeMap<Natural, Vec<&'a MemoryDevice>>>;

fn layout(d: &DimmsResults) -> Layout<'_> {
    let mut out: Layout = BTreeMap::new();
    // Sockets and channels as the ceilings resolve them (Dell and HPE slot numbers become
    // channels with the platform's channel count); slots outside those groups by their names.
    let places = slot_places(&d.inventory);
    for (i, dev) in d.inventory.devices.iter().enumerate() {
        let (socket, channel) = match places.get(&dev.handle) {
            Some((s, c)) => (s.clone(), c.clone()),
            None => (
                socket_of(dev).map_or("system".to_string(), |s| format!("socket {s}")),
                channel_of(dev),
            ),
        };
        let channel = Natural::new(&channel.map_or_else(
            || {
                format!(
                    "slot {}",
                    dev.locator.clone().unwrap_or_else(|| i.to_string())
                )
            },
            |c| format!("channel {}", c.trim_start_matches('#')),
        ));
        out.entry(Natural::new(&socket))
            .or_default()
            .entry(channel)
            .or_default()
            .push(dev);
    }
    out
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The lines written in a slot: locator, then size, type and speed, organisation and vendor,
/// part number (or "empty").
fn slot_text(d: &DimmsResults, dev: &MemoryDevice) -> Vec<String> {
    let mut text = vec![short(dev.locator.as_deref().unwrap_or("?"), 22)];
    if !dev.populated {
        text.push("empty".into());
        return text;
    }
    let kind = dev
        .memory_type
        .clone()
        .or_else(|| dev.inferred_type.clone())
        .unwrap_or_default();
    let speed = dev.configured_mts.or(dev.speed_mts);
    text.push(format!(
        "{} {}{}",
        dev.size_bytes.map_or("?".to_string(), format_bytes),
        kind,
        speed.map_or(String::new(), |s| format!("-{s}"))
    ));
    let view = d
        .modules
        .iter()
        .find(|m| m.handle == dev.handle)
        .and_then(|m| m.decoded.as_ref());
    let org = match (view, dev.rank) {
        (Some(v), _) => v.organisation(),
        (None, Some(r)) => format!("{r}R"),
        _ => String::new(),
    };
    text.push(format!(
        "{} {}",
        org,
        short(dev.manufacturer.as_deref().unwrap_or(""), 12)
    ));
    text.push(short(dev.part_number.as_deref().unwrap_or(""), 22));
    text
}

/// The inventory as a grid: a band per socket, a column per channel, a box per slot, filled
/// by the module's size against the largest one.
pub(super) fn grid(d: &DimmsResults) -> Grid {
    let biggest = d
        .inventory
        .devices
        .iter()
        .filter_map(|x| x.size_bytes)
        .max()
        .unwrap_or(1) as f64;
    let bands = layout(d)
        .into_iter()
        .map(|(socket, channels)| GridBand {
            name: socket.1,
            columns: channels
                .into_iter()
                .map(|(channel, slots)| GridColumn {
                    name: short(&channel.1, 22),
                    boxes: slots
                        .into_iter()
                        .map(|dev| GridBox {
                            lines: slot_text(d, dev),
                            fill: dev
                                .populated
                                .then(|| dev.size_bytes.unwrap_or(0) as f64 / biggest),
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    Grid {
        title: format!(
            "DIMM map: {} of {} slots populated, {}{}",
            d.populated,
            d.slots,
            d.installed(),
            if d.memory_mode { " (Memory Mode)" } else { "" }
        ),
        bands,
    }
}

#[cfg(test)]
mod tests {
    use super::Natural;

    #[test]
    fn slots_sort_as_people_number_them() {
        let mut v = ["A10", "A2", "B1", "A1"].map(Natural::new).to_vec();
        v.sort();
        let names: Vec<_> = v.iter().map(|n| n.1.as_str()).collect();
        assert_eq!(names, ["A1", "A2", "A10", "B1"]);
    }
}
