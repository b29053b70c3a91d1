/**
 * What a provider reports about itself: counters, phase times over its recent attempts, and the
 * verdict on which bound binds (`provider.stats`), with the verdict's rule as a function.
 *
 * @since 2.0.0
 */
import type { Bulkhead } from "@sluice/bulkhead"
import type * as Duration from "effect/Duration"
import * as internal from "./internal/verdict.js"

/**
 * How a call ended, as counted in `sluice_provider_outcomes_total` and `Stats.outcomes`.
 *
 * @since 2.0.0
 * @category models
 */
export type Outcome =
  | "success"
  | "call_error"
  | "call_timeout"
  | "total_timeout"
  | "permit_wait_timeout"
  | "bulkhead_full"
  | "rate_limited"
  | "circuit_open"
  | "retry_budget_exhausted"
  | "store_error"
  | "closed"
  | "interrupted"

/**
 * @since 2.0.0
 * @category models
 */
export type CircuitState = "closed" | "open" | "half-open"

/**
 * Mean, median and p95 of one phase over the last attempts (`sampleSize`), in milliseconds.
 *
 * @since 2.0.0
 * @category models
 */
export interface PhaseSummary {
  readonly count: number
  readonly meanMillis: number
  readonly p50Millis: number
  readonly p95Millis: number
}

/**
 * Which bound binds:
 * - `limiter`: permits are held mostly asleep in the limiter: the quota is saturated (healthy for a batch);
 * - `bulkhead`: permits are held mostly by the call while callers wait for permits: too few permits for
 *   the call time, or the provider slowed (a call time above its usual latency);
 * - `upstream`: the upstream pushes back (429s, 5xx);
 * - `store`: the limiter's store fails to decide (`RateLimiterStoreError`): the calls never reach the upstream;
 * - `none`: nothing waits.
 *
 * @since 2.0.0
 * @category models
 */
export type Binding = "limiter" | "bulkhead" | "upstream" | "store" | "none"

/**
 * @since 2.0.0
 * @category models
 */
export interface Verdict {
  readonly binding: Binding
  /** One sentence with the numbers. */
  readonly reason: string
  /**
   * With `binding: "limiter"` and a limiter whose limits name dimensions: the limit that binds,
   * as `dimension/window` (`"tokens/min"`), the one whose dimension is used nearest its rate.
   *
   * @since 2.0.0
   */
  readonly dimension?: string | undefined
}

/**
 * One limit of a limiter with named dimensions, and the rate its dimension was used at lately
 * (units charged per second by the recent starts, their settled usage included).
 *
 * @since 2.0.0
 * @category models
 */
export interface DimensionLoad {
  readonly dimension: string
  readonly limit: number
  readonly window: Duration.Duration
  readonly ratePerSecond: number
  /**
   * How long the rate was measured over: a window longer than that has seen only this much of
   * the rate (a day's quota is not used up by a minute at a day's average rate). Default: the
   * window.
   */
  readonly spanMillis?: number | undefined
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Stats {
  readonly provider: string
  /** Calls finished. */
  readonly calls: number
  /** Attempts started (a retried call makes several). */
  readonly attempts: number
  /** Calls in progress. */
  readonly inFlight: number
  readonly outcomes: { readonly [K in Outcome]: number }
  /** Call failures that `isUpstreamError` classified as upstream pushback. */
  readonly upstreamErrors: number
  /** Attempts that failed because the limiter's store could not decide. */
  readonly storeErrors: number
  readonly permitWait: PhaseSummary
  readonly limiterWait: PhaseSummary
  readonly callTime: PhaseSummary
  readonly circuit: CircuitState
  readonly bulkhead: Bulkhead.Stats
  readonly verdict: Verdict
  /**
   * For a bulkhead with `lanes`: each lane's attempts, permit wait and share of the permits.
   *
   * @since 2.0.0
   */
  readonly lanes?: ReadonlyArray<LaneSummary> | undefined
}

/**
 * One bulkhead lane as the provider saw it: how long its attempts waited for their permits, and
 * the share of the permits it got, in one sentence (`reason`) with the numbers.
 *
 * @since 2.0.0
 * @category models
 */
export interface LaneSummary {
  readonly lane: string
  /** Attempts granted a permit in this lane since the provider was made. */
  readonly attempts: number
  /** The permit wait of the lane's last attempts (`sampleSize`). */
  readonly permitWait: PhaseSummary
  /** The lane's share, 0 to 1, of the permits the bulkhead granted since it was made. */
  readonly share: number
  /**
   * Fair share, while the lane has callers waiting: its weight over the weights of the lanes with
   * callers waiting now, 0 to 1, what its share of the permits tends to under contention.
   */
  readonly weightShare?: number | undefined
  /** Callers waiting in the lane now. */
  readonly waiting: number
  /** One sentence with the numbers. */
  readonly reason: string
}

/** What the verdict reads of a phase: a `PhaseSummary` without its median. */
type PhaseTimes = Pick<PhaseSummary, "count" | "meanMillis" | "p95Millis">

/**
 * What the verdict reads.
 *
 * @since 2.0.0
 * @category models
 */
export interface VerdictInput {
  readonly attempts: number
  readonly upstreamErrors: number
  /** Attempts refused because the limiter's store failed (`RateLimiterStoreError`). Default 0. */
  readonly storeErrors?: number | undefined
  readonly permitWait: PhaseTimes
  readonly limiterWait: PhaseTimes
  readonly callTime: PhaseTimes
  /** Calls started per second over the recent attempts (those the phase summaries cover). */
  readonly startRate?: number | undefined
  /**
   * The rate of the limiter's limit with the shortest window (say 10 per second of "10 per second
   * and 1,000 per day"), per second; absent without a limiter.
   */
  readonly limiterRate?: number | undefined
  /**
   * Each limit of a limiter whose limits name dimensions, with its dimension's recent rate: a
   * `limiter` verdict names the one used nearest its rate ("tokens/min saturated").
   *
   * @since 2.0.0
   */
  readonly dimensions?: ReadonlyArray<DimensionLoad> | undefined
}

/**
 * The verdict on phase times: which bound binds, and why, in one sentence. A failing limiter store
 * (on 5 % of attempts or more) first: those calls never reached the upstream, so no wait explains
 * them. Then upstream pushback (429s, 5xx on 5 % of attempts or more). Then, since the limiter sits inside the bulkhead and a
 * quota-bound batch raises permit wait too, the verdict reads how the time a permit is held splits
 * between limiter sleep and the call: mostly asleep in the limiter is `limiter`. So are calls
 * starting at 90 % or more of the limiter's rate, however short the sleep (a burst absorbs it):
 * the quota binds even when the call holds the permit longer. Only then does a permit wait of a
 * tenth of the call or more read `bulkhead`.
 *
 * @since 2.0.0
 * @category stats
 */
export const verdict: (input: VerdictInput) => Verdict = internal.verdict
