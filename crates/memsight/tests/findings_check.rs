//! Findings follow their figures: scripts/check-findings.py, which the tests hold results to
//! (`common::assert_findings_follow_their_figures`), refuses what it must.

mod common;

/// scripts/check-findings.py refuses what it must on made-up findings (a ratio of 1.01× with
/// "two coherence transactions", "slower" of figures within each other's intervals) and passes
/// the sentences that follow their numbers.
#[test]
fn the_findings_check_refuses_a_clause_its_numbers_contradict() {
    common::findings_check(&["--self-test".as_ref()]);
}
