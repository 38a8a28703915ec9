//! A grid of labelled boxes ([`Grid`]): bands one under another, each in columns of boxes, a
//! box filled darker the fuller it is and outlined in grey when empty. The DIMM map is one.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use memsight_results::view::{Grid, GridBox};

use super::charts;

const BOX_W: i32 = 150;
const LINE_H: i32 = 16;
const GAP: i32 = 10;
/// Columns per line: wider bands wrap.
const PER_LINE: usize = 6;

/// Draws the grid as SVG.
pub fn draw(g: &Grid) -> String {
    let columns = g.bands.iter().map(|b| b.columns.len());
    let max_columns = columns.max().unwrap_or(1).max(1) as i32;
    let max_boxes = g
        .bands
        .iter()
        .flat_map(|b| b.columns.iter().map(|c| c.boxes.len()))
        .max()
        .unwrap_or(1) as i32;
    let max_lines = g
        .bands
        .iter()
        .flat_map(|b| b.columns.iter().flat_map(|c| c.boxes.iter()))
        .map(|x| x.lines.len())
        .max()
        .unwrap_or(1) as i32;
    let box_h = 10 + LINE_H * max_lines;
    let per_line = max_columns.min(PER_LINE as i32);
    let lines_per_band = (max_columns + per_line - 1) / per_line;
    let column_h = 18 + max_boxes * (box_h + 4) + GAP;
    let band_h = 24 + lines_per_band * column_h;
    let width = (20 + per_line * (BOX_W + GAP)).max(420) as u32;
    let height = (40 + g.bands.len() as i32 * (band_h + GAP)) as u32;
    charts::canvas(width, height, |root| {
        charts::draw_title(root, &g.title)?;
        let mut y = 40;
        for band in &g.bands {
            root.draw(&Rectangle::new(
                [(4, y), (width as i32 - 4, y + band_h)],
                RGBColor(200, 206, 216).stroke_width(1),
            ))?;
            text(root, &band.name, (12, y + 5), 13)?;
            for (ci, column) in band.columns.iter().enumerate() {
                let x = 12 + (ci as i32 % per_line) * (BOX_W + GAP);
                let cy = y + 24 + (ci as i32 / per_line) * column_h;
                text(root, &column.name, (x, cy), 11)?;
                for (bi, b) in column.boxes.iter().enumerate() {
                    let by = cy + 16 + bi as i32 * (box_h + 4);
                    draw_box(root, b, (x, by), box_h)?;
                }
            }
            y += band_h + GAP;
        }
        Ok(())
    })
}

fn text(
    root: &DrawingArea<SVGBackend, Shift>,
    t: &str,
    at: (i32, i32),
    size: u32,
) -> charts::Fallible {
    let font = ("sans-serif", size)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Top));
    root.draw(&Text::new(t.to_string(), at, font))?;
    Ok(())
}

/// One box at (x, y) with its lines of text inside.
fn draw_box(
    root: &DrawingArea<SVGBackend, Shift>,
    b: &GridBox,
    (x, y): (i32, i32),
    h: i32,
) -> charts::Fallible {
    let rect = [(x, y), (x + BOX_W, y + h)];
    match b.fill {
        Some(share) => {
            let share = share.clamp(0.0, 1.0);
            let fill = RGBColor(
                (200.0 - 110.0 * share) as u8,
                (222.0 - 70.0 * share) as u8,
                (245.0 - 40.0 * share) as u8,
            );
            root.draw(&Rectangle::new(rect, fill.filled()))?;
            root.draw(&Rectangle::new(rect, RGBColor(40, 80, 150).stroke_width(1)))?;
        }
        None => root.draw(&Rectangle::new(
            rect,
            RGBColor(170, 170, 170).stroke_width(1),
        ))?,
    }
    for (k, line) in b.lines.iter().enumerate() {
        text(root, line, (x + 6, y + 5 + LINE_H * k as i32), 11)?;
    }
    Ok(())
}
