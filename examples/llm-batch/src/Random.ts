/**
 * A small seeded generator (mulberry32): the sample prompts and the stand-in's completion lengths are
 * the same run after run, which a demo and its tests need and `Math.random` cannot give.
 */
export type Random = () => number

/** Uniform in [0, 1). */
export const make = (seed: number): Random => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer in [min, max]. */
export const between = (random: Random, min: number, max: number): number =>
  min + Math.floor(random() * (max - min + 1))
