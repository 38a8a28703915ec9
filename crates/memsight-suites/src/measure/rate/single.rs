//! One bandwidth figure for other suites: a single test on a set of CPUs together, as the NUMA
//! matrix and the memory-tier study measure it.

use memsight_core::Result;
use memsight_core::buffer::PageKind;
use memsight_core::env::Environment;
use memsight_core::stats::{StopRule, Summary};

use super::spec::TestSpec;
use super::{BandwidthConfig, NONZERO};

impl BandwidthConfig {
    /// `test` on every CPU of `cpus` together, `bytes` per thread, non-zero data, the widest
    /// vectors; callers set the placement (`node`, `interleave`, `weighted`, `dax`).
    pub fn single(
        test: TestSpec,
        cpus: &[usize],
        bytes: u64,
        page_kind: PageKind,
        rule: StopRule,
        sample_ns: f64,
    ) -> Result<Self> {
        Ok(BandwidthConfig {
            tests: vec![test],
            isa: memsight_kernels::bandwidth::Isa::widest(),
            cpus: cpus.to_vec(),
            thread_counts: vec![cpus.len()],
            bytes_per_thread: bytes,
            shared: false,
            interleave: false,
            sweep_sizes: Vec::new(),
            node: None,
            page_kind,
            patterns: vec![NONZERO],
            rule,
            sample_ns,
            skipped: Vec::new(),
            weighted: None,
            dax: None,
            reach: None,
            array_gap: super::DEFAULT_ARRAY_GAP,
            team_array_floor: 0,
            rounds: 1,
        })
    }

    /// Measures a config built by [`BandwidthConfig::single`]: GB/s of program bytes, `None`
    /// when interrupted before the first sample.
    pub fn measure_single(&self, env: &Environment) -> Result<Option<Summary>> {
        let p = super::measure(
            &self.tests[0],
            self,
            env,
            &self.cpus,
            self.bytes_per_thread,
            NONZERO,
        )?;
        Ok(p.map(|p| p.program_gbs))
    }
}
