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
 * The recording's data and its recorder live here, shared by both Effect lines; each line's
 * `ProviderRecording` re-exports the data types and decodes its own options.
 *
 * @since 0.4.0
 */

/**
 * How a call ended: the provider's `ProviderStats.Outcome` on both lines.
 *
 * @since 0.4.0
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
 * Every outcome, in the order the stats and the metrics list them.
 *
 * @since 0.4.0
 * @category models
 */
export const outcomes: ReadonlyArray<Outcome> = [
  "success",
  "call_error",
  "call_timeout",
  "total_timeout",
  "permit_wait_timeout",
  "bulkhead_full",
  "rate_limited",
  "circuit_open",
  "retry_budget_exhausted",
  "store_error",
  "closed",
  "interrupted"
]

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

/**
 * Histogram bounds: 0, then 0.5 ms doubling to about 35 min (23 bounds): a geocoder's waits in
 * the low buckets, an LLM call's tens of seconds in the high ones, a day's quota pause past them.
 */
const BOUNDS: ReadonlyArray<number> = [0, ...Array.from({ length: 22 }, (_, i) => 0.5 * 2 ** i)]

const bucketOf = (millis: number): number => {
  if (millis <= 0) return 0
  // 0.5 × 2^(i-1) < millis ≤ 0.5 × 2^i, for i from 1
  const i = Math.ceil(Math.log2(millis / 0.5)) + 1
  return Math.min(Math.max(i, 1), BOUNDS.length)
}

/** Series merged by sum when buckets merge; the others (`MAX`) take the larger. */
const SUMS = [
  "starts",
  "retries",
  "upstream",
  "pauses",
  "pausedMillis",
  "permitWaitCount",
  "permitWaitSum",
  "limiterWaitCount",
  "limiterWaitSum",
  "callCount",
  "callSum",
  "heldIntegral"
] as const
const MAX = ["permitWaitMax", "limiterWaitMax", "callMax", "heldMax"] as const
type Field = typeof SUMS[number] | typeof MAX[number]

/**
 * The recorder of one provider: fixed arrays of `maxBuckets` per series, merged in pairs when the
 * run outgrows them (see `ProviderRecording`). Fed by the call's steps with their `Clock` instants.
 *
 * @since 0.4.0
 * @category constructors
 */
export class Recorder {
  private origin = Number.NaN
  private width: number
  private used = 0
  private readonly fields: Record<Field, Float64Array>
  private readonly outcomes = new Map<Outcome, Float64Array>()
  private readonly units = new Map<string, Float64Array>()
  private readonly estimated = new Map<string, number>()
  private readonly corrected = new Map<string, number>()
  private readonly misestimated = new Map<string, number>()
  private readonly histograms = {
    permitWait: new Float64Array(BOUNDS.length + 1),
    limiterWait: new Float64Array(BOUNDS.length + 1),
    callTime: new Float64Array(BOUNDS.length + 1)
  }
  /** Permits held now, and since when that count holds. */
  private held = 0
  private heldSince = Number.NaN

  constructor(
    bucketMillis: number,
    private readonly maxBuckets: number,
    readonly dimensions: ReadonlyArray<string>
  ) {
    this.width = bucketMillis
    const fields = {} as Record<Field, Float64Array>
    for (const field of [...SUMS, ...MAX]) fields[field] = new Float64Array(maxBuckets)
    this.fields = fields
    for (const dimension of dimensions) this.units.set(dimension, new Float64Array(maxBuckets))
  }

  /** The bucket of `now`, merging buckets until it fits; the first event sets the origin. */
  private index(now: number): number {
    if (Number.isNaN(this.origin)) this.origin = now
    // an instant before the origin (a clock set back) counts in the first bucket
    let i = Math.max(0, Math.floor((now - this.origin) / this.width))
    while (i >= this.maxBuckets) {
      this.merge()
      i = Math.floor(i / 2)
    }
    if (i >= this.used) this.used = i + 1
    return i
  }

  private merge(): void {
    const n = this.maxBuckets
    const half = Math.ceil(n / 2)
    const pair = (array: Float64Array, combine: (a: number, b: number) => number) => {
      for (let k = 0; k < half; k++) array[k] = 2 * k + 1 < n ? combine(array[2 * k], array[2 * k + 1]) : array[2 * k]
      array.fill(0, half)
    }
    const add = (a: number, b: number) => a + b
    for (const field of SUMS) pair(this.fields[field], add)
    for (const field of MAX) pair(this.fields[field], Math.max)
    for (const array of this.outcomes.values()) pair(array, add)
    for (const array of this.units.values()) pair(array, add)
    this.width *= 2
    this.used = Math.ceil(this.used / 2)
  }

  /** The permits held so far, spread over the buckets since the count last changed. */
  private advance(now: number): void {
    if (Number.isNaN(this.heldSince)) {
      this.heldSince = now
      return
    }
    const to = this.index(now)
    let from = this.index(this.heldSince)
    let t = this.heldSince
    const { heldIntegral, heldMax } = this.fields
    while (from <= to) {
      const end = Math.min(now, this.origin + (from + 1) * this.width)
      heldIntegral[from] += this.held * Math.max(0, end - t)
      if (this.held > heldMax[from]) heldMax[from] = this.held
      t = end
      from++
    }
    this.heldSince = now
  }

  private timed(prefix: "permitWait" | "limiterWait" | "call", i: number, millis: number): void {
    this.fields[`${prefix}Count`][i]++
    this.fields[`${prefix}Sum`][i] += millis
    const max = this.fields[`${prefix}Max`]
    if (millis > max[i]) max[i] = millis
  }

  queued(now: number, attempt: number): void {
    const i = this.index(now)
    if (attempt > 1) this.fields.retries[i]++
  }

  granted(now: number, waited: number, permits: number): void {
    this.advance(now)
    this.held += permits
    const i = this.index(now)
    if (this.held > this.fields.heldMax[i]) this.fields.heldMax[i] = this.held
    this.timed("permitWait", i, waited)
    this.histograms.permitWait[bucketOf(waited)]++
  }

  released(now: number, permits: number): void {
    this.advance(now)
    this.held -= permits
  }

  passed(now: number, waited: number): void {
    this.timed("limiterWait", this.index(now), waited)
    this.histograms.limiterWait[bucketOf(waited)]++
  }

  started(now: number, cost: number | Readonly<Record<string, number>>): void {
    const i = this.index(now)
    this.fields.starts[i]++
    for (const dimension of this.dimensions) {
      const units = typeof cost === "number" ? cost : cost[dimension] ?? 0
      this.charge(dimension, i, units)
      this.estimated.set(dimension, (this.estimated.get(dimension) ?? 0) + units)
    }
  }

  called(now: number, took: number): void {
    this.timed("call", this.index(now), took)
    this.histograms.callTime[bucketOf(took)]++
  }

  /** A failed attempt: pushback when `upstream`, a pause when the error carries one. */
  failed(now: number, upstream: boolean, pauseMillis: number | undefined): void {
    const i = this.index(now)
    if (upstream) this.fields.upstream[i]++
    if (pauseMillis !== undefined) {
      this.fields.pauses[i]++
      this.fields.pausedMillis[i] += pauseMillis
    }
  }

  /** A settlement's correction on one dimension: actual − estimate. */
  settled(now: number, dimension: string, correction: number): void {
    if (!this.units.has(dimension) || correction === 0) return
    this.charge(dimension, this.index(now), correction)
    this.corrected.set(dimension, (this.corrected.get(dimension) ?? 0) + correction)
    this.misestimated.set(dimension, (this.misestimated.get(dimension) ?? 0) + Math.abs(correction))
  }

  private charge(dimension: string, i: number, units: number): void {
    const array = this.units.get(dimension)
    if (array !== undefined) array[i] += units
  }

  ended(now: number, outcome: Outcome): void {
    const i = this.index(now)
    let array = this.outcomes.get(outcome)
    if (array === undefined) {
      array = new Float64Array(this.maxBuckets)
      this.outcomes.set(outcome, array)
    }
    array[i]++
  }

  snapshot(
    now: number,
    provider: string,
    permits: number,
    limiterRate: number | undefined,
    limits: ReadonlyArray<{ readonly dimension: string; readonly limit: number; readonly windowMillis: number }>
  ): Recording {
    // the permits still held count up to now; none held, the run ends at its last event
    if (this.held > 0) this.advance(now)
    const n = this.used
    const list = (array: Float64Array): ReadonlyArray<number> => Array.from(array.subarray(0, n))
    const f = this.fields
    const series = (prefix: "permitWait" | "limiterWait" | "call"): TimeSeries => {
      const count = list(f[`${prefix}Count`])
      const sum = f[`${prefix}Sum`]
      return { count, meanMillis: count.map((c, i) => (c > 0 ? sum[i] / c : 0)), maxMillis: list(f[`${prefix}Max`]) }
    }
    const width = this.width
    const histogram = (counts: Float64Array): Histogram => ({ boundsMillis: BOUNDS, counts: Array.from(counts) })
    const outcomes: Partial<Record<Outcome, ReadonlyArray<number>>> = {}
    for (const [outcome, array] of this.outcomes) outcomes[outcome] = list(array)
    return {
      provider,
      startMillis: Number.isNaN(this.origin) ? undefined : this.origin,
      bucketMillis: width,
      buckets: n,
      permits,
      limiterRate,
      starts: list(f.starts),
      retries: list(f.retries),
      upstreamErrors: list(f.upstream),
      pauses: list(f.pauses),
      pausedMillis: list(f.pausedMillis),
      permitsHeld: { mean: list(f.heldIntegral).map((x) => x / width), max: list(f.heldMax) },
      permitWait: series("permitWait"),
      limiterWait: series("limiterWait"),
      callTime: series("call"),
      outcomes,
      dimensions: limits.filter((limit) => this.units.has(limit.dimension)).map((limit) => ({
        ...limit,
        units: list(this.units.get(limit.dimension) ?? new Float64Array(0)),
        estimated: this.estimated.get(limit.dimension) ?? 0,
        corrected: this.corrected.get(limit.dimension) ?? 0,
        misestimated: this.misestimated.get(limit.dimension) ?? 0
      })),
      histograms: {
        permitWait: histogram(this.histograms.permitWait),
        limiterWait: histogram(this.histograms.limiterWait),
        callTime: histogram(this.histograms.callTime)
      }
    }
  }
}
