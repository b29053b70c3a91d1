/**
 * A run report: one or more providers' recordings (`recording` in a provider's options), and
 * the upstream's own counts when known, rendered into one self-contained HTML file. The page
 * needs no network to be read: its plotting library (uPlot) and its data are inlined.
 *
 * Per provider: starts per second against the quota, permits held against the permits, the two
 * waits over time and as histograms side by side (permit wait rising: the provider slowed or the
 * permits are too few; limiter wait rising: the quota is saturated), 429s and pauses marked on
 * every time axis, each dimension's use against its limit, and the verdict in one sentence.
 *
 * @example
 * ```ts
 * // not type-checked: needs a provider made with `recording: true`
 * const recording = yield* provider.recording
 * const stats = yield* provider.stats
 * yield* Report.write("run.html", {
 *   title: "geocoding run",
 *   providers: [{ recording, verdict: stats.verdict }]
 * })
 * ```
 *
 * @since 0.4.0
 */
import type { ProviderRecording, ProviderStats } from "@sluice/provider"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as data from "./internal/data.js"
import * as html from "./internal/html.js"

/**
 * What the upstream itself counted (a stand-in, or a provider's dashboard), shown beside the
 * client's own figures.
 *
 * @since 0.4.0
 * @category models
 */
export interface ServerSide {
  readonly requests: number
  /** Requests answered 429. */
  readonly rateLimited: number
  /** The most arrivals it accepted within one window, and what one window admits (limit + burst). */
  readonly peakInWindow?: number | undefined
  readonly admitsPerWindow?: number | undefined
  /** Arrivals per bucket, on the same clock as the recording (epoch milliseconds). */
  readonly arrivals?: {
    readonly startMillis: number
    readonly bucketMillis: number
    readonly counts: ReadonlyArray<number>
  } | undefined
}

/**
 * One provider of the report.
 *
 * @since 0.4.0
 * @category models
 */
export interface ProviderInput {
  readonly recording: ProviderRecording.Recording
  /** The verdict shown under the provider's name (`stats.verdict`, or the run's own). */
  readonly verdict?: ProviderStats.Verdict | undefined
  /** The upstream's quota per second, when it differs from the client's limit (a margin under it). */
  readonly quotaPerSecond?: number | undefined
  readonly server?: ServerSide | undefined
  /** The bulkhead's lanes as the provider saw them (`stats.lanes`): one line each. */
  readonly lanes?: ReadonlyArray<ProviderStats.LaneSummary> | undefined
}

/**
 * @since 0.4.0
 * @category models
 */
export interface Input {
  readonly title: string
  /** Lines under the title: what ran, against what. */
  readonly notes?: ReadonlyArray<string> | undefined
  readonly providers: ReadonlyArray<ProviderInput>
}

/**
 * One series of a plot: its values per x, and how it is drawn (a dash or a marker on top of its
 * colour, so that a greyscale print still tells series apart).
 *
 * @since 0.4.0
 * @category models
 */
export interface Series {
  readonly label: string
  readonly values: ReadonlyArray<number | null>
  readonly style: "solid" | "dashed" | "dotted" | "points" | "bars"
  readonly color: string
}

/**
 * One plot: x in seconds since the run began (or bucket indexes, for a histogram, with `xTicks`).
 *
 * @since 0.4.0
 * @category models
 */
export interface Plot {
  readonly id: string
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly x: ReadonlyArray<number>
  readonly series: ReadonlyArray<Series>
  /** Histograms: the label of each x. */
  readonly xTicks?: ReadonlyArray<string> | undefined
  /** Time plots carry the provider's 429s and pauses. */
  readonly markers: boolean
}

/**
 * One provider's part of the page.
 *
 * @since 0.4.0
 * @category models
 */
export interface Section {
  readonly provider: string
  readonly verdict: ProviderStats.Verdict | undefined
  /** Label and value, in the order shown. */
  readonly facts: ReadonlyArray<readonly [string, string]>
  readonly plots: ReadonlyArray<Plot>
  /** 429s (seconds since the run began, count) and pauses (start and end, in seconds). */
  readonly upstream: ReadonlyArray<readonly [number, number]>
  readonly pauses: ReadonlyArray<readonly [number, number]>
}

/**
 * What the page draws: the data of every plot, computed here (and tested) rather than in the page.
 *
 * @since 0.4.0
 * @category models
 */
export interface Model {
  readonly title: string
  readonly notes: ReadonlyArray<string>
  readonly sections: ReadonlyArray<Section>
}

/**
 * The report could not be written: uPlot's files could not be read, or the file not written.
 * The message names the path and the reason.
 *
 * @since 0.4.0
 * @category errors
 */
export class ReportError extends Data.TaggedError("ReportError")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `could not ${this.reason} ${this.path}`
  }
  override toString(): string {
    return `ReportError: ${this.message}`
  }
}

/**
 * The plots' data, per provider: pure, for tests and for other renderers.
 *
 * @since 0.4.0
 * @category constructors
 */
export const model: (input: Input) => Model = data.model

/**
 * The page: one HTML document with uPlot, its stylesheet and the data inlined, every text
 * escaped (a provider named `</script>` stays text).
 *
 * @since 0.4.0
 * @category rendering
 */
export const render: (input: Input) => Effect.Effect<string, ReportError> = html.render

/**
 * Renders the page and writes it to `path`.
 *
 * @since 0.4.0
 * @category rendering
 */
export const write: (path: string, input: Input) => Effect.Effect<void, ReportError> = html.write
