/**
 * The end of a run: per dimension, what the batch achieved per window against the quota, the
 * busiest window (the client's view, and the stand-in's when this run started it), the 429s; the
 * estimates against the real usage; and the dimension that bound the run, with its reason.
 */
import { Provider } from "@sluice/provider"
import * as Duration from "effect/Duration"
import * as Lanes from "./Lanes.js"
import * as OpenAi from "./OpenAi.js"
import type * as Run from "./Run.js"

export interface Dimension {
  readonly name: "requests" | "tokens"
  readonly quota: number
  readonly burst: number
  /** What the client allowed itself: the quota less the margin. */
  readonly clientLimit: number
  readonly total: number
  /**
   * Per window over the run: `(total − burst) × window ÷ elapsed`, the rate a limiter that is never
   * idle reaches (the burst goes at once, the rest at the limit's pace).
   */
  readonly achieved: number
  /** `achieved ÷ quota`. */
  readonly share: number
  /** The most one window held, by response times, on the client's side. */
  readonly busiest: number
  /** The stand-in's busiest window (by arrival, what it enforces) and its 429s. */
  readonly server: { readonly busiest: number; readonly rateLimited: number } | undefined
}

export interface Figures {
  readonly windowMillis: number
  readonly calls: number
  readonly failed: number
  readonly elapsedMillis: number
  readonly dimensions: readonly [Dimension, Dimension]
  readonly estimate: {
    readonly reserved: number
    readonly actual: number
    /** `(reserved − actual) ÷ actual`: positive when the estimates were generous. */
    readonly error: number
    /** Calls whose usage passed their estimate, and by how much in all: the debt later callers paid. */
    readonly short: number
    readonly shortfall: number
  }
  readonly tooManyRequests: number
  /** Failed calls by the error's tag, with the first one's message. */
  readonly errors: Readonly<Record<string, { readonly count: number; readonly first: string }>>
  readonly binding: { readonly dimension: "requests" | "tokens"; readonly reason: string }
  readonly verdict: Run.Summary["verdict"]
  /** With chat calls beside the batch: each lane's latency and share, and whether lanes were on. */
  readonly lanes?: { readonly on: boolean; readonly lanes: ReadonlyArray<Lanes.LaneFigures> } | undefined
}

/** The most `values` (at `times`, sorted) hold within any span of `windowMillis`. */
const busiestWindow = (times: ReadonlyArray<number>, values: ReadonlyArray<number>, windowMillis: number): number => {
  let best = 0
  let sum = 0
  let tail = 0
  for (let head = 0; head < times.length; head++) {
    sum += values[head]
    while (times[head] - times[tail] >= windowMillis) sum -= values[tail++]
    best = Math.max(best, sum)
  }
  return best
}

/** Failed calls by the error's tag, each with its first message. */
const countErrors = (
  calls: ReadonlyArray<Run.Call>
): Record<string, { readonly count: number; readonly first: string }> => {
  const counts: Record<string, { count: number; first: string }> = {}
  for (const call of calls) {
    if (call.error !== undefined) {
      const tag = call.error.split(":", 1)[0]
      const entry = counts[tag] ??= { count: 0, first: call.error }
      entry.count++
    }
  }
  return counts
}

export const figures = (summary: Run.Summary): Figures => {
  const { config } = summary
  const windowMillis = config.quotas.windowMillis
  const done = summary.calls.filter((call) => call.actual !== undefined).sort((a, b) => a.at - b.at)
  const times = done.map((call) => call.at)
  const span = times.length > 1 ? times[times.length - 1] - times[0] : 0
  const dimension = (name: "requests" | "tokens", values: ReadonlyArray<number>): Dimension => {
    const quota = config.quotas[name]
    const total = values.reduce((sum, value) => sum + value, 0)
    const achieved = span > 0 ? (Math.max(0, total - quota.burst) * windowMillis) / span : total
    const server = summary.server?.[name]
    return {
      name,
      quota: quota.limit,
      burst: quota.burst,
      clientLimit: OpenAi.clientLimit(quota, config.margin).limit,
      total,
      achieved,
      share: achieved / quota.limit,
      busiest: busiestWindow(times, values, windowMillis),
      server: server === undefined ? undefined : { busiest: server.busiest, rateLimited: server.rateLimited }
    }
  }
  const requests = dimension("requests", done.map(() => 1))
  const tokens = dimension("tokens", done.map((call) => call.actual ?? 0))
  const reserved = done.reduce((sum, call) => sum + call.estimate, 0)
  const short = done.filter((call) => (call.actual ?? 0) > call.estimate)
  const binding = tokens.share >= requests.share ? tokens : requests
  const other = binding === tokens ? requests : tokens
  const windowText = `${windowMillis / 1000} s`
  return {
    windowMillis,
    calls: summary.calls.length,
    failed: summary.calls.length - done.length,
    elapsedMillis: summary.elapsedMillis,
    dimensions: [requests, tokens],
    estimate: {
      reserved,
      actual: tokens.total,
      error: tokens.total > 0 ? (reserved - tokens.total) / tokens.total : 0,
      short: short.length,
      shortfall: short.reduce((sum, call) => sum + (call.actual ?? 0) - call.estimate, 0)
    },
    tooManyRequests: summary.tooManyRequests,
    errors: countErrors(summary.calls),
    binding: {
      dimension: binding.name,
      reason: `${binding.name}/${windowText} ${binding.share >= 0.9 ? "saturated" : "the busier"}: ` +
        `${percent(binding.share)} of its quota (${thousands(Math.round(binding.achieved))} of ${
          thousands(binding.quota)
        } a window), ${other.name} at ${percent(other.share)}` +
        (binding === tokens && reserved > tokens.total * 1.1 && binding.share < 0.9
          ? `; the estimates held ${percent(reserved / tokens.total - 1)} more than was used`
          : "")
    },
    verdict: runVerdict(summary, windowMillis, [requests, tokens]),
    ...((config.interactive ?? 0) > 0
      ? { lanes: { on: summary.lanes !== undefined, lanes: Lanes.figures(summary.calls, summary.lanes) } }
      : {})
  }
}

/**
 * The provider's rule on this report's own figures: each dimension's share is the table's
 * (achieved ÷ quota), so that the verdict's percentage is the one printed above it, not another
 * computed from the last starts against the client's limit.
 */
const runVerdict = (
  summary: Run.Summary,
  windowMillis: number,
  dimensions: ReadonlyArray<Dimension>
): Run.Summary["verdict"] => {
  if (summary.phases.attempts === 0) return summary.verdict
  const [requests] = dimensions
  return Provider.verdict({
    ...summary.phases,
    startRate: (requests.achieved * 1000) / windowMillis,
    limiterRate: (requests.quota * 1000) / windowMillis,
    dimensions: dimensions.map((d) => ({
      dimension: d.name,
      limit: d.quota,
      window: Duration.millis(windowMillis),
      ratePerSecond: (d.achieved * 1000) / windowMillis,
      spanMillis: windowMillis
    }))
  })
}

const thousands = (n: number) => n.toLocaleString("en-US")
const percent = (share: number) => `${(share * 100).toFixed(1)} %`
const pad = (text: string, width: number) => text.padStart(width)

export const format = (f: Figures): string => {
  const w = `${f.windowMillis / 1000} s`
  const header = [
    "dimension",
    `quota/${w}`,
    "burst",
    `achieved/${w}`,
    "share",
    "busiest (client)",
    "busiest (server)",
    "429s"
  ]
  const rows = f.dimensions.map((d) => [
    d.name,
    thousands(d.quota),
    thousands(d.burst),
    thousands(Math.round(d.achieved)),
    percent(d.share),
    thousands(d.busiest),
    d.server === undefined ? "-" : thousands(d.server.busiest),
    d.server === undefined ? "-" : String(d.server.rateLimited)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : pad(cell, widths[i])).join("  ")
  const e = f.estimate
  return [
    `${f.calls} calls (${f.failed} failed) in ${
      (f.elapsedMillis / 1000).toFixed(1)
    } s, ${f.tooManyRequests} 429s received`,
    "",
    line(header),
    ...rows.map(line),
    ...Object.entries(f.errors).map(([tag, { count, first }]) => `  ${count} failed with ${tag}, the first: ${first}`),
    "",
    `estimates: ${thousands(e.reserved)} tokens reserved for ${thousands(e.actual)} used ` +
    `(error ${e.error >= 0 ? "+" : ""}${percent(e.error)}); ${e.short} calls used more than reserved, ` +
    `${thousands(e.shortfall)} tokens in all, paid by the calls after them`,
    `binding: ${f.binding.dimension} — ${f.binding.reason}`,
    `the provider's verdict: ${f.verdict.binding} — ${f.verdict.reason}`,
    ...(f.lanes === undefined ? [] : ["", Lanes.format(f.lanes.lanes, f.lanes.on)])
  ].join("\n")
}
