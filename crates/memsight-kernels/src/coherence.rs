//! Many cores on one cache line: what core-to-core ping-pong does not show.
//!
//! **Contended increments** ([`increment`]): every thread of a team adds 1 to the same 64-bit
//! counter with an atomic read-modify-write (`lock xadd` on x86, `ldadd` or a load/store-exclusive
//! pair on Arm), as a shared statistics counter or a reference count does. With more than one
//! thread, almost every increment first has to take the line from another core: the team's rate
//! is bounded by how fast the line moves, not by how many cores ask.
//!
//! **False sharing** ([`bump`]): each thread increments its own word with a plain load and store
//! (no lock), the words either adjacent in one line ([`Words::adjacent`]) or each in a line of its
//! own ([`Words::padded`]). The program is the same; only the layout differs, and what the first
//! costs over the second is what false sharing costs.
//!
//! **A message ring** ([`send`], [`receive`]): one thread writes line-sized messages (seven
//! payload words and a sequence word) into a ring of lines and publishes them a quarter of the
//! ring at a time (a count on a line of its own, stored with release order); its partner reads
//! the published slots, checks every word and hands slots back a quarter of the ring at a time.
//! Every message is one line moving from the writer's cache to the reader's, once: the figure is
//! how many bytes a second one core can hand another through memory the two share. (A reader
//! that polled each slot's own sequence word would take lines the writer is still filling, and
//! its rate would depend by ±15% on how the two loops are paced.)
//!
//! No wait loop pauses (`pause`, `yield`): a pause adds its own delay (up to ~140 cycles on
//! recent Intel cores) to every wait, and the figures are the line's, not the pause's.

use std::sync::atomic::{AtomicU64, Ordering};

/// A 64-byte line of eight words on a 128-byte boundary of its own (so the adjacent-line
/// prefetcher does not pair it with a neighbour).
#[repr(C, align(128))]
#[derive(Default)]
pub struct Slot {
    pub words: [AtomicU64; 8],
    _pad: [u64; 8],
}

/// Words that threads increment, one per thread: in one line, or each in its own.
pub struct Words {
    lines: Vec<Slot>,
    padded: bool,
}

impl Words {
    /// `n` (at most 8) words side by side in one line.
    pub fn adjacent(n: usize) -> Self {
        assert!(n <= 8, "one line holds eight words");
        Words {
            lines: vec![Slot::default()],
            padded: false,
        }
    }

    /// `n` words, each in a line of its own.
    pub fn padded(n: usize) -> Self {
        Words {
            lines: (0..n).map(|_| Slot::default()).collect(),
            padded: true,
        }
    }

    /// Thread `i`'s word.
    pub fn word(&self, i: usize) -> &AtomicU64 {
        match self.padded {
            true => &self.lines[i].words[0],
            false => &self.lines[0].words[i],
        }
    }
}

/// `n` atomic increments of `counter`; returns the value the last one read (the counter is
/// shared: the caller checks the team's total, not this).
#[inline(never)]
pub fn increment(counter: &AtomicU64, n: u64) -> u64 {
    let mut last = 0;
    for _ in 0..n {
        last = counter.fetch_add(1, Ordering::Relaxed);
    }
    last
}

/// `n` increments of `word` with a plain load and a plain store, as `(*p)++` through a volatile
/// pointer compiles: relaxed atomics, which the compiler neither fuses nor removes.
#[inline(never)]
pub fn bump(word: &AtomicU64, n: u64) {
    for _ in 0..n {
        let v = word.load(Ordering::Relaxed);
        word.store(v + 1, Ordering::Relaxed);
    }
}

/// How a thread increments its word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// [`increment`]: an atomic fetch-add.
    Atomic,
    /// [`bump`]: a plain load and store.
    Plain,
}

/// Increments between two looks at whether the round has ended.
pub const CHUNK: u64 = 256;

/// Up to `target` increments of `word` as `op`, in chunks of [`CHUNK`], as thread `round` of a
/// team's round: it stops early once another thread of the team has finished its own target in
/// this round (`ended` holds the last round that ended), and ends the round for the others when
/// it finishes first. Returns the increments it made. A thread left running alone after its
/// partners stopped would run uncontended and make a contended figure read faster than the
/// machine: this keeps the round to the time all of them ran (to within one chunk).
#[inline(never)]
pub fn contend(word: &AtomicU64, op: Op, target: u64, ended: &AtomicU64, round: u64) -> u64 {
    let mut done = 0;
    while done < target && ended.load(Ordering::Relaxed) < round {
        let n = CHUNK.min(target - done);
        match op {
            Op::Atomic => drop(increment(word, n)),
            Op::Plain => bump(word, n),
        }
        done += n;
    }
    if done == target {
        ended.fetch_max(round, Ordering::Relaxed);
    }
    done
}

/// A ring of line-sized message slots, the count of messages the writer has published and the
/// count the reader has handed back, each count on a line of its own.
pub struct Ring {
    slots: Vec<Slot>,
    published: Slot,
    consumed: Slot,
}

impl Ring {
    /// A ring of `slots` lines (a power of two, at least 4).
    pub fn new(slots: usize) -> Self {
        assert!(slots >= 4 && slots.is_power_of_two(), "4, 8, 16 … slots");
        Ring {
            slots: (0..slots).map(|_| Slot::default()).collect(),
            published: Slot::default(),
            consumed: Slot::default(),
        }
    }

    #[cfg(test)]
    fn slot(&self, m: u64) -> &Slot {
        &self.slots[(m as usize) & (self.slots.len() - 1)]
    }
}

/// Message `m`'s payload word `w`.
fn payload(m: u64, w: usize) -> u64 {
    m.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ w as u64
}

/// Writes messages `from..from + n`, each into its slot once the reader has handed the slot
/// back, publishing them a quarter of the ring at a time (and all at the end). The reader reads
/// only published slots, so it never asks for a line the writer is still filling: each message's
/// line moves once, from the writer's cache to the reader's, however the two loops are paced.
#[inline(never)]
pub fn send(ring: &Ring, from: u64, n: u64) {
    // The slots and the masks in registers: read through `ring` on every message, they would be
    // loads the acquire order keeps the compiler from hoisting.
    let (slots, consumed) = (&ring.slots[..], &ring.consumed.words[0]);
    let published = &ring.published.words[0];
    let depth = slots.len() as u64;
    let (mask, batch_mask) = (depth - 1, depth / 4 - 1);
    let mut handed_back = consumed.load(Ordering::Acquire);
    for m in from..from + n {
        while m >= handed_back + depth {
            handed_back = consumed.load(Ordering::Acquire);
        }
        let s = &slots[(m & mask) as usize];
        for (w, word) in s.words[..7].iter().enumerate() {
            word.store(payload(m, w), Ordering::Relaxed);
        }
        s.words[7].store(m + 1, Ordering::Relaxed);
        if (m + 1) & batch_mask == 0 {
            published.store(m + 1, Ordering::Release);
        }
    }
    published.store(from + n, Ordering::Release);
}

/// Reads messages `from..from + n` as they are published, handing slots back a quarter of the
/// ring at a time (and all at the end); returns how many messages held a word (payload or
/// sequence) other than what was sent (0 unless the ring is broken).
#[inline(never)]
pub fn receive(ring: &Ring, from: u64, n: u64) -> u64 {
    let (slots, consumed) = (&ring.slots[..], &ring.consumed.words[0]);
    let published = &ring.published.words[0];
    let depth = slots.len() as u64;
    let (mask, batch_mask) = (depth - 1, depth / 4 - 1);
    let mut seen = published.load(Ordering::Acquire);
    let mut wrong = 0;
    for m in from..from + n {
        while m >= seen {
            seen = published.load(Ordering::Acquire);
        }
        let s = &slots[(m & mask) as usize];
        // Every word XORed with what was sent: zero unless one differs (one OR chain, not a
        // comparison and a branch per word).
        let mut diff = s.words[7].load(Ordering::Relaxed) ^ (m + 1);
        for (w, word) in s.words[..7].iter().enumerate() {
            diff |= word.load(Ordering::Relaxed) ^ payload(m, w);
        }
        wrong += u64::from(diff != 0);
        if (m + 1) & batch_mask == 0 {
            consumed.store(m + 1, Ordering::Release);
        }
    }
    consumed.store(from + n, Ordering::Release);
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_increment_lands() {
        let c = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| increment(&c, 10_000));
            }
        });
        assert_eq!(c.load(Ordering::Relaxed), 20_000);
    }

    #[test]
    fn the_first_thread_to_finish_ends_the_round_for_the_others() {
        let (w, ended) = (AtomicU64::new(0), AtomicU64::new(0));
        assert_eq!(contend(&w, Op::Atomic, 1000, &ended, 1), 1000);
        assert_eq!(ended.load(Ordering::Relaxed), 1);
        // Round 1 has ended: a partner still in it stops at once.
        assert_eq!(contend(&w, Op::Plain, 1000, &ended, 1), 0);
        assert_eq!(contend(&w, Op::Plain, 300, &ended, 2), 300);
        assert_eq!(w.load(Ordering::Relaxed), 1300);
    }

    #[test]
    fn adjacent_words_share_a_line_and_padded_ones_do_not() {
        let a = Words::adjacent(2);
        let p = Words::padded(2);
        let at = |w: &AtomicU64| w as *const AtomicU64 as usize;
        assert_eq!(at(a.word(1)) - at(a.word(0)), 8);
        assert_eq!(at(a.word(0)) / 64, at(a.word(1)) / 64);
        assert!(at(p.word(1)) - at(p.word(0)) >= 128);
        bump(a.word(1), 5);
        bump(p.word(0), 3);
        assert_eq!(a.word(1).load(Ordering::Relaxed), 5);
        assert_eq!(p.word(0).load(Ordering::Relaxed), 3);
    }

    #[test]
    fn the_ring_delivers_every_message_intact_in_batches() {
        let ring = Ring::new(8);
        let wrong = std::thread::scope(|s| {
            let r = s.spawn(|| (0..5).map(|k| receive(&ring, k * 1000, 1000)).sum::<u64>());
            for k in 0..5 {
                send(&ring, k * 1000, 1000);
            }
            r.join().unwrap()
        });
        assert_eq!(wrong, 0);
        assert_eq!(ring.slot(4999).words[7].load(Ordering::Relaxed), 5000);
    }
}
