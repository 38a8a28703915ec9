//! Who measures: the CPUs of a team and the vector width its kernels use.

use memsight_core::env::Environment;
use memsight_core::{Error, Result};
use memsight_kernels::bandwidth::{self as k, Isa, Store};

/// How many threads a team has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// One per allowed CPU.
    All,
    Count(usize),
}

/// The vector width asked for (checked against this CPU), or the widest available.
pub fn supported_isa(isa: Option<Isa>) -> Result<Isa> {
    let Some(isa) = isa else {
        return Ok(Isa::widest());
    };
    k::supports(isa, Store::Regular).map_err(Error::input)?;
    Ok(isa)
}

/// CPUs for a team: an explicit list (checked against the allowed CPUs), or `threads` spread
/// over cores first.
pub fn team(threads: Threads, cpus: Option<&[usize]>, env: &Environment) -> Result<Vec<usize>> {
    let allowed = &env.allowed_cpus;
    if let Some(list) = cpus {
        memsight_core::pin::validate_cpus(list, allowed)?;
        return Ok(list.to_vec());
    }
    let n = match threads {
        Threads::All => allowed.len(),
        Threads::Count(n) => n,
    };
    let core_of = |c: usize| {
        env.topology
            .cpus
            .iter()
            .find(|x| x.os_index == c)
            .map_or(c, |x| x.core)
    };
    memsight_core::pin::choose_cpus(n, allowed, core_of)
}
