/**
 * A small seeded generator (mulberry32): the sample, the stand-ins' latencies and their faults are
 * reproducible run after run, which a demo and its tests need and `Math.random` cannot give.
 */
export interface Random {
  /** Uniform in [0, 1). */
  readonly next: () => number
}

export const make = (seed: number): Random => {
  let state = seed >>> 0
  return {
    next: () => {
      state = (state + 0x6D2B79F5) >>> 0
      let t = state
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
  }
}

/** A standard normal variate (Box–Muller). */
export const normal = (random: Random): number => {
  const u = Math.max(random.next(), Number.EPSILON)
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next())
}
