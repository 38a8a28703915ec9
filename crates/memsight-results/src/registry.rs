//! The registry of suites: the one list a suite is added to. Each line names the suite's module
//! (in memsight-suites, and its flags file in the binary), its command variant, the command name,
//! its results type (in memsight-suites), and, for the suites `memsight run` runs, the field of
//! the run document that holds them. The order is `memsight run`'s order and the report's.
//!
//! The suites crate names the same suites in `memsight_suites::suite_id::SuiteId`, with what
//! the run decides about each; `document::registered_name` matches that enum with this list
//! exhaustively, so that neither compiles without the other.
//!
//! It is a macro that hands the list to another macro, so that every place that enumerates the
//! suites — the result documents and presenters here, the commands and `memsight run` in the
//! binary — is generated from it.

/// Calls `$callback! { module Variant "command" module::Results [, run field]; … }`.
#[macro_export]
macro_rules! with_suites {
    ($callback:ident) => {
        $callback! {
            latency Latency "latency" latency::LatencyResults, run latency;
            bandwidth Bandwidth "bandwidth" bandwidth::BandwidthResults, run bandwidth;
            stream Stream "stream" stream::StreamResults;
            loaded LoadedLatency "loaded-latency" loaded::LoadedResults, run loaded_latency;
            numa Numa "numa" numa::NumaResults, run numa;
            c2c C2c "c2c" c2c::C2cResults, run c2c;
            dimms Dimms "dimms" dimms::DimmsResults, run dimms;
            tiers Tiers "tiers" tiers::TiersResults, run tiers;
            rowbuffer Rowbuffer "rowbuffer" rowbuffer::RowbufferResults, run rowbuffer;
            alloc Alloc "alloc" alloc::AllocResults;
            profile Profile "profile" profile::ProfileResults;
            pmem Pmem "pmem" pmem::PmemResults;
            scan Scan "scan" scan::ScanResults;
            coherence Coherence "coherence" coherence::CoherenceResults;
        }
    };
}

#[cfg(test)]
mod tests {
    use memsight_suites::suite_id::SuiteId;

    #[test]
    fn the_registry_and_the_suites_names_agree_in_order() {
        // Exhaustive both ways at compile time (`document::registered_name`); here the names
        // and the order, which `SuiteId::ALL` states and the run's order follows.
        for id in SuiteId::ALL {
            assert_eq!(crate::document::registered_name(id), id.name());
        }
        macro_rules! names {
            ($($m:ident $variant:ident $name:literal $tm:ident :: $tn:ident $(, run $field:ident)?;)*) => {
                [$($name),*]
            };
        }
        let registry = crate::with_suites!(names);
        let ids: Vec<&str> = SuiteId::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(registry.to_vec(), ids);
    }
}
