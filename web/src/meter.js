// Frame-rate and tick-rate readouts over a sliding window of browser time.
// Presentation only: it reads timestamps and tick counts, it never drives time.

/**
 * @param {number} windowMs how much recent browser time the rates cover
 */
export function rateMeter(windowMs = 1000) {
  const samples = []; // [ms, tick]
  return {
    /** Records a frame at browser time `ms` after which the sim is at `tick`. */
    frame(ms, tick) {
      samples.push([ms, tick]);
      while (samples.length > 2 && ms - samples[0][0] > windowMs) samples.shift();
    },
    /** { fps, tickRate } over the window, or nulls before two frames. */
    rates() {
      if (samples.length < 2) return { fps: null, tickRate: null };
      const [t0, k0] = samples[0];
      const [t1, k1] = samples[samples.length - 1];
      const span = (t1 - t0) / 1000;
      if (!(span > 0)) return { fps: null, tickRate: null };
      return { fps: (samples.length - 1) / span, tickRate: (k1 - k0) / span };
    },
    clear() {
      samples.length = 0;
    },
  };
}

/**
 * Text readouts at most every `periodMs` of browser time (cheap, and still
 * legible): the returned `(ms) => void` calls `readout()` when `periodMs` or
 * more has passed since its last call, or when `ms` is earlier than that
 * (a reset, a new manual timeline), and on its first call.
 * @param {number} periodMs
 * @param {() => void} readout
 */
export function throttledReadout(periodMs, readout) {
  let last = -Infinity;
  return (ms) => {
    if (!(ms - last < periodMs) || ms < last) {
      readout();
      last = ms;
    }
  };
}
