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
export * as Report from "./Report.js"
