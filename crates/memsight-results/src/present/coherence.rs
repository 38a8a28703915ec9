//! Cache-line contention: the contended counter by team size, false sharing (plain and atomic
//! increments, adjacent and padded words) and the message ring.

use memsight_core::ratio::{Ratio, Relation};
use memsight_core::stats::Summary;
use memsight_suites::coherence::{CoherenceResults, Layouts};

use super::Present;
use crate::figure::{Better, Figure};
use crate::key::{CoherenceTest, Key};
use crate::view::{Block, Cell, Table, View};
use crate::view::{ci, count, med};

/// Padded ÷ adjacent, as far as the figures' intervals allow, marked where either rests on
/// disturbed samples.
fn slowdown(l: &Layouts) -> String {
    let r = Ratio::of(&l.padded_mops, &l.adjacent_mops);
    let disturbed = l.adjacent_mops.rests_on_disturbed() || l.padded_mops.rests_on_disturbed();
    let mark = if disturbed { " ⚠" } else { "" };
    match r.relation() {
        Relation::Same => format!("{:.2}×{mark} (within the noise)", r.value),
        _ => format!("{:.2}×{mark}", r.value),
    }
}

impl Present for CoherenceResults {
    /// The whole team on one counter, and what false sharing costs.
    fn headline(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(c) = self.contended.last() {
            out.push(format!(
                "one counter, {} threads: {} M increments/s ({:.1} ns each)",
                c.threads,
                crate::view::med_to(&c.mops, 1),
                c.ns_per_op()
            ));
        }
        if let Some(f) = &self.false_sharing {
            let given = |l: &Option<Layouts>| l.as_ref().map_or("not given".into(), slowdown);
            out.push(format!(
                "false sharing (padded ÷ adjacent words): plain increments {}, atomic {}",
                given(&f.plain),
                given(&f.atomic)
            ));
        }
        out
    }

    fn view(&self) -> View {
        let mut rows = Table::new(
            "",
            &[
                "test",
                "threads",
                "figure",
                "95% CI",
                "n",
                "unit",
                "per operation",
            ],
        );
        let mut row = |test: String, threads: usize, s: &Summary, unit: &str, per: String| {
            rows.rows.push(vec![
                Cell::Text(test),
                Cell::Num(threads.to_string()),
                Cell::Num(med(s)),
                Cell::Num(ci(s)),
                Cell::Num(count(s)),
                Cell::Text(unit.into()),
                Cell::Num(per),
            ]);
        };
        for c in &self.contended {
            let per = format!("{:.1} ns an increment", c.ns_per_op());
            row("one counter".into(), c.threads, &c.mops, "Mops/s", per);
        }
        if let Some(f) = &self.false_sharing {
            // Two threads: each one's increments take twice the team's time per increment.
            let each = |s: &Summary| format!("{:.2} ns a thread's increment", 2e3 / s.median);
            let kinds = [("plain", &f.plain), ("atomic", &f.atomic)];
            for (how, l) in kinds
                .into_iter()
                .filter_map(|(h, l)| Some((h, l.as_ref()?)))
            {
                for (layout, s) in [("adjacent", &l.adjacent_mops), ("padded", &l.padded_mops)] {
                    row(
                        format!("own words, {how}, {layout}"),
                        2,
                        s,
                        "Mops/s",
                        each(s),
                    );
                }
            }
        }
        if let Some(g) = &self.ring {
            let per = format!("{:.1} ns a message", g.ns_per_message());
            let what = format!("ring, CPU {} → {}", g.writer, g.reader);
            row(what, 2, &g.gbps, "GB/s", per);
        }
        View {
            id: "coherence",
            title: "Cache-line contention".into(),
            method: self.method.clone(),
            facts: vec![format!(
                "CPUs: {} ({})",
                memsight_core::units::format_list(&self.cpus),
                self.selection
            )],
            blocks: vec![Block::Table(rows)],
            findings: crate::view::texts(&self.findings),
        }
    }

    fn figures(&self) -> Vec<Figure> {
        let figure = |test, threads: usize, what: String, unit: &str, s: &Summary| {
            let key = Key::Coherence {
                test,
                threads: threads as u64,
            };
            Figure::sampled(key, what, unit, Better::Higher, s)
        };
        let mut out: Vec<Figure> = self
            .contended
            .iter()
            .map(|c| {
                let what = format!("one counter, {} threads", c.threads);
                figure(CoherenceTest::Counter, c.threads, what, "Mops/s", &c.mops)
            })
            .collect();
        if let Some(f) = &self.false_sharing {
            let [a, b] = f.cpus;
            let mut kinds = Vec::new();
            if let Some(l) = &f.plain {
                kinds.push((
                    CoherenceTest::AdjacentWords,
                    &l.adjacent_mops,
                    "plain, adjacent",
                ));
                kinds.push((CoherenceTest::PaddedWords, &l.padded_mops, "plain, padded"));
            }
            if let Some(l) = &f.atomic {
                kinds.push((
                    CoherenceTest::AdjacentAtomic,
                    &l.adjacent_mops,
                    "atomic, adjacent",
                ));
                kinds.push((
                    CoherenceTest::PaddedAtomic,
                    &l.padded_mops,
                    "atomic, padded",
                ));
            }
            for (test, s, what) in kinds {
                let what = format!("own words, {what}, CPU {a} and {b}");
                out.push(figure(test, 2, what, "Mops/s", s));
            }
        }
        if let Some(g) = &self.ring {
            let what = format!("message ring, CPU {} → {}", g.writer, g.reader);
            out.push(figure(CoherenceTest::Ring, 2, what, "GB/s", &g.gbps));
        }
        out
    }
}
