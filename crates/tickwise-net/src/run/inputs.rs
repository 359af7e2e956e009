//! The players' input streams: [`PlayerInput`], asked once per tick the
//! player's loop runs, and [`random_inputs`], a seeded stream that gives
//! the same input for a tick however often it is asked.

use alloc::boxed::Box;

use tickwise::Pcg32;

/// One player's inputs: called once per tick the player's loop runs, with
/// the session's current tick (in [`run_local`](super::run_local) and
/// [`run_peer`](super::run_peer) alike).
/// The same tick comes again while the session stalls or waits, which
/// depends on the network's timing, so a scripted stream must be a
/// function of the tick (as [`random_inputs`] is) for a match to send the
/// same inputs in every run; ticks never go back.
pub type PlayerInput<'a, I> = Box<dyn FnMut(u64) -> I + 'a>;

/// Player `slot`'s inputs drawn by `f` from a [`Pcg32`] seeded with `seed`
/// on stream `slot` (what `tickwise netplay --inputs random:SEED` gives):
/// tick `t` gets draw `t`, however often it is asked for.
#[must_use]
pub fn random_inputs<'a, I: Clone + 'a>(
    seed: u64,
    slot: u8,
    f: fn(&mut Pcg32) -> I,
) -> PlayerInput<'a, I> {
    let mut rng = Pcg32::new(seed, u64::from(slot));
    let mut next = 0u64;
    let mut last: Option<I> = None;
    Box::new(move |t| {
        loop {
            match &last {
                Some(input) if next > t => return input.clone(),
                _ => {
                    last = Some(f(&mut rng));
                    next += 1;
                }
            }
        }
    })
}
