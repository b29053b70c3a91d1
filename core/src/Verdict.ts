/**
 * The verdict on a provider's recent calls (which bound binds, and why, in one sentence with the
 * numbers), and the figures provider messages print, on milliseconds: both Effect lines write the
 * same sentences, whatever each major's `Duration.format` does.
 *
 * @since 0.1.0
 */
import { formatDuration } from "./OptionMessages.js"

/**
 * Which bound binds: `limiter` (the quota), `bulkhead` (the permits), `upstream` (its pushback),
 * `store` (the limiter's store fails to decide) or `none`.
 *
 * @since 0.1.0
 * @category models
 */
export type Binding = "limiter" | "bulkhead" | "upstream" | "store" | "none"

/**
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly binding: Binding
  /** One sentence with the numbers. */
  readonly reason: string
  /** With `binding: "limiter"`: the limit that binds, as `dimension/window` (`"tokens/min"`). */
  readonly dimension?: string | undefined
}

/**
 * What the verdict reads of a phase over the recent attempts, in milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface PhaseTimes {
  readonly count: number
  readonly meanMillis: number
  readonly p95Millis: number
}

/**
 * One limit that names a dimension, and the rate its dimension was used at lately; `spanMillis`
 * is how long that rate was measured over (default: the window).
 *
 * @since 0.1.0
 * @category models
 */
export interface DimensionLoad {
  readonly dimension: string
  readonly limit: number
  readonly windowMillis: number
  readonly ratePerSecond: number
  readonly spanMillis?: number | undefined
}

/**
 * What the verdict reads: attempts and their pushback, the phase times, the rate calls started at
 * and the limiter's (its limit with the shortest window, per second), and the limits that name
 * dimensions.
 *
 * @since 0.1.0
 * @category models
 */
export interface VerdictInput {
  readonly attempts: number
  readonly upstreamErrors: number
  /** Default 0. */
  readonly storeErrors?: number | undefined
  readonly permitWait: PhaseTimes
  readonly limiterWait: PhaseTimes
  readonly callTime: PhaseTimes
  readonly startRate?: number | undefined
  readonly limiterRate?: number | undefined
  readonly dimensions?: ReadonlyArray<DimensionLoad> | undefined
}

/**
 * Per second, the rate of the limit with the shortest window: the one a batch meets first.
 *
 * @since 0.1.0
 * @category verdict
 */
export const shortestWindowRate = (
  limits: ReadonlyArray<{ readonly limit: number; readonly windowMillis: number }>
): number => {
  let shortest = limits[0]
  for (const limit of limits) {
    if (limit.windowMillis < shortest.windowMillis) shortest = limit
  }
  return (shortest.limit * 1000) / shortest.windowMillis
}

/** Upstream pushback on at least this share of attempts is what binds, whatever the waits say. */
const UPSTREAM_SHARE = 0.05
/** Permits held asleep in the limiter for at least half their time: the quota binds. */
const LIMITER_SHARE = 0.5
/** A permit wait of a tenth of the call or more is a queue behind slow calls, not noise. */
const PERMIT_WAIT_SHARE = 0.1
/** Calls starting at this share of the limiter's rate or more: the quota binds. */
const QUOTA_RATE_SHARE = 0.9
/** Fewer attempts than this say too little to tell one wait from another. */
const MIN_ATTEMPTS = 20

const perSecond = (rate: number): string => `${Number(rate.toFixed(rate >= 100 ? 0 : 1))}/s`

/**
 * Milliseconds as the verdict writes them: `12.5 ms` below a second, `1.25 s` from one.
 *
 * @since 0.1.0
 * @category formatting
 */
export const ms = (millis: number): string =>
  millis >= 1000 ? `${Number((millis / 1000).toFixed(2))} s` : `${Number(millis.toFixed(1))} ms`

/**
 * A share (0 to 1) as a whole percentage: `42 %`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const percent = (share: number): string => `${Math.round(share * 100)} %`

const windowNames: ReadonlyArray<readonly [number, string]> = [
  [1_000, "s"],
  [60_000, "min"],
  [3_600_000, "h"],
  [86_400_000, "day"]
]

/** `tokens/min`, `requests/s`, `tokens/10 s`: a limit named by its dimension and window. */
const limitLabel = (load: DimensionLoad): string => {
  const millis = load.windowMillis
  const named = windowNames.find(([m]) => m === millis)
  return `${load.dimension}/${named === undefined ? ms(millis) : named[1]}`
}

/** The limit whose dimension is used nearest its rate, and that share. */
const bindingLimit = (
  loads: ReadonlyArray<DimensionLoad> | undefined
): { readonly load: DimensionLoad; readonly share: number } | undefined => {
  let best: { readonly load: DimensionLoad; readonly share: number } | undefined
  for (const load of loads ?? []) {
    // the units the window holds at that rate, over what of the window the rate was seen
    const window = load.windowMillis
    const seen = Math.min(window, load.spanMillis ?? window)
    const share = load.limit > 0 ? (load.ratePerSecond * seen) / 1000 / load.limit : 0
    if (best === undefined || share > best.share) best = { load, share }
  }
  return best
}

const HEALTHY = "the healthy state for a batch; more quota or a second provider helps, more permits do not"
const PACED = "a larger burst or limit helps, more permits do not"

/**
 * A `limiter` verdict: one finding, with its numbers. How near its quota the limiter runs is read
 * from the limit used nearest its rate (limits that name dimensions), else from the start rate
 * against the limiter's; "saturated" is said only at 90 % or more. Below that the limiter holds
 * the calls back (a burst spaced out at its pace) while the quota is not used up, which is
 * another finding with another remedy.
 */
const limiterVerdict = (input: VerdictInput, evidence: string): Verdict => {
  const binding = bindingLimit(input.dimensions)
  if (binding !== undefined) {
    const label = limitLabel(binding.load)
    const used = `${binding.load.dimension} used at ${percent(binding.share)} of ${binding.load.limit} per ${
      ms(binding.load.windowMillis)
    } lately (${evidence})`
    return {
      binding: "limiter",
      dimension: label,
      reason: binding.share >= QUOTA_RATE_SHARE
        ? `${label} saturated: ${used}: ${HEALTHY}`
        : `the limiter paces the calls below its quota: ${used}: ${PACED}`
    }
  }
  const { limiterRate, startRate } = input
  if (limiterRate !== undefined && startRate !== undefined && limiterRate > 0) {
    const share = startRate / limiterRate
    const started = `calls started at ${perSecond(startRate)}, ${percent(Math.min(1, share))} of the limiter's ${
      perSecond(limiterRate)
    } (${evidence})`
    return {
      binding: "limiter",
      reason: share >= QUOTA_RATE_SHARE
        ? `the quota is saturated: ${started}: ${HEALTHY}`
        : `the limiter paces the calls below its quota: ${started}: ${PACED}`
    }
  }
  return { binding: "limiter", reason: `the quota is saturated: ${evidence}: ${HEALTHY}` }
}

/**
 * The verdict: a failing limiter store first (5 % of attempts or more), then upstream pushback
 * (5 % or more), then how the time a permit is held splits between limiter sleep and the call
 * (mostly asleep, or starts at 90 % of the limiter's rate or more: `limiter`), and only then a
 * permit wait of a tenth of the call or more: `bulkhead`.
 *
 * @since 0.1.0
 * @category verdict
 */
export const verdict = (input: VerdictInput): Verdict => {
  const { attempts, callTime, limiterWait, permitWait, upstreamErrors } = input
  if (attempts === 0) return { binding: "none", reason: "no calls yet" }
  const storeErrors = input.storeErrors ?? 0
  const storeShare = storeErrors / attempts
  if (storeErrors > 0 && storeShare >= UPSTREAM_SHARE) {
    return {
      binding: "store",
      reason: `${storeErrors} of ${attempts} attempts (${
        percent(storeShare)
      }) failed because the rate limiter's store could not decide: those calls never reached the upstream; check the store (Redis) and its fail mode`
    }
  }
  const upstreamShare = upstreamErrors / attempts
  if (upstreamErrors > 0 && upstreamShare >= UPSTREAM_SHARE) {
    return {
      binding: "upstream",
      reason: `${upstreamErrors} of ${attempts} attempts (${
        percent(upstreamShare)
      }) met upstream pushback (429/5xx): the provider refuses, act on its quota or back off`
    }
  }
  const waits = `permit wait mean ${ms(permitWait.meanMillis)}, limiter wait mean ${
    ms(limiterWait.meanMillis)
  }, call mean ${ms(callTime.meanMillis)}`
  if (attempts < MIN_ATTEMPTS) {
    return {
      binding: "none",
      reason: `too little data to judge: ${attempts} attempt${
        attempts === 1 ? "" : "s"
      }, fewer than the ${MIN_ATTEMPTS} a verdict needs (${waits})`
    }
  }
  const held = limiterWait.meanMillis + callTime.meanMillis
  const limiterShare = held > 0 ? limiterWait.meanMillis / held : 0
  if (limiterShare >= LIMITER_SHARE) {
    return limiterVerdict(
      input,
      `permits held ${percent(limiterShare)} asleep in the limiter, mean ${ms(limiterWait.meanMillis)} of ${ms(held)}`
    )
  }
  const { limiterRate, startRate } = input
  if (
    limiterRate !== undefined && startRate !== undefined && limiterRate > 0 &&
    startRate >= QUOTA_RATE_SHARE * limiterRate
  ) {
    return limiterVerdict(
      input,
      `limiter wait mean ${ms(limiterWait.meanMillis)}, call mean ${ms(callTime.meanMillis)}`
    )
  }
  if (permitWait.meanMillis > 0 && permitWait.meanMillis >= PERMIT_WAIT_SHARE * callTime.meanMillis) {
    // a batch with more callers than permits queues for them however healthy the provider: the
    // wait alone cannot tell a slowed provider, the call time against its usual latency does
    return {
      binding: "bulkhead",
      reason: `permits bind: callers waited a mean ${ms(permitWait.meanMillis)} (p95 ${
        ms(permitWait.p95Millis)
      }) for a permit, held ${percent(1 - limiterShare)} by the call (mean ${
        ms(callTime.meanMillis)
      }): more permits help, unless that call time is above the provider's usual (then it slowed)`
    }
  }
  return { binding: "none", reason: `nothing binds: ${waits}` }
}

/**
 * A duration of `millis` as messages write it: `2s`, `1m 30s`, `1ms 500000ns`, `0` (also for
 * NaN and below zero), `Infinity`: what Effect 3's `Duration.format` wrote for `Duration.millis`,
 * ours so that both lines print the same.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatMillis = (millis: number): string =>
  millis === Number.POSITIVE_INFINITY
    ? "Infinity"
    : millis > 0
    ? formatDuration(BigInt(Math.round(millis * 1_000_000)))
    : "0"

/**
 * `1 attempt`, `2 attempts`; `words` for an irregular plural (`retries`).
 *
 * @since 0.1.0
 * @category formatting
 */
export const plural = (n: number, word: string, words = `${word}s`): string => `${n} ${n === 1 ? word : words}`
