/** @internal */
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Duration from "effect/Duration"
import type * as Api from "../ProviderStats.js"

/**
 * Per second, the rate of the limit with the shortest window: the one a batch meets first.
 *
 * @internal
 */
export const shortestWindowRate = (limiter: RateLimiter.RateLimiter): number => {
  let shortest = limiter.limits[0]
  for (const limit of limiter.limits) {
    if (Duration.lessThan(limit.window, shortest.window)) shortest = limit
  }
  return (shortest.limit * 1000) / Duration.toMillis(shortest.window)
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

/** @internal */
export const ms = (millis: number): string =>
  millis >= 1000 ? `${Number((millis / 1000).toFixed(2))} s` : `${Number(millis.toFixed(1))} ms`

/** @internal */
export const percent = (share: number): string => `${Math.round(share * 100)} %`

const windowNames: ReadonlyArray<readonly [number, string]> = [
  [1_000, "s"],
  [60_000, "min"],
  [3_600_000, "h"],
  [86_400_000, "day"]
]

/** `tokens/min`, `requests/s`, `tokens/10 s`: a limit named by its dimension and window. */
const limitLabel = (load: Api.DimensionLoad): string => {
  const millis = Duration.toMillis(load.window)
  const named = windowNames.find(([m]) => m === millis)
  return `${load.dimension}/${named === undefined ? ms(millis) : named[1]}`
}

/** The limit whose dimension is used nearest its rate, and that share. */
const bindingLimit = (
  loads: ReadonlyArray<Api.DimensionLoad> | undefined
): { readonly load: Api.DimensionLoad; readonly share: number } | undefined => {
  let best: { readonly load: Api.DimensionLoad; readonly share: number } | undefined
  for (const load of loads ?? []) {
    // the units the window holds at that rate, over what of the window the rate was seen
    const window = Duration.toMillis(load.window)
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
const limiterVerdict = (input: Api.VerdictInput, evidence: string): Api.Verdict => {
  const binding = bindingLimit(input.dimensions)
  if (binding !== undefined) {
    const label = limitLabel(binding.load)
    const used = `${binding.load.dimension} used at ${percent(binding.share)} of ${binding.load.limit} per ${
      ms(Duration.toMillis(binding.load.window))
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

/** @internal */
export const verdict = (input: Api.VerdictInput): Api.Verdict => {
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
