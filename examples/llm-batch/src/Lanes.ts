/**
 * An interactive path beside the batch, on the same key and quotas: a few chat calls arrive while
 * the batch keeps the tokens quota saturated. With lanes, the provider's bulkhead serves them
 * before the batch's queue (the batch still gets every permit they leave idle); without, they
 * queue behind it. The report gives each lane's latency and share.
 */
import { BulkheadLanes } from "@sluice/bulkhead"
import type { Provider } from "@sluice/provider"
import type * as Prompts from "./Prompts.js"

/** The lanes, highest first: a batch call gives way to chat calls for at most 30 s. */
export const lanes = BulkheadLanes.priority({
  interactive: {},
  batch: { yieldFor: "30 seconds" }
})

/**
 * How many batch calls wait at once per permit when an interactive path runs beside the batch:
 * the batch submits ahead of its permits (as a batch that hands every row to the provider does),
 * so the bulkhead has a queue for the interactive calls to pass.
 */
export const BATCH_QUEUE_PER_PERMIT = 8

/** The completion a chat answer may take: short, as a chat turn is. */
export const CHAT_MAX_TOKENS = 64

const questions = [
  "What is the capital of Australia?",
  "Give me one word that rhymes with orange.",
  "How many days are there in a leap year?",
  "Translate 'good morning' into French.",
  "What does HTTP 429 mean?",
  "Name a prime number between 20 and 30."
] as const

/** The `n`th chat turn: a short question, no system prompt. */
export const chatPrompt = (n: number): Prompts.Prompt => ({
  id: `chat-${n + 1}`,
  messages: [{ role: "user", content: questions[n % questions.length] }]
})

/** The latency figures of one lane: calls, p50 and p95 from a call's submission to its answer. */
export interface LaneFigures {
  readonly lane: string
  readonly calls: number
  readonly p50Millis: number
  readonly p95Millis: number
  /** The lane's share of the permits the bulkhead granted; absent without lanes. */
  readonly share: number | undefined
  /** The provider's permit wait in the lane (p95); absent without lanes. */
  readonly permitWaitP95Millis: number | undefined
}

/** Nearest rank: the smallest latency at or above that share of the calls. */
const rank = (sorted: ReadonlyArray<number>, share: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)]

/**
 * Each lane's figures from the calls' latencies, with the provider's per-lane summary when its
 * bulkhead has lanes.
 */
export const figures = (
  calls: ReadonlyArray<{ readonly lane: string; readonly latencyMillis: number }>,
  stats: ReadonlyArray<Provider.LaneSummary> | undefined
): ReadonlyArray<LaneFigures> =>
  ["interactive", "batch"].map((lane) => {
    const latencies = calls.filter((call) => call.lane === lane).map((call) => call.latencyMillis).sort((a, b) => a - b)
    const summary = stats?.find((entry) => entry.lane === lane)
    return {
      lane,
      calls: latencies.length,
      p50Millis: rank(latencies, 0.5),
      p95Millis: rank(latencies, 0.95),
      share: summary?.share,
      permitWaitP95Millis: summary?.permitWait.p95Millis
    }
  })

const ms = (millis: number) => millis >= 1000 ? `${(millis / 1000).toFixed(2)} s` : `${Math.round(millis)} ms`

/** The lanes table of the terminal report, and a line saying whether lanes were on. */
export const format = (lanes: ReadonlyArray<LaneFigures>, on: boolean): string => {
  const header = ["lane", "calls", "latency p50", "latency p95", "permit wait p95", "share of permits"]
  const rows = lanes.map((lane) => [
    lane.lane,
    String(lane.calls),
    ms(lane.p50Millis),
    ms(lane.p95Millis),
    lane.permitWaitP95Millis === undefined ? "-" : ms(lane.permitWaitP95Millis),
    lane.share === undefined ? "-" : `${(lane.share * 100).toFixed(1)} %`
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])).join("  ")
  return [
    on
      ? "lanes: interactive before batch (a batch call gives way for at most 30 s)"
      : "lanes: off (one queue: the chat calls wait behind the batch's)",
    line(header),
    ...rows.map(line)
  ].join("\n")
}
