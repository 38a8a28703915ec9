//! A matrix measured in alternating rounds, merged cell by cell.

use memsight_core::stats::{Summary, between_rounds, merge_rounds};

use super::{Cell, KernelCell};

/// The matrix from every cell's rounds (`[row][column][round]`): a row ends at the first cell
/// that has no round (an interrupted first round), and the matrix at the first such row.
pub(super) fn cells(taken: Vec<Vec<Vec<Cell>>>) -> Vec<Vec<Cell>> {
    let mut out = Vec::new();
    for row in taken {
        let merged: Vec<Cell> = row.into_iter().map_while(merge).collect();
        if merged.is_empty() {
            break;
        }
        out.push(merged);
    }
    out
}

/// One cell from its rounds: each figure's samples of the clean rounds together (see
/// [`merge_rounds`]), with how far its rounds' medians lay apart for latency and read.
pub(super) fn merge(mut rounds: Vec<Cell>) -> Option<Cell> {
    if rounds.len() < 2 {
        return rounds.pop();
    }
    let latency = merged(rounds.iter().map(|c| c.latency_ns.as_ref()));
    let read = merged(rounds.iter().map(|c| c.bandwidth_gbs.as_ref()));
    // An interrupted round may lack the last kernels: each figure merges the rounds that have it.
    let kernels = rounds[0]
        .kernels
        .iter()
        .filter_map(|k| {
            let each = rounds
                .iter()
                .map(|c| c.kernels.iter().find(|x| x.test == k.test).map(|x| &x.gbs));
            merged(each).map(|(gbs, _)| KernelCell {
                test: k.test.clone(),
                gbs,
            })
        })
        .collect();
    Some(Cell {
        latency_between_rounds: latency.as_ref().map(|l| l.1),
        bandwidth_between_rounds: read.as_ref().map(|r| r.1),
        latency_ns: latency.map(|l| l.0),
        bandwidth_gbs: read.map(|r| r.0),
        kernels,
    })
}

/// A figure's rounds as one summary and their spread, from the rounds that measured it.
fn merged<'a>(each: impl Iterator<Item = Option<&'a Summary>>) -> Option<(Summary, f64)> {
    let rounds: Vec<Summary> = each.flatten().cloned().collect();
    let m = merge_rounds(&rounds)?;
    let spread = between_rounds(&rounds, &m);
    Some((m, spread))
}

/// Cells whose read bandwidth moved this much between rounds are worth a finding.
const ROUNDS_APART: f64 = 0.2;

/// A finding when some cell's read bandwidth moved a fifth or more between rounds: the cell
/// that moved most, and how many did.
pub(super) fn finding(
    plan: &super::placement::NumaPlan,
    columns: &[super::Column],
    cells: &[Vec<Cell>],
) -> Option<String> {
    let moved: Vec<(usize, usize, f64)> = cells
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter()
                .enumerate()
                .filter_map(move |(c, cell)| cell.bandwidth_between_rounds.map(|x| (r, c, x)))
        })
        .filter(|m| m.2 >= ROUNDS_APART)
        .collect();
    let (r, c, most) = *moved.iter().max_by(|a, b| a.2.total_cmp(&b.2))?;
    Some(format!(
        "read bandwidth moved up to {:.0}% between rounds (CPU node {} → {}), in {} of {} cells: the memory was shared with other work while the matrices were measured; every cell was measured in each round, so the cells compare with one another, but their absolute bandwidths carry that spread",
        most * 100.0,
        plan.initiators[r].node,
        columns[c].label,
        moved.len(),
        cells.iter().map(Vec::len).sum::<usize>()
    ))
}

/// The method's words for the rounds.
pub(super) fn method(rounds: usize) -> String {
    if rounds > 1 {
        format!(
            "Cells measured in {rounds} alternating rounds (every cell once a round, each with its share of the samples); a cell's figure merges its rounds' samples, and \"rounds apart\" is (highest − lowest round median) ÷ the merged median. "
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    fn cell(ns: f64, read: f64, write: Option<f64>) -> Cell {
        Cell {
            latency_ns: Some(summarize(&[ns, ns + 1.0, ns - 1.0])),
            bandwidth_gbs: Some(summarize(&[read, read, read])),
            kernels: write
                .map(|w| KernelCell {
                    test: "write".into(),
                    gbs: summarize(&[w, w, w]),
                })
                .into_iter()
                .collect(),
            latency_between_rounds: None,
            bandwidth_between_rounds: None,
        }
    }

    /// Three rounds of a cell, the second while another tenant drew bandwidth: one figure per
    /// kernel from every sample, and the read spread said.
    #[test]
    fn a_cells_rounds_merge_with_their_spread() {
        let c = merge(vec![
            cell(100.0, 40.0, Some(20.0)),
            cell(110.0, 20.0, Some(12.0)),
            cell(100.0, 40.0, Some(20.0)),
        ])
        .unwrap();
        assert_eq!(c.latency_ns.as_ref().unwrap().n, 9);
        assert_eq!(c.bandwidth_gbs.as_ref().unwrap().median, 40.0);
        assert!((c.bandwidth_between_rounds.unwrap() - 0.5).abs() < 1e-9);
        // Rounds 100 and 110 ns apart, over the merged median of 101 ns.
        assert!((c.latency_between_rounds.unwrap() - 10.0 / 101.0).abs() < 1e-9);
        assert_eq!(c.kernels.len(), 1);
        assert_eq!(c.kernels[0].gbs.n, 9);
    }

    /// An interrupted round lacks a kernel: the kernel comes from the rounds that have it; a
    /// matrix whose first round stopped part-way keeps its measured cells.
    #[test]
    fn interrupted_rounds_keep_what_was_measured() {
        let c = merge(vec![cell(100.0, 40.0, Some(20.0)), cell(100.0, 40.0, None)]).unwrap();
        assert_eq!(c.kernels[0].gbs.n, 3);
        assert!(c.bandwidth_gbs.is_some());
        let m = cells(vec![
            vec![vec![cell(90.0, 50.0, None)], vec![cell(140.0, 25.0, None)]],
            vec![vec![cell(140.0, 25.0, None)], vec![]],
        ]);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].len(), m[1].len()), (2, 1));
        assert!(cells(vec![vec![vec![]]]).is_empty());
    }
}
