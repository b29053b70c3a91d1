/**
 * Measuring a rate limiter on the real clock: every task records the instant it starts, and the
 * figures come from those instants, not from what the limiter believes it did.
 */
import { collectGarbage } from "./report.js"

/**
 * Submits `n` tasks at once to a limiter of `limit` starts per second; each task calls `started()`
 * first thing; resolves when all have run.
 */
export type Submit = (limit: number, n: number, started: () => void) => Promise<void>

export interface LimiterRun {
  readonly label: string
  readonly config: string
  readonly n: number
  /** Start instants in milliseconds from the first start, ascending. */
  readonly starts: Float64Array
  /** Process CPU (user + system) per take, in microseconds. */
  readonly cpuPerTakeMicros: number
  /** From the first start to the last. */
  readonly spanMillis: number
  /** Starts per second from the first to the last start. */
  readonly achievedPerSecond: number
  /** Starts per second from 1 s after the first start to the last: the rate once the burst is over. */
  readonly sustainedPerSecond: number
  readonly worst1s: number
  readonly worst10ms: number
  /** The longest time between two consecutive starts: how long the limiter (or the loop) stalled. */
  readonly longestGapMillis: number
  /** Tasks that had started when the run was cut off, or `n`. */
  readonly completed: number
}

/** The most instants in any half-open window [t, t + width) of the sorted `times`. */
export const maxInWindow = (times: Float64Array, width: number): number => {
  let best = 0
  let lo = 0
  for (let hi = 0; hi < times.length; hi++) {
    while (times[hi] - times[lo] >= width) lo++
    best = Math.max(best, hi - lo + 1)
  }
  return best
}

const longestGap = (sorted: Float64Array): number => {
  let longest = 0
  for (let i = 1; i < sorted.length; i++) longest = Math.max(longest, sorted[i] - sorted[i - 1])
  return longest
}

const summarise = (label: string, config: string, n: number, raw: Float64Array, cpuMicros: number): LimiterRun => {
  const sorted = raw.slice().sort()
  const first = sorted[0]
  const starts = sorted.map((t) => t - first)
  const count = starts.length
  const spanMillis = count > 0 ? starts[count - 1] : 0
  const afterFirstSecond = starts.filter((t) => t >= 1000)
  const sustainedSpan = spanMillis - 1000
  return {
    label,
    config,
    n,
    starts,
    cpuPerTakeMicros: cpuMicros / Math.max(1, count),
    spanMillis,
    achievedPerSecond: spanMillis > 0 ? ((count - 1) * 1000) / spanMillis : Number.NaN,
    sustainedPerSecond: sustainedSpan > 0 ? (afterFirstSecond.length * 1000) / sustainedSpan : Number.NaN,
    worst1s: maxInWindow(starts, 1000),
    worst10ms: maxInWindow(starts, 10),
    longestGapMillis: longestGap(starts),
    completed: count
  }
}

/**
 * Runs `submit` for `n` tasks and measures the starts. A run still unfinished after `capMillis` is
 * summarised over the starts so far (`completed < n`).
 */
export const runLimiter = async (
  label: string,
  config: string,
  limit: number,
  n: number,
  submit: Submit,
  capMillis = Number.POSITIVE_INFINITY
): Promise<LimiterRun> => {
  collectGarbage()
  const raw = new Float64Array(n)
  let count = 0
  const started = () => {
    raw[count++] = performance.now()
  }
  const cpuBefore = process.cpuUsage()
  let timer: ReturnType<typeof setTimeout> | undefined
  const cap = new Promise<void>((resolve) => {
    if (Number.isFinite(capMillis)) timer = setTimeout(resolve, capMillis)
  })
  await Promise.race([submit(limit, n, started), cap])
  if (timer !== undefined) clearTimeout(timer)
  const cpu = process.cpuUsage(cpuBefore)
  return summarise(label, config, n, raw.slice(0, count), cpu.user + cpu.system)
}
