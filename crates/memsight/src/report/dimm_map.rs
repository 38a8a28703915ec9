//! The DIMM map: every slot of the inventory, grouped by socket and channel as the slot names
//! say, populated slots labelled with size, type, speed, organisation and part number.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use memsight_core::units::format_bytes;
use memsight_model::dmidecode::MemoryDevice;
use memsight_model::platform::{channel_of, slot_places, socket_of};

use super::charts;
use memsight_suites::dimms::DimmsResults;

const SLOT_W: i32 = 150;
const SLOT_H: i32 = 74;
const GAP: i32 = 10;

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
    if dev.populated {
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
    } else {
        text.push("empty".into());
    }
    text
}

/// Draws the map.
pub fn draw(d: &DimmsResults) -> String {
    let map = layout(d);
    let max_slots = map
        .values()
        .flat_map(|c| c.values().map(|v| v.len()))
        .max()
        .unwrap_or(1) as i32;
    let max_channels = map.values().map(|c| c.len()).max().unwrap_or(1) as i32;
    // Wrap wide sockets: at most 6 channels per line.
    let per_line = max_channels.min(6);
    let lines_per_socket = (max_channels + per_line - 1) / per_line;
    let band_h = 24 + lines_per_socket * (18 + max_slots * (SLOT_H + 4) + GAP);
    let width = (20 + per_line * (SLOT_W + GAP)).max(420) as u32;
    let height = (40 + map.len() as i32 * (band_h + GAP)) as u32;
    let biggest = d
        .inventory
        .devices
        .iter()
        .filter_map(|x| x.size_bytes)
        .max()
        .unwrap_or(1) as f64;
    charts::canvas(width, height, |root| {
        let small = ("sans-serif", 11).into_font();
        charts::draw_title(
            root,
            &format!(
                "DIMM map: {} of {} slots populated, {}{}",
                d.populated,
                d.slots,
                d.installed(),
                if d.memory_mode { " (Memory Mode)" } else { "" }
            ),
        )?;
        let mut y = 40;
        for (socket, channels) in &map {
            root.draw(&Rectangle::new(
                [(4, y), (width as i32 - 4, y + band_h)],
                RGBColor(200, 206, 216).stroke_width(1),
            ))?;
            root.draw(&Text::new(
                socket.1.clone(),
                (12, y + 5),
                ("sans-serif", 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Top)),
            ))?;
            for (ci, (channel, slots)) in channels.iter().enumerate() {
                let line = ci as i32 / per_line;
                let col = ci as i32 % per_line;
                let x = 12 + col * (SLOT_W + GAP);
                let cy = y + 24 + line * (18 + max_slots * (SLOT_H + 4) + GAP);
                root.draw(&Text::new(
                    short(&channel.1, 22),
                    (x, cy),
                    small
                        .clone()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Top)),
                ))?;
                for (si, dev) in slots.iter().enumerate() {
                    let sy = cy + 16 + si as i32 * (SLOT_H + 4);
                    draw_slot(root, d, dev, (x, sy), biggest)?;
                }
            }
            y += band_h + GAP;
        }
        Ok(())
    })
}

/// One slot at (x, y): a populated one filled darker the larger it is against the largest
/// module, an empty one outlined in grey; its lines of text inside.
fn draw_slot(
    root: &DrawingArea<SVGBackend, Shift>,
    d: &DimmsResults,
    dev: &MemoryDevice,
    (x, sy): (i32, i32),
    biggest: f64,
) -> charts::Fallible {
    let small = ("sans-serif", 11).into_font();
    let rect = [(x, sy), (x + SLOT_W, sy + SLOT_H)];
    if dev.populated {
        let share = dev.size_bytes.unwrap_or(0) as f64 / biggest;
        let fill = RGBColor(
            (200.0 - 110.0 * share) as u8,
            (222.0 - 70.0 * share) as u8,
            (245.0 - 40.0 * share) as u8,
        );
        root.draw(&Rectangle::new(rect, fill.filled()))?;
        root.draw(&Rectangle::new(rect, RGBColor(40, 80, 150).stroke_width(1)))?;
    } else {
        root.draw(&Rectangle::new(
            rect,
            RGBColor(170, 170, 170).stroke_width(1),
        ))?;
    }
    let text = slot_text(d, dev);
    for (k, t) in text.iter().enumerate() {
        root.draw(&Text::new(
            t.clone(),
            (x + 6, sy + 5 + 16 * k as i32),
            small
                .clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
    }
    Ok(())
}
