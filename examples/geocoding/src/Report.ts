/**
 * The end-of-run table, per provider: requests, achieved rate against the quota, the call's p50/p95
 * (to the end of its body: the time it holds a permit, what the bulkhead is sized by) and its p50 to
 * the headers, mean permit wait, mean limiter wait, 429s, refusals passed on to the next provider,
 * and the binding bound (the provider's verdict on the run's figures, with its reason underneath).
 */
import { Provider, type ProviderRecording } from "@sluice/provider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Calls } from "./Calls.js"
import { clientLimit, type Geocoder } from "./providers/Geocoder.js"
import type { Router } from "./Router.js"

export interface ProviderReport {
  readonly name: string
  /** The provider's quota (per second) and what the client allows itself under the margin. */
  readonly quota: number
  readonly clientRate: number
  readonly permits: number
  readonly permitsReason: string
  readonly burst: number
  readonly burstReason: string
  readonly requests: number
  /** Responses per second over the span from the first to the last response. */
  readonly achievedRate: number
  /** The call, from its request to the end of its body. */
  readonly p50Millis: number
  readonly p95Millis: number
  /** The call to its response's headers. */
  readonly headersP50Millis: number
  readonly permitWaitMillis: number
  readonly limiterWaitMillis: number
  readonly tooManyRequests: number
  readonly refused: number
  readonly refusals: Readonly<Record<string, number>>
  readonly verdict: Provider.Verdict
  /** The provider's recording, for the HTML report (`--report`). */
  readonly recording?: ProviderRecording.Recording | undefined
}

/**
 * The provider's rule on the run's own rate, the one the table shows: the rate of the last starts
 * alone reads a batch's tail, which slows as the rows run out, as a queue behind slow calls
 * ("bulkhead") while the run held 94 % of its quota.
 */
export const runVerdict = (
  stats: Pick<
    Provider.Stats,
    "attempts" | "upstreamErrors" | "storeErrors" | "permitWait" | "limiterWait" | "callTime"
  >,
  achievedRate: number,
  clientRate: number
): Provider.Verdict =>
  Provider.verdict({
    attempts: stats.attempts,
    upstreamErrors: stats.upstreamErrors,
    storeErrors: stats.storeErrors,
    permitWait: stats.permitWait,
    limiterWait: stats.limiterWait,
    callTime: stats.callTime,
    startRate: achievedRate,
    limiterRate: clientRate
  })

export const collect = (geocoders: ReadonlyArray<Geocoder>, router: Router) =>
  Effect.gen(function*() {
    const calls = yield* Calls
    const refusals = router.refusals()
    return yield* Effect.forEach(geocoders, (geocoder) =>
      Effect.gen(function*() {
        const stats = yield* geocoder.provider.stats
        const recording = yield* geocoder.provider.recording
        const seen = yield* calls.stats(geocoder.origin)
        const limit = clientLimit(geocoder.settings)
        const reasons = Object.fromEntries(refusals.get(geocoder.name) ?? new Map<string, number>())
        const span = (seen.lastAt - seen.firstAt) / 1000
        const achievedRate = span > 0 ? (seen.responses - 1) / span : 0
        const clientRate = limit.limit / Duration.toSeconds(limit.window)
        const report: ProviderReport = {
          name: geocoder.name,
          quota: geocoder.settings.rate,
          clientRate,
          permits: geocoder.settings.permits,
          permitsReason: geocoder.settings.permitsReason,
          burst: geocoder.settings.burst,
          burstReason: geocoder.settings.burstReason,
          requests: seen.responses,
          achievedRate,
          p50Millis: seen.p50Millis,
          p95Millis: seen.p95Millis,
          headersP50Millis: seen.headersP50Millis,
          permitWaitMillis: stats.permitWait.meanMillis,
          limiterWaitMillis: stats.limiterWait.meanMillis,
          tooManyRequests: seen.tooManyRequests,
          refused: Object.values(reasons).reduce((a, b) => a + b, 0),
          refusals: reasons,
          verdict: runVerdict(stats, achievedRate, clientRate),
          recording
        }
        return report
      }))
  })

const rate = (x: number) => (x >= 10 ? x.toFixed(0) : x.toFixed(1))
const millis = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x >= 10 ? 0 : 1)} ms`)

/** Left-aligned first column, right-aligned figures. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

export const render = (reports: ReadonlyArray<ProviderReport>): string => {
  const rows = reports.map((r) => [
    r.name,
    String(r.requests),
    `${rate(r.achievedRate)} / ${rate(r.quota)}/s`,
    millis(r.p50Millis),
    millis(r.p95Millis),
    millis(r.headersP50Millis),
    millis(r.permitWaitMillis),
    millis(r.limiterWaitMillis),
    String(r.tooManyRequests),
    String(r.refused),
    r.verdict.binding
  ])
  const header = [
    "provider",
    "requests",
    "rate / quota",
    "call p50",
    "call p95",
    "headers p50",
    "permit wait",
    "limiter wait",
    "429s",
    "passed on",
    "binding"
  ]
  // one line per verdict; the sizing and the refusals apart, under their own heading
  const reasons = reports.map((r) => `  ${r.name}: ${r.verdict.binding}: ${r.verdict.reason}`)
  const sizing = reports.map((r) => {
    const refused = Object.entries(r.refusals).map(([reason, n]) => `${reason} ${n}`).join(", ")
    return `  ${r.name}: permits ${r.permits} (${r.permitsReason}); client limit ${rate(r.clientRate)}/s under the ${
      rate(r.quota)
    }/s quota, burst ${r.burst} (${r.burstReason})${refused === "" ? "" : `; passed on: ${refused}`}`
  })
  return [table(header, rows), "", "binding bound, per provider:", ...reasons, "", "sizing, per provider:", ...sizing]
    .join("\n")
}
