//! The offset sweeps of every repetition: each kernel on contiguous memory, on demand-paged
//! 4 KiB memory and, with `--fragment`, on 4 KiB memory after free memory was scattered.

use crate::measure::progress::Tick;
use memsight_core::buffer::{Buffer, BufferRequest, PageKind};
use memsight_core::env::Environment;
use memsight_core::{Result, cancel};

use super::{Curve, Fragmentation, Memory, RowbufferConfig, allocate, counters, detect, sweep_one};

/// Every repetition's sweeps, a fresh buffer per layout, until done or Ctrl-C; with the
/// fragmentation made for the fragmented layout.
pub(super) fn sweep_layouts(
    cfg: &RowbufferConfig,
    env: &Environment,
    controllers: Option<&counters::Controllers>,
    tick: Tick<'_>,
) -> Result<(Vec<Curve>, Option<Fragmentation>)> {
    let mut curves = Vec::new();
    let mut fragmentation = None;
    let mut layouts = vec![Memory::Contiguous, Memory::Paged4k];
    // Held until every sweep is done: its scattered pages are what fragments the others.
    let mut fragmenter = None;
    if cfg.fragment_bytes.is_some() {
        layouts.push(Memory::Fragmented4k);
    }
    'reps: for rep in 0..cfg.reps {
        for &memory in &layouts {
            if memory == Memory::Fragmented4k && fragmenter.is_none() {
                let (f, made) = fragment(cfg.fragment_bytes.expect("fragment size"), env)?;
                fragmentation = Some(made);
                fragmenter = Some(f);
            }
            let mut buf = allocate(memory, cfg, env)?;
            for &op in &cfg.kernels {
                if cancel::requested() {
                    break 'reps;
                }
                let points = sweep_one(op, cfg, controllers, &mut buf, tick)?;
                let offs: Vec<u64> = points.iter().map(|p| p.offset_bytes).collect();
                let gbs: Vec<f64> = points.iter().map(|p| p.value(cfg.stat)).collect();
                let detection = detect::detect(&offs, &gbs);
                curves.push(Curve {
                    kernel: op,
                    memory,
                    rep,
                    buffer: buf.report().clone(),
                    points,
                    detection,
                });
            }
        }
    }
    drop(fragmenter);
    Ok((curves, fragmentation))
}

/// Takes `bytes` of 4 KiB pages, touches them and gives every other one back, so that the
/// free memory the next buffers get is scattered.
fn fragment(bytes: u64, env: &Environment) -> Result<(Buffer, Fragmentation)> {
    let mut f = Buffer::allocate(
        BufferRequest {
            bytes,
            kind: PageKind::Base4K,
            node: None,
            dax: None,
        },
        env,
    )?;
    f.touch();
    let released = f.release_every_other_page()?;
    let made = Fragmentation {
        held_bytes: bytes - released,
        released_bytes: released,
    };
    Ok((f, made))
}
