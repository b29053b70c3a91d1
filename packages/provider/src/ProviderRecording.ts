/**
 * A provider's run as time series: what it started, waited for, held and got back, per time
 * bucket, and the waits as histograms over the whole run. Off by default (`recording` in the
 * provider's options); read with `provider.recording`, plain data a report renders
 * (`@sluice/report`).
 *
 * Memory is flat on any run length: at most `maxBuckets` buckets per series; when a run outgrows
 * them, neighbouring buckets merge and the bucket doubles (sums add, maxima take the larger), so
 * the whole run stays in view at a coarser step.
 *
 * @since 0.4.0
 */
import type * as Duration from "effect/Duration"
import type { Outcome } from "./ProviderStats.js"

/**
 * What a provider records; `true` takes the defaults.
 *
 * @since 0.4.0
 * @category models
 */
export interface Options {
  /** The first bucket's width, doubled each time the run outgrows `maxBuckets`. Default 1 second. */
  readonly bucket?: Duration.DurationInput | undefined
  /** Buckets per series, an integer ≥ 2. Default 512. */
  readonly maxBuckets?: number | undefined
}

/**
 * One phase's times per bucket, by the instant the phase ended (a wait by its grant): how many,
 * their mean and their maximum, in milliseconds (0 where none ended).
 *
 * @since 0.4.0
 * @category models
 */
export interface TimeSeries {
  readonly count: ReadonlyArray<number>
  readonly meanMillis: ReadonlyArray<number>
  readonly maxMillis: ReadonlyArray<number>
}

/**
 * A phase's times over the whole run: `counts[i]` fell at or below `boundsMillis[i]` (and above the
 * bound before it); the last count is everything above the last bound. The first bound is 0: a
 * wait of exactly nothing is most waits of an idle provider.
 *
 * @since 0.4.0
 * @category models
 */
export interface Histogram {
  readonly boundsMillis: ReadonlyArray<number>
  readonly counts: ReadonlyArray<number>
}

/**
 * A limit of a limiter that names dimensions, and the units its dimension was charged per bucket
 * (estimates at the start, corrections when the call settled, at their instants).
 *
 * @since 0.4.0
 * @category models
 */
export interface DimensionSeries {
  readonly dimension: string
  readonly limit: number
  readonly windowMillis: number
  readonly units: ReadonlyArray<number>
  /** Units estimated by the starts, and the corrections their settlements made (actual − estimate). */
  readonly estimated: number
  readonly corrected: number
  /** The corrections' sizes, summed: `misestimated / estimated` is the estimate's mean error. */
  readonly misestimated: number
}

/**
 * A provider's recording: bucket `i` covers `[startMillis + i × bucketMillis, + bucketMillis)`,
 * on the provider's `Clock` (epoch milliseconds, or the `TestClock`'s).
 *
 * @since 0.4.0
 * @category models
 */
export interface Recording {
  readonly provider: string
  /** The instant of the first event recorded; `undefined` before any. */
  readonly startMillis: number | undefined
  readonly bucketMillis: number
  /** Buckets in use: the length of every series. */
  readonly buckets: number
  /** The bulkhead's permits when read. */
  readonly permits: number
  /** The rate of the limiter's shortest-window limit, per second; absent without a limiter. */
  readonly limiterRate: number | undefined
  /** Attempt starts (the call itself, past both waits) per bucket. */
  readonly starts: ReadonlyArray<number>
  /** Attempts after a call's first, per bucket, by when they were queued. */
  readonly retries: ReadonlyArray<number>
  /** Attempts the upstream pushed back on (`isUpstreamError`: 429s, 5xx), per bucket. */
  readonly upstreamErrors: ReadonlyArray<number>
  /** Pauses of the limiter asked by the upstream (an error carrying a `retryAfter` duration), per bucket, and their length. */
  readonly pauses: ReadonlyArray<number>
  readonly pausedMillis: ReadonlyArray<number>
  /** Permits held per bucket: the time-weighted mean and the most at once. */
  readonly permitsHeld: { readonly mean: ReadonlyArray<number>; readonly max: ReadonlyArray<number> }
  readonly permitWait: TimeSeries
  readonly limiterWait: TimeSeries
  readonly callTime: TimeSeries
  /** Calls ended per bucket, by how they ended (only outcomes seen). */
  readonly outcomes: Partial<Record<Outcome, ReadonlyArray<number>>>
  /** Per limit of a limiter that names dimensions. */
  readonly dimensions: ReadonlyArray<DimensionSeries>
  readonly histograms: {
    readonly permitWait: Histogram
    readonly limiterWait: Histogram
    readonly callTime: Histogram
  }
}

/**
 * Per bucket, `counts[i]` per second of the bucket's width: starts per second from `starts`.
 *
 * @since 0.4.0
 * @category utils
 */
export const perSecond = (recording: Recording, counts: ReadonlyArray<number>): Array<number> =>
  counts.map((n) => (n * 1000) / recording.bucketMillis)
