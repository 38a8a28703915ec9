//! What the contention figures say, each sentence citing its figures and comparing them only as
//! far as their confidence intervals allow.

use memsight_core::env::Environment;
use memsight_core::finding::{Cited, Finding};
use memsight_core::ratio::{Ratio, Relation};

use super::{CoherenceResults, Contended, FalseSharing, Layouts, RingFigures};

/// The findings of a measurement.
pub fn findings(r: &CoherenceResults, env: &Environment) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(contention(&r.contended));
    if let Some(f) = &r.false_sharing {
        out.extend(f.plain.as_ref().map(|l| false_sharing(f, l, "plain")));
        out.extend(f.atomic.as_ref().map(|l| false_sharing(f, l, "atomic")));
    }
    out.extend(r.not_given.iter().map(|w| Finding::unsampled(w.clone())));
    out.extend(r.ring.as_ref().map(ring));
    if let Some(h) = &env.cpu.hypervisor {
        out.push(Finding::unsampled(format!(
            "under a hypervisor ({h}) the lines move between wherever the host placed the vCPUs at the time; repeat and compare before reading these as the cores'"
        )));
    }
    out
}

/// The interval a ratio's figures allow, as the findings print it.
fn interval(r: &Ratio) -> String {
    format!(
        "{:.2}–{:.2} within the figures' confidence intervals",
        r.low, r.high
    )
}

/// The whole team on one counter against one thread alone.
fn contention(c: &[Contended]) -> Option<Finding> {
    let (one, all) = (c.first()?, c.last()?);
    if all.threads < 2 || one.threads != 1 {
        return None;
    }
    let r = Ratio::of(&all.mops, &one.mops);
    let verdict = match r.relation() {
        Relation::Below => "adding threads to one counter made it slower, not faster",
        Relation::Same => "adding threads to one counter made it no faster",
        Relation::Above => {
            "the team's increments overlap (the cores may share a cache the line stays in)"
        }
    };
    let text = format!(
        "{} threads incrementing one counter: {:.1} M increments/s together ({:.1} ns an increment, the line moving between cores), against {:.1} M/s for one thread alone: {:.2}× ({}); {verdict}",
        all.threads,
        all.mops.median,
        all.ns_per_op(),
        one.mops.median,
        r.value,
        interval(&r)
    );
    Some(Finding::citing(
        text,
        vec![
            Cited::of(
                format!("{} threads on one counter", all.threads),
                "Mops/s",
                &all.mops,
            ),
            Cited::of("one thread on one counter", "Mops/s", &one.mops),
        ],
    ))
}

/// Adjacent words against padded ones, for one kind of increment (`how`).
fn false_sharing(f: &FalseSharing, l: &Layouts, how: &str) -> Finding {
    let r = Ratio::of(&l.padded_mops, &l.adjacent_mops);
    let cites = vec![
        Cited::of(
            format!("{how}, words in one line"),
            "Mops/s",
            &l.adjacent_mops,
        ),
        Cited::of(
            format!("{how}, words in lines of their own"),
            "Mops/s",
            &l.padded_mops,
        ),
    ];
    let [a, b] = f.cpus;
    let head = format!(
        "false sharing between CPU {a} and CPU {b}, {how} increments of their own words: adjacent in one line, {:.0} M increments/s together; each in a line of its own, {:.0} M/s: {:.2}× ({})",
        l.adjacent_mops.median,
        l.padded_mops.median,
        r.value,
        interval(&r)
    );
    match r.relation() {
        Relation::Above => Finding::advice(
            format!(
                "{head}: sharing the line is slower; keep data that threads write apart in lines of their own (align per-thread counters and locks to 128 bytes, which also keeps the adjacent-line prefetcher from pairing them)"
            ),
            cites,
        ),
        Relation::Same => Finding::citing(
            format!("{head}: within the noise here, the same either way"),
            cites,
        ),
        Relation::Below => Finding::citing(
            format!(
                "{head}: the padded words were slower here; false sharing cost nothing measurable"
            ),
            cites,
        ),
    }
}

/// The ring's rate.
fn ring(g: &RingFigures) -> Finding {
    Finding::citing(
        format!(
            "line-sized messages from CPU {} to CPU {} through a ring of {} lines: {:.2} GB/s, {:.1} ns a message",
            g.writer,
            g.reader,
            g.slots,
            g.gbps.median,
            g.ns_per_message()
        ),
        vec![Cited::of("message ring", "GB/s", &g.gbps)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsight_core::stats::summarize;

    fn layouts(adjacent: &[f64], padded: &[f64]) -> Layouts {
        Layouts {
            adjacent_mops: summarize(adjacent),
            padded_mops: summarize(padded),
        }
    }

    fn pair(l: Layouts) -> FalseSharing {
        FalseSharing {
            cpus: [0, 1],
            plain: Some(l.clone()),
            atomic: Some(l),
        }
    }

    #[test]
    fn false_sharing_is_claimed_only_beyond_the_noise() {
        let clear = layouts(
            &[47.0, 46.8, 47.2, 47.1, 46.9],
            &[438.0, 440.0, 436.0, 439.0, 437.0],
        );
        let f = false_sharing(&pair(clear.clone()), &clear, "atomic");
        assert!(
            f.text.contains("9.3") && f.text.contains("slower"),
            "{}",
            f.text
        );
        assert!(f.text.contains("128 bytes"), "{}", f.text);
        let noise = layouts(
            &[100.0, 103.0, 98.0, 101.0, 99.0],
            &[101.0, 99.0, 102.0, 100.0, 98.0],
        );
        let f = false_sharing(&pair(noise.clone()), &noise, "plain");
        assert!(f.text.contains("within the noise"), "{}", f.text);
        assert!(
            !f.text.contains("slower") && !f.text.contains("128 bytes"),
            "{}",
            f.text
        );
    }

    #[test]
    fn a_kind_not_given_has_no_finding_and_the_reason_is_one() {
        let l = layouts(&[47.0, 46.8, 47.2], &[438.0, 440.0, 436.0]);
        let r = CoherenceResults {
            method: String::new(),
            cpus: vec![0, 1],
            selection: String::new(),
            contended: Vec::new(),
            false_sharing: Some(FalseSharing {
                cpus: [0, 1],
                plain: Some(l),
                atomic: None,
            }),
            not_given: vec![super::super::not_given("false sharing, atomic increments")],
            ring: None,
            findings: Vec::new(),
        };
        let env = Environment::collect(
            &memsight_core::sysfs::FsRoot::live(),
            memsight_core::topology::Topology::load().unwrap(),
            false,
        );
        let texts: Vec<String> = findings(&r, &env).into_iter().map(|f| f.text).collect();
        assert!(
            texts.iter().any(|t| t.contains("plain increments")),
            "{texts:?}"
        );
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("atomic increments of their")),
            "{texts:?}"
        );
        let why = texts.iter().find(|t| t.contains("not given")).unwrap();
        assert!(why.contains("faster than the machine"), "{why}");
    }

    #[test]
    fn the_counter_compares_the_whole_team_with_one_thread() {
        let c = |threads, v: &[f64]| Contended {
            threads,
            mops: summarize(v),
        };
        let f = contention(&[
            c(1, &[218.0, 219.0, 217.0, 218.5, 218.2]),
            c(2, &[48.6, 48.7, 48.5, 48.9, 48.4]),
            c(4, &[30.0, 30.2, 29.9, 30.1, 30.0]),
        ])
        .unwrap();
        assert!(f.text.starts_with("4 threads"), "{}", f.text);
        assert!(f.text.contains("slower, not faster"), "{}", f.text);
        assert_eq!(f.cites.len(), 2);
        assert!(contention(&[c(1, &[1.0, 1.0, 1.0])]).is_none());
    }
}
