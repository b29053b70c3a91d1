/**
 * One dimension of the stand-in's quota, counted as a server counts it: the usage of every request
 * it accepted, dated by its arrival, in a log over the last `window`. A request is accepted when the
 * window ending at its arrival, with it, holds at most `limit + burst` — the bound a client limiter
 * with the same limit and burst keeps — and that sum, the busiest window, is recorded. Plain
 * numbers, no Effect: the server and its tests drive it with their own clock.
 */
export interface Options {
  readonly limit: number
  readonly burst: number
  readonly windowMillis: number
}

export interface Quota {
  readonly options: Options
  /** 0 when `amount` fits in the window ending at `now`, else the milliseconds until it would. */
  readonly waitFor: (now: number, amount: number) => number
  /** Counts `amount` at `now` (after `waitFor` said it fits: a request is counted on every dimension or none). */
  readonly add: (now: number, amount: number) => void
  /** What the window ending at `now` holds. */
  readonly used: (now: number) => number
  /** Milliseconds until the log is empty again (OpenAI's "reset": back to the initial state). */
  readonly resetAfter: (now: number) => number
  /** The most any window held, and how many windows' worth were accepted, fixed windows from the first arrival. */
  readonly busiest: () => number
  readonly perWindow: () => ReadonlyArray<number>
}

export const make = (options: Options): Quota => {
  const capacity = options.limit + options.burst
  // arrivals and amounts, oldest first; `head` is the first live entry
  const times: Array<number> = []
  const amounts: Array<number> = []
  let head = 0
  let sum = 0
  let busiest = 0
  let firstArrival: number | undefined
  const windows: Array<number> = []

  const expire = (now: number) => {
    while (head < times.length && times[head] <= now - options.windowMillis) {
      sum -= amounts[head]
      head++
    }
    // compact now and then, so the arrays hold about one window of entries
    if (head > 1_024 && head * 2 > times.length) {
      times.splice(0, head)
      amounts.splice(0, head)
      head = 0
    }
  }

  return {
    options,
    waitFor: (now, amount) => {
      expire(now)
      if (sum + amount <= capacity) return 0
      // the wait until enough of the oldest entries leave the window for `amount` to fit
      let freed = 0
      for (let i = head; i < times.length; i++) {
        freed += amounts[i]
        if (sum - freed + amount <= capacity) return Math.max(1, times[i] + options.windowMillis - now)
      }
      return options.windowMillis
    },
    add: (now, amount) => {
      expire(now)
      times.push(now)
      amounts.push(amount)
      sum += amount
      busiest = Math.max(busiest, sum)
      firstArrival ??= now
      const index = Math.floor((now - firstArrival) / options.windowMillis)
      while (windows.length <= index) windows.push(0)
      windows[index] += amount
    },
    used: (now) => {
      expire(now)
      return sum
    },
    resetAfter: (now) => {
      expire(now)
      return head < times.length ? times[times.length - 1] + options.windowMillis - now : 0
    },
    busiest: () => busiest,
    perWindow: () => [...windows]
  }
}

/**
 * A duration as OpenAI writes its `x-ratelimit-reset-*` headers (Go's `time.Duration` format):
 * `20ms` under a second, `1s`, `8.64s`, `6m0s`, `1h2m3s`.
 */
export const formatReset = (millis: number): string => {
  const ms = Math.max(0, Math.round(millis))
  if (ms < 1_000) return `${ms}ms`
  const hours = Math.floor(ms / 3_600_000)
  const minutes = Math.floor((ms % 3_600_000) / 60_000)
  const seconds = (ms % 60_000) / 1_000
  const s = `${Number(seconds.toFixed(3))}s`
  if (hours > 0) return `${hours}h${minutes}m${s}`
  if (minutes > 0) return `${minutes}m${s}`
  return s
}
