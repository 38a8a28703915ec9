//! SVG charts drawn with plotters' SVG backend (no fonts needed: text stays `<text>`, the
//! browser renders it). Three shapes cover the report: lines over a linear or logarithmic axis,
//! horizontal bars with whiskers and ceilings, and heatmaps.

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use memsight_results::view::Series;
use memsight_results::view::trim;
pub use memsight_results::view::{Bar, Lines, Mark, Scale};

pub(super) type Fallible = Result<(), Box<dyn std::error::Error>>;

const WIDTH: u32 = 600;
const HEIGHT: u32 = 360;
const MARK: RGBColor = RGBColor(150, 150, 150);

fn color(i: usize) -> RGBColor {
    // Colour-blind-safe (Okabe–Ito), then plotters' palette.
    const OKABE_ITO: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
    ];
    if i < OKABE_ITO.len() {
        OKABE_ITO[i]
    } else {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    }
}

fn render(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Fallible,
) -> String {
    let mut svg = String::new();
    let outcome = {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.to_string().into())
            .and_then(|_| draw(&root))
            .and_then(|_| root.present().map_err(|e| e.to_string().into()))
    };
    match outcome {
        Ok(()) => svg,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"60\"><text x=\"10\" y=\"30\">chart not drawn: {}</text></svg>",
            super::html::esc(&e.to_string())
        ),
    }
}

fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    let pad = (hi - lo) * 0.05;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// Draws a line chart.
pub fn lines(c: &Lines) -> String {
    render(WIDTH, HEIGHT, |root| {
        let ((x0, x1), (y0, y1)) = line_ranges(c);
        let mut chart = ChartBuilder::on(root)
            .caption(&c.title, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(42)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let xs = c.x_scale;
        let ys = c.y_scale;
        let xf = move |v: &f64| xs.label(*v);
        let yf = move |v: &f64| ys.label(*v);
        chart
            .configure_mesh()
            .x_desc(&c.x_desc)
            .y_desc(&c.y_desc)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .x_labels(10)
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        line_marks(&mut chart, c, (x0, x1), (y0, y1))?;
        for (i, s) in c.series.iter().enumerate() {
            line_series(&mut chart, c, s, color(i))?;
        }
        if c.series.len() > 1 || c.series.iter().any(|s| !s.name.is_empty()) {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .label_font(("sans-serif", 12))
                .position(SeriesLabelPosition::UpperLeft)
                .draw()?;
        }
        Ok(())
    })
}

/// A line chart's plotting area.
type LineChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The axes' ranges on the chart's scales: every point and whisker, the y marks, and the x
/// marks where the chart asks to reach them.
fn line_ranges(c: &Lines) -> ((f64, f64), (f64, f64)) {
    let marks = c.x_marks.iter().filter(|_| c.x_to_marks).map(|m| m.at);
    let xs = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(marks)
        .map(|x| c.x_scale.to_axis(x));
    let x = range(xs, c.x_to_marks);
    let ys = c.series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.whiskers.iter().flat_map(|w| [w.1, w.2]))
            .map(|v| c.y_scale.to_axis(v))
    });
    let ys: Vec<f64> = ys
        .chain(c.y_marks.iter().map(|m| c.y_scale.to_axis(m.at)))
        .collect();
    let y = range(
        ys.into_iter(),
        c.y_from_zero && matches!(c.y_scale, Scale::Linear | Scale::Count),
    );
    (x, y)
}

/// The grey vertical marks (cache sizes, suites' starts) inside the x range, and the red
/// horizontal ones (ceilings), each with its label.
fn line_marks(
    chart: &mut LineChart,
    c: &Lines,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Fallible {
    for m in &c.x_marks {
        let x = c.x_scale.to_axis(m.at);
        if x < x0 || x > x1 {
            continue;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, y0), (x, y1)],
            MARK.stroke_width(1),
        )))?;
        // A label near the right edge ends at its line rather than past the plot.
        let side = if x > x0 + 0.8 * (x1 - x0) {
            HPos::Right
        } else {
            HPos::Left
        };
        chart.draw_series(std::iter::once(Text::new(
            m.label.clone(),
            (x, y1),
            ("sans-serif", 11)
                .into_font()
                .color(&RGBColor(90, 90, 90))
                .pos(Pos::new(side, VPos::Top)),
        )))?;
    }
    for m in &c.y_marks {
        let y = c.y_scale.to_axis(m.at);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x0, y), (x1, y)],
            RGBColor(179, 38, 30).stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            m.label.clone(),
            (x0, y),
            ("sans-serif", 11)
                .into_font()
                .color(&RGBColor(179, 38, 30))
                .pos(Pos::new(HPos::Left, VPos::Bottom)),
        )))?;
    }
    Ok(())
}

/// One series: its whiskers, its line (dashed or solid) with a legend entry, and its points.
fn line_series(chart: &mut LineChart, c: &Lines, s: &Series, col: RGBColor) -> Fallible {
    let pts: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (c.x_scale.to_axis(p.0), c.y_scale.to_axis(p.1)))
        .collect();
    for w in &s.whiskers {
        let x = c.x_scale.to_axis(w.0);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, c.y_scale.to_axis(w.1)), (x, c.y_scale.to_axis(w.2))],
            col.stroke_width(1),
        )))?;
    }
    let anno = if s.dashed {
        chart.draw_series(DashedLineSeries::new(
            pts.clone(),
            6,
            4,
            col.stroke_width(2),
        ))?
    } else {
        chart.draw_series(LineSeries::new(pts.clone(), col.stroke_width(2)))?
    };
    anno.label(s.name.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(2)));
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 2, col.filled())))?;
    Ok(())
}

/// Horizontal bars with whiskers and vertical ceiling lines.
pub fn bars(
    title: &str,
    x_desc: &str,
    legend: (&str, &str),
    items: &[Bar],
    ceilings: &[Mark],
) -> String {
    let row = 30u32;
    let height = 90 + row * items.len().max(1) as u32;
    render(WIDTH + 120, height, |root| {
        let hi = items
            .iter()
            .flat_map(|b| [b.high, b.value, b.secondary.unwrap_or(0.0)])
            .chain(ceilings.iter().map(|m| m.at))
            .fold(0.0f64, f64::max)
            * 1.08;
        let n = items.len().max(1);
        let labels: Vec<String> = items.iter().map(|b| b.label.clone()).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(42)
            .y_label_area_size(150)
            .build_cartesian_2d(0.0..hi.max(1.0), (0..n).into_segmented())?;
        let yf = move |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_label_formatter(&yf)
            .y_labels(n)
            .disable_y_mesh()
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        bar_rows(&mut chart, items, legend, row / 2)?;
        for m in ceilings {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![
                    (m.at, SegmentValue::Exact(0)),
                    (m.at, SegmentValue::Exact(n)),
                ],
                RGBColor(179, 38, 30).stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                m.label.clone(),
                (m.at, SegmentValue::Exact(n)),
                ("sans-serif", 11)
                    .into_font()
                    .color(&RGBColor(179, 38, 30))
                    .pos(Pos::new(HPos::Right, VPos::Top)),
            )))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font(("sans-serif", 12))
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        Ok(())
    })
}

/// A bar chart's plotting area: values across, one segment per bar down.
type BarChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>>;

/// Each bar: the main value over the upper part of its row (all of it without a secondary), the
/// secondary beneath, the whisker through the middle; the first of each kind gets the legend.
fn bar_rows(chart: &mut BarChart, items: &[Bar], legend: (&str, &str), half: u32) -> Fallible {
    let main = color(0);
    let second = RGBColor(170, 200, 230);
    let mut drawn_secondary = false;
    for (i, b) in items.iter().enumerate() {
        let mut r = Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (b.value, SegmentValue::Exact(i + 1)),
            ],
            main.filled(),
        );
        if b.secondary.is_some() {
            r.set_margin(3, half, 0, 0);
        } else {
            r.set_margin(5, 5, 0, 0);
        }
        let a = chart.draw_series(std::iter::once(r))?;
        if i == 0 {
            a.label(legend.0.to_string())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], main.filled()));
        }
        if let Some(s) = b.secondary {
            let mut r = Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(i)),
                    (s, SegmentValue::Exact(i + 1)),
                ],
                second.filled(),
            );
            r.set_margin(half, 3, 0, 0);
            let a = chart.draw_series(std::iter::once(r))?;
            if !drawn_secondary {
                drawn_secondary = true;
                a.label(legend.1.to_string()).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], second.filled())
                });
            }
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![
                (b.low, SegmentValue::CenterOf(i)),
                (b.high, SegmentValue::CenterOf(i)),
            ],
            BLACK.stroke_width(1),
        )))?;
    }
    Ok(())
}

/// A heatmap of a matrix with its values written in the cells. Colour says how far a cell is
/// from the best cell: green at the best, orange at twice the best latency (`low_is_good`) or
/// half the best bandwidth, so equal figures look equal however small the spread.
pub fn heatmap(
    title: &str,
    subtitle: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    short: &[Vec<bool>],
    low_is_good: bool,
) -> String {
    let cell_w = (480 / cols.len().max(1)).clamp(48, 110) as i32;
    let cell_h = 34i32;
    let left = 120i32;
    let top = 64i32;
    let width = (left + cell_w * cols.len() as i32 + 20).max(320) as u32;
    let height = (top + cell_h * rows.len() as i32 + 36) as u32;
    let all: Vec<f64> = values.iter().flatten().flatten().copied().collect();
    let best = if low_is_good {
        all.iter().copied().fold(f64::INFINITY, f64::min)
    } else {
        all.iter().copied().fold(0.0, f64::max)
    };
    render(width, height, |root| {
        let font = ("sans-serif", 12).into_font();
        heatmap_titles(root, title, subtitle)?;
        for (j, c) in cols.iter().enumerate() {
            root.draw(&Text::new(
                c.clone(),
                (left + cell_w * j as i32 + cell_w / 2, top - 6),
                font.clone()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))?;
        }
        for (i, r) in rows.iter().enumerate() {
            let y = top + cell_h * i as i32;
            root.draw(&Text::new(
                r.clone(),
                (left - 8, y + cell_h / 2),
                font.clone()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
            for j in 0..cols.len() {
                let x = left + cell_w * j as i32;
                let v = values.get(i).and_then(|row| row.get(j)).copied().flatten();
                let fill = cell_fill(v, best, low_is_good);
                root.draw(&Rectangle::new(
                    [(x + 1, y + 1), (x + cell_w - 1, y + cell_h - 1)],
                    fill.filled(),
                ))?;
                // A figure resting on disturbed samples carries its mark here too.
                let short = short.get(i).and_then(|r| r.get(j)) == Some(&true);
                root.draw(&Text::new(
                    v.map_or("–".to_string(), |v| {
                        format!("{}{}", trim(v), if short { " ⚠" } else { "" })
                    }),
                    (x + cell_w / 2, y + cell_h / 2),
                    font.clone()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
        Ok(())
    })
}

/// A drawing's title, at its top left (heatmaps, the DIMM map).
pub(super) fn draw_title(root: &DrawingArea<SVGBackend, Shift>, title: &str) -> Fallible {
    root.draw(&Text::new(
        title.to_string(),
        (10, 8),
        ("sans-serif", 17)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    Ok(())
}

/// A heatmap's title and, beneath it in grey, what its numbers are.
fn heatmap_titles(root: &DrawingArea<SVGBackend, Shift>, title: &str, subtitle: &str) -> Fallible {
    draw_title(root, title)?;
    root.draw(&Text::new(
        subtitle.to_string(),
        (10, 30),
        ("sans-serif", 11)
            .into_font()
            .color(&RGBColor(90, 90, 90))
            .pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    Ok(())
}

/// A cell's colour by how far it is from the best cell (see [`heatmap`]); grey without a value.
fn cell_fill(v: Option<f64>, best: f64, low_is_good: bool) -> RGBColor {
    match v {
        Some(v) if best > 0.0 && best.is_finite() => {
            let poor = if low_is_good {
                v / best - 1.0
            } else {
                1.0 - v / best
            } * if low_is_good { 1.0 } else { 2.0 };
            let good = 1.0 - poor.clamp(0.0, 1.0);
            // Green (good) to orange (poor).
            RGBColor(
                (120.0 + 120.0 * (1.0 - good)) as u8,
                (200.0 - 60.0 * (1.0 - good)) as u8,
                (140.0 - 60.0 * (1.0 - good)) as u8,
            )
        }
        Some(_) => RGBColor(150, 200, 140),
        None => RGBColor(235, 235, 235),
    }
}

/// A free drawing (used by the DIMM map): the closure draws on a plain pixel canvas.
pub fn canvas(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Fallible,
) -> String {
    render(width, height, draw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_results::view::Series;

    #[test]
    fn a_line_chart_is_svg_with_its_text_escaped() {
        let svg = lines(&Lines {
            title: "latency <&>".into(),
            x_desc: "working set".into(),
            y_desc: "ns".into(),
            x_scale: Scale::Log2Bytes,
            y_scale: Scale::Log10,
            series: vec![Series {
                name: "CPU 0".into(),
                points: vec![
                    (4096.0, 1.1),
                    (1048576.0, 4.0),
                    ((1u64 << 28) as f64, 150.0),
                ],
                whiskers: vec![(4096.0, 1.0, 1.2)],
                dashed: false,
            }],
            x_marks: vec![Mark {
                at: 32768.0,
                label: "L1".into(),
            }],
            x_to_marks: false,
            y_marks: vec![],
            y_from_zero: false,
        });
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(svg.contains("latency &lt;&amp;&gt;"));
        assert!(svg.contains("4 KiB") || svg.contains("4KiB"), "byte labels");
        assert!(!svg.contains("chart not drawn"));
    }

    #[test]
    fn bars_and_heatmaps_draw() {
        let b = bars(
            "bandwidth",
            "GB/s",
            ("program", "DRAM est."),
            &[Bar {
                label: "read".into(),
                value: 30.0,
                low: 29.0,
                high: 31.0,
                secondary: Some(30.0),
            }],
            &[Mark {
                at: 51.2,
                label: "DRAM peak".into(),
            }],
        );
        assert!(b.starts_with("<svg") && !b.contains("chart not drawn"));
        assert!(b.contains("DRAM peak"));
        let h = heatmap(
            "latency",
            "ns",
            &["node 0".into()],
            &["node 0".into(), "node 1".into()],
            &[vec![Some(90.0), None]],
            &[vec![true, false]],
            true,
        );
        assert!(h.contains("node 1") && h.contains("90 ⚠") && h.contains("–"));
    }

    #[test]
    fn labels_are_short() {
        assert_eq!(trim(150.0), "150");
        assert_eq!(trim(1.10), "1.1");
        assert_eq!(Scale::Log2Bytes.label(12.0), "4 KiB");
        assert_eq!(Scale::Log2Bytes.label(12.5), "");
    }
}
