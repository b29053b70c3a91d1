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
 * @since 2.0.0
 */
import * as Core from "@sluice/core/Recording"
import type { Recording } from "@sluice/core/Recording"
import type * as Duration from "effect/Duration"

/**
 * What a provider records; `true` takes the defaults.
 *
 * @since 2.0.0
 * @category models
 */
export interface Options {
  /** The first bucket's width, doubled each time the run outgrows `maxBuckets`. Default 1 second. */
  readonly bucket?: Duration.Input | undefined
  /** Buckets per series, an integer ≥ 2. Default 512. */
  readonly maxBuckets?: number | undefined
}

/**
 * The recording's data, from `@sluice/core` (the same on both Effect lines).
 *
 * @since 2.0.0
 * @category models
 */
export type { DimensionSeries, Histogram, Recording, TimeSeries } from "@sluice/core/Recording"

/**
 * Per bucket, `counts[i]` per second of the bucket's width: starts per second from `starts`.
 *
 * @since 2.0.0
 * @category utils
 */
export const perSecond: (recording: Recording, counts: ReadonlyArray<number>) => Array<number> = Core.perSecond
