/**
 * The limiter store contract's vectors as data: limiters, the steps a test takes on its clock, and
 * the exact instants each caller must start at. Each Effect line runs them with a driver of its
 * own (on its `TestClock`, against each store), so that both lines are held to one table.
 *
 * Times are milliseconds on the test's clock, which starts at 0; windows and budgets are
 * milliseconds too (a number is a duration input on both lines).
 */

/** One limit of a vector's limiter, as the limiter's options take it. */
export interface VectorLimit {
  readonly dimension?: string
  readonly limit: number
  readonly window: number
  readonly algorithm?: "gcra" | "fixed-window" | "sliding-window"
  readonly burst?: number
}

/** A limiter's settings; limiters of one vector that give the same `name` share its key. */
export interface VectorLimiter {
  readonly name?: string
  readonly limits: ReadonlyArray<VectorLimit>
  readonly maxWait?: number
}

/** A take's cost: units on every limit, or per dimension. */
export type VectorCost = number | Readonly<Record<string, number>>

/**
 * A step. `on` is the index of the limiter (default 0).
 *
 * - `take`: a caller takes, in a fiber of its own, once its decision is back; its start is
 *   checked against `starts[id]`.
 * - `refused`: a take now fails at once with `RateLimitExceeded` of these fields.
 * - `waits`: a take of `cost` with a zero budget is refused with `retryAfterMillis` (0: it starts).
 * - `fits`: whether a take of `cost` with a zero budget starts (it consumes it when it does).
 * - `reserve`, `settle`, `release`: a reservation, named `id`, and its usage.
 * - `dimensions`: the limiter's dimensions, each once, in the order of its limits.
 */
export type Step =
  | {
    readonly do: "take"
    readonly id: string
    readonly on?: number
    readonly cost?: VectorCost
    readonly maxWait?: number
  }
  | { readonly do: "adjust"; readonly millis: number }
  | { readonly do: "setTime"; readonly millis: number }
  | { readonly do: "interrupt"; readonly id: string }
  | { readonly do: "pause"; readonly millis: number; readonly on?: number }
  | { readonly do: "pauseRemaining"; readonly millis: number; readonly on?: number }
  | {
    readonly do: "refused"
    readonly on?: number
    readonly cost?: VectorCost
    readonly maxWait?: number
    readonly reason: "quota" | "paused"
    readonly retryAfterMillis?: number
    /** The algorithm of the limit that refused (`reason: "quota"`). */
    readonly algorithm?: "gcra" | "fixed-window" | "sliding-window"
    readonly errorCost?: number
    /** The error's whole message after `rate limiter "<name>": ` (the name is the driver's). */
    readonly message?: string
  }
  | { readonly do: "waits"; readonly cost: VectorCost; readonly millis: number; readonly on?: number }
  | { readonly do: "fits"; readonly cost: VectorCost; readonly fits: boolean; readonly on?: number }
  | { readonly do: "reserve"; readonly id: string; readonly cost: VectorCost; readonly on?: number }
  | { readonly do: "settle"; readonly id: string; readonly actual: VectorCost }
  | { readonly do: "release"; readonly id: string }
  | { readonly do: "dimensions"; readonly on?: number; readonly expect: ReadonlyArray<string> }
  | {
    readonly do: "tighten"
    readonly on?: number
    readonly observations: ReadonlyArray<{
      readonly dimension: string
      readonly remaining?: number
      readonly limit?: number
      readonly resetAfter?: number
    }>
  }

/** A vector: who takes when, and when each taker starts. */
export interface Vector {
  readonly name: string
  readonly group: string
  readonly limiters: ReadonlyArray<VectorLimiter>
  readonly steps: ReadonlyArray<Step>
  /** The instant each `take` started (a taker interrupted before its start is left out). */
  readonly starts: Readonly<Record<string, number>>
}

const takes = (prefix: string, n: number, extra: Partial<Extract<Step, { do: "take" }>> = {}): Array<Step> =>
  Array.from({ length: n }, (_, i) => ({ do: "take", id: `${prefix}${i}`, ...extra }))

const startsOf = (prefix: string, instants: ReadonlyArray<number>): Record<string, number> =>
  Object.fromEntries(instants.map((at, i) => [`${prefix}${i}`, at]))

const one = (limit: VectorLimit, extra: Omit<VectorLimiter, "limits"> = {}): ReadonlyArray<VectorLimiter> => [
  { limits: [limit], ...extra }
]

const tokens = (limit: number, extra: Partial<VectorLimit> = {}): VectorLimit => ({
  dimension: "tokens",
  limit,
  window: 1000,
  burst: limit,
  ...extra
})

const evening = Date.UTC(2024, 0, 1, 23, 59)

const slidingArrivals = (origin: number): Array<Step> =>
  [0, 900, 1000, 1500].flatMap((at, i): Array<Step> => [
    { do: "setTime", millis: origin + at },
    { do: "take", id: `t${i}` }
  ])

const refundWithin = (algorithm: "fixed-window" | "sliding-window", origin: number): Vector => ({
  group: "refunds",
  name: `a refund never lets a window exceed its quota (${algorithm})`,
  limiters: one({ limit: 2, window: 1000, algorithm }),
  steps: [
    { do: "setTime", millis: origin },
    ...takes("t", 4),
    { do: "adjust", millis: 100 },
    { do: "interrupt", id: "t3" },
    { do: "take", id: "e" },
    { do: "take", id: "f" },
    { do: "adjust", millis: 3000 }
  ],
  starts: { t0: origin, t1: origin, t2: origin + 1000, e: origin + 1000, f: origin + 2000 }
})

export const vectors: ReadonlyArray<Vector> = [
  // --- gcra ---------------------------------------------------------------------------------
  {
    group: "gcra",
    name: "spaces starts evenly by default (burst 1)",
    limiters: one({ limit: 2, window: 1000 }),
    steps: [...takes("t", 5), { do: "adjust", millis: 3000 }],
    starts: startsOf("t", [0, 500, 1000, 1500, 2000])
  },
  {
    group: "gcra",
    name: "lets `burst` start at once, then the rate, and refills while idle",
    limiters: one({ limit: 10, window: 1000, burst: 3 }),
    steps: [...takes("a", 6), { do: "adjust", millis: 2000 }, ...takes("b", 4), { do: "adjust", millis: 1000 }],
    starts: { ...startsOf("a", [0, 0, 0, 100, 200, 300]), ...startsOf("b", [2000, 2000, 2000, 2100]) }
  },
  {
    group: "gcra",
    name: "charges the cost of each take",
    limiters: one({ limit: 10, window: 1000, burst: 5 }),
    steps: [
      { do: "take", id: "a", cost: 5 },
      { do: "take", id: "b", cost: 1 },
      { do: "take", id: "c", cost: 2 },
      { do: "adjust", millis: 1000 }
    ],
    starts: { a: 0, b: 100, c: 300 }
  },
  // --- fixed window -------------------------------------------------------------------------
  {
    group: "fixed window",
    name: "resets on the clock's window boundaries, not at the first take",
    limiters: one({ limit: 2, window: 1000, algorithm: "fixed-window" }),
    steps: [{ do: "setTime", millis: 300 }, ...takes("t", 5), { do: "adjust", millis: 3000 }],
    starts: startsOf("t", [300, 300, 1000, 1000, 2000])
  },
  {
    group: "fixed window",
    name: "a daily window resets at midnight UTC",
    limiters: one({ limit: 2, window: 86_400_000, algorithm: "fixed-window" }),
    steps: [{ do: "setTime", millis: evening }, ...takes("t", 3), { do: "adjust", millis: 120_000 }],
    starts: startsOf("t", [evening, evening, Date.UTC(2024, 0, 2)])
  },
  {
    group: "fixed window",
    name: "never splits one start's cost across two windows",
    limiters: one({ limit: 3, window: 1000, algorithm: "fixed-window" }),
    steps: [
      { do: "take", id: "a", cost: 2 },
      { do: "take", id: "b", cost: 2 },
      { do: "take", id: "c", cost: 1 },
      { do: "adjust", millis: 2000 }
    ],
    starts: { a: 0, b: 1000, c: 1000 }
  },
  // --- sliding window -----------------------------------------------------------------------
  {
    group: "sliding window",
    name: "counts every window ending at the start",
    limiters: one({ limit: 2, window: 1000, algorithm: "sliding-window" }),
    steps: [...slidingArrivals(0), { do: "adjust", millis: 2000 }],
    starts: startsOf("t", [0, 900, 1000, 1900])
  },
  {
    group: "sliding window",
    name: "a fixed window, on the same arrivals, lets the fourth start at once",
    limiters: one({ limit: 2, window: 1000, algorithm: "fixed-window" }),
    steps: [...slidingArrivals(10_000), { do: "adjust", millis: 2000 }],
    starts: startsOf("t", [10_000, 10_900, 11_000, 11_500])
  },
  {
    group: "sliding window",
    name: "holds a window's quota across cost and many takers",
    limiters: one({ limit: 3, window: 1000, algorithm: "sliding-window" }),
    steps: [
      { do: "take", id: "a", cost: 2 },
      { do: "take", id: "b", cost: 2 },
      { do: "take", id: "c" },
      { do: "adjust", millis: 3000 }
    ],
    starts: { a: 0, b: 1000, c: 1000 }
  },
  // --- maxWait ------------------------------------------------------------------------------
  {
    group: "maxWait",
    name: "fails at once with retryAfter and the limit, consuming nothing",
    limiters: one({ limit: 1, window: 1000 }, { maxWait: 2000 }),
    steps: [
      ...takes("t", 3),
      { do: "adjust", millis: 0 },
      {
        do: "refused",
        reason: "quota",
        retryAfterMillis: 1000,
        algorithm: "gcra",
        errorCost: 1,
        message: "a start within 2s is impossible under 1 per 1s (burst 1); retry after 1s"
      },
      { do: "take", id: "t3", maxWait: Number.POSITIVE_INFINITY },
      { do: "adjust", millis: 4000 }
    ],
    starts: startsOf("t", [0, 1000, 2000, 3000])
  },
  {
    group: "maxWait",
    name: "0 means never wait",
    limiters: one({ limit: 4, window: 1000 }, { maxWait: 0 }),
    steps: [
      { do: "take", id: "a" },
      {
        do: "refused",
        reason: "quota",
        retryAfterMillis: 250,
        message: "a start now is impossible under 4 per 1s (burst 1); retry after 250ms"
      },
      { do: "adjust", millis: 250 },
      { do: "take", id: "b" }
    ],
    starts: { a: 0, b: 250 }
  },
  {
    group: "maxWait",
    name: "a per-take budget overrides the limiter's",
    limiters: one({ limit: 1, window: 1000 }, { maxWait: 0 }),
    steps: [{ do: "take", id: "a" }, { do: "take", id: "b", maxWait: 1000 }, { do: "adjust", millis: 1000 }],
    starts: { a: 0, b: 1000 }
  },
  // --- refunds ------------------------------------------------------------------------------
  {
    group: "refunds",
    name: "an interrupted sleeper holding the latest reservation gives its slot back",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [
      ...takes("t", 3),
      { do: "adjust", millis: 500 },
      { do: "interrupt", id: "t2" },
      { do: "take", id: "d" },
      { do: "adjust", millis: 3000 }
    ],
    starts: { t0: 0, t1: 1000, d: 2000 }
  },
  {
    group: "refunds",
    name: "an interrupted sleeper that is not the latest loses its slot",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [
      ...takes("t", 3),
      { do: "adjust", millis: 500 },
      { do: "interrupt", id: "t1" },
      { do: "take", id: "d" },
      { do: "adjust", millis: 4000 }
    ],
    starts: { t0: 0, t2: 2000, d: 3000 }
  },
  {
    group: "refunds",
    name: "refunds chain back from the latest, once each",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [
      ...takes("t", 3),
      { do: "adjust", millis: 500 },
      { do: "interrupt", id: "t2" },
      { do: "interrupt", id: "t1" },
      { do: "take", id: "d" },
      { do: "take", id: "e" },
      { do: "adjust", millis: 3000 }
    ],
    starts: { t0: 0, d: 1000, e: 2000 }
  },
  {
    group: "refunds",
    name: "a cancelled run below a live reservation stays until that one goes too",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [
      ...takes("t", 4),
      { do: "adjust", millis: 500 },
      { do: "interrupt", id: "t1" },
      { do: "interrupt", id: "t2" },
      { do: "take", id: "e" },
      { do: "adjust", millis: 5000 }
    ],
    starts: { t0: 0, t3: 3000, e: 4000 }
  },
  {
    group: "refunds",
    name: "a fixed window's refund gives back the space its reservation skipped",
    limiters: one({ limit: 10, window: 1000, algorithm: "fixed-window" }),
    steps: [
      { do: "take", id: "a" },
      { do: "take", id: "heavy", cost: 10 },
      { do: "interrupt", id: "heavy" },
      { do: "take", id: "b", cost: 9, maxWait: 0 },
      { do: "refused", reason: "quota", maxWait: 0, retryAfterMillis: 1000 }
    ],
    starts: { a: 0, b: 0 }
  },
  {
    group: "refunds",
    name: "a fixed window too fine for exact arithmetic stays within its quota after a refund",
    limiters: one({ limit: 10_000, window: 1, algorithm: "fixed-window" }),
    steps: [
      { do: "setTime", millis: 1_700_000_000_000 },
      { do: "take", id: "a", cost: 9_000 },
      { do: "take", id: "heavy", cost: 2_000 },
      { do: "interrupt", id: "heavy" },
      { do: "refused", reason: "quota", cost: 1_001, maxWait: 0 }
    ],
    starts: { a: 1_700_000_000_000 }
  },
  refundWithin("fixed-window", 10_000),
  refundWithin("sliding-window", 20_000),
  {
    group: "refunds",
    name: "a take whose wait is interrupted at the start instant does not double-start",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [
      ...takes("t", 2),
      { do: "adjust", millis: 1000 },
      { do: "interrupt", id: "t1" },
      { do: "take", id: "c" },
      { do: "adjust", millis: 2000 }
    ],
    starts: { t0: 0, t1: 1000, c: 2000 }
  },
  // --- several limits -----------------------------------------------------------------------
  {
    group: "several limits",
    name: "start at the earliest instant every limit allows",
    limiters: [{
      limits: [{ limit: 2, window: 1000, burst: 2 }, { limit: 3, window: 10_000, algorithm: "fixed-window" }]
    }],
    steps: [...takes("t", 5), { do: "adjust", millis: 11_000 }],
    starts: startsOf("t", [0, 0, 500, 10_000, 10_000])
  },
  {
    group: "several limits",
    name: "charge all of them or none",
    limiters: [{
      limits: [{ limit: 1, window: 1000 }, { limit: 2, window: 10_000, algorithm: "fixed-window" }],
      maxWait: 500
    }],
    steps: [
      { do: "take", id: "a" },
      { do: "refused", reason: "quota", retryAfterMillis: 500, algorithm: "gcra" },
      { do: "adjust", millis: 1000 },
      { do: "take", id: "b" },
      { do: "refused", reason: "quota", retryAfterMillis: 8500, algorithm: "fixed-window" }
    ],
    starts: { a: 0, b: 1000 }
  },
  // --- pause --------------------------------------------------------------------------------
  {
    group: "pause",
    name: "every caller waits out the pause, which can be read as a relative duration",
    limiters: one({ limit: 10, window: 1000, burst: 10 }),
    steps: [
      { do: "pause", millis: 5000 },
      { do: "pauseRemaining", millis: 5000 },
      { do: "adjust", millis: 2000 },
      { do: "pauseRemaining", millis: 3000 },
      { do: "pause", millis: 1000 },
      { do: "pauseRemaining", millis: 3000 },
      { do: "refused", reason: "paused", maxWait: 1000, retryAfterMillis: 2000 },
      ...takes("t", 2),
      { do: "adjust", millis: 4000 },
      { do: "pauseRemaining", millis: 0 }
    ],
    starts: startsOf("t", [5000, 5000])
  },
  {
    group: "pause",
    name: "holds callers already asleep until the pause ends",
    limiters: one({ limit: 1, window: 1000 }),
    steps: [...takes("t", 2), { do: "adjust", millis: 100 }, { do: "pause", millis: 3000 }, {
      do: "adjust",
      millis: 5000
    }],
    starts: startsOf("t", [0, 3100])
  },
  {
    group: "pause",
    name: "moves a GCRA backlog past the pause: new callers queue after the held ones",
    limiters: one({ limit: 10, window: 1000 }),
    steps: [
      ...takes("h", 5),
      { do: "adjust", millis: 50 },
      { do: "pause", millis: 1000 },
      { do: "take", id: "late" },
      { do: "adjust", millis: 3000 }
    ],
    starts: { ...startsOf("h", [0, 1050, 1150, 1250, 1350]), late: 1500 }
  },
  {
    group: "pause",
    name: "reaches the sleepers of another limiter on the key with its next decision",
    limiters: [{ name: "learned", limits: [{ limit: 10, window: 1000 }] }, {
      name: "learned",
      limits: [{ limit: 10, window: 1000 }]
    }],
    steps: [
      ...takes("t", 3, { on: 1 }),
      { do: "adjust", millis: 50 },
      { do: "pause", millis: 1000, on: 0 },
      { do: "adjust", millis: 10 },
      { do: "take", id: "next", on: 1 },
      { do: "adjust", millis: 3000 }
    ],
    starts: { ...startsOf("t", [0, 1050, 1150]), next: 1300 }
  },
  {
    group: "pause",
    name: "is shared by limiters on the same key",
    limiters: [{ name: "shared", limits: [{ limit: 10, window: 1000, burst: 10 }] }, {
      name: "shared",
      limits: [{ limit: 10, window: 1000, burst: 10 }]
    }],
    steps: [
      { do: "pause", millis: 2000, on: 0 },
      { do: "pauseRemaining", millis: 2000, on: 1 },
      { do: "take", id: "a", on: 1 },
      { do: "adjust", millis: 3000 }
    ],
    starts: { a: 2000 }
  },
  // --- many takers --------------------------------------------------------------------------
  {
    group: "many takers",
    name: "hundreds of concurrent takers start exactly on schedule",
    limiters: one({ limit: 50, window: 1000, burst: 5 }),
    steps: [...takes("t", 300), { do: "adjust", millis: 10_000 }],
    starts: startsOf("t", Array.from({ length: 300 }, (_, i) => Math.max(0, i - 4) * 20))
  },
  {
    group: "many takers",
    name: "limiters sharing a key share the quota (as processes sharing a store do)",
    limiters: [{ name: "shared", limits: [{ limit: 4, window: 1000 }] }, {
      name: "shared",
      limits: [{ limit: 4, window: 1000 }]
    }],
    steps: [
      ...Array.from({ length: 8 }, (_, i): Step => ({ do: "take", id: `t${i}`, on: i % 2 })),
      { do: "adjust", millis: 3000 }
    ],
    starts: startsOf("t", [0, 250, 500, 750, 1000, 1250, 1500, 1750])
  },
  // --- usage --------------------------------------------------------------------------------
  {
    group: "usage",
    name: "a cost per dimension charges the limits of each dimension it names, and only those",
    limiters: [{ limits: [{ dimension: "requests", limit: 2, window: 1000, burst: 2 }, tokens(100)] }],
    steps: [
      { do: "dimensions", expect: ["requests", "tokens"] },
      { do: "take", id: "a", cost: { requests: 1, tokens: 60 } },
      { do: "take", id: "b", cost: { requests: 1, tokens: 60 } },
      { do: "take", id: "c", cost: { requests: 1 } },
      { do: "adjust", millis: 2000 }
    ],
    starts: { a: 0, b: 200, c: 500 }
  },
  {
    group: "usage",
    name: "a number charges every limit, as a take always did",
    limiters: [{ limits: [{ dimension: "requests", limit: 10, window: 1000, burst: 10 }, tokens(3)] }],
    steps: [...takes("t", 4), { do: "adjust", millis: 1000 }],
    starts: startsOf("t", [0, 0, 0, 1000 / 3])
  },
  {
    group: "usage",
    name: "a debt moves the schedule forward: the next caller pays it, the settling one never waits",
    limiters: [{ limits: [tokens(100)] }],
    steps: [
      { do: "reserve", id: "r", cost: { tokens: 50 } },
      { do: "settle", id: "r", actual: { tokens: 150 } },
      { do: "waits", cost: { tokens: 100 }, millis: 1500 }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "GCRA: the unused part of the latest reservation comes back",
    limiters: [{ limits: [tokens(100)] }],
    steps: [
      { do: "reserve", id: "r", cost: { tokens: 80 } },
      { do: "waits", cost: { tokens: 100 }, millis: 800 },
      { do: "settle", id: "r", actual: { tokens: 20 } },
      { do: "waits", cost: { tokens: 100 }, millis: 200 }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "GCRA: a give back never moves a start decided after the reservation earlier than its own charges",
    limiters: [{ limits: [{ dimension: "tokens", limit: 10, window: 10_000, burst: 10 }] }],
    steps: [
      { do: "reserve", id: "early", cost: { tokens: 10 } },
      { do: "adjust", millis: 20_000 },
      { do: "take", id: "a", cost: { tokens: 5 } },
      { do: "adjust", millis: 1000 },
      { do: "settle", id: "early", actual: { tokens: 0 } },
      { do: "waits", cost: { tokens: 10 }, millis: 4000 }
    ],
    starts: { a: 20_000 }
  },
  {
    group: "usage",
    name: "fixed window: a debt fills the window; the unused part comes back while the window is open",
    limiters: [{ limits: [{ dimension: "tokens", limit: 10, window: 1000, algorithm: "fixed-window" }] }],
    steps: [
      { do: "reserve", id: "over", cost: { tokens: 5 } },
      { do: "settle", id: "over", actual: { tokens: 9 } },
      { do: "waits", cost: { tokens: 2 }, millis: 1000 },
      { do: "fits", cost: { tokens: 1 }, fits: true },
      { do: "adjust", millis: 1000 },
      { do: "reserve", id: "under", cost: { tokens: 6 } },
      { do: "settle", id: "under", actual: { tokens: 2 } },
      { do: "fits", cost: { tokens: 8 }, fits: true },
      { do: "fits", cost: { tokens: 1 }, fits: false },
      { do: "adjust", millis: 1000 },
      { do: "reserve", id: "late", cost: { tokens: 6 } },
      { do: "adjust", millis: 1000 },
      { do: "settle", id: "late", actual: { tokens: 0 } },
      { do: "fits", cost: { tokens: 10 }, fits: true }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "sliding window: a debt is logged; the unused units leave the log",
    limiters: [{ limits: [{ dimension: "tokens", limit: 5, window: 1000, algorithm: "sliding-window" }] }],
    steps: [
      { do: "reserve", id: "under", cost: { tokens: 3 } },
      { do: "settle", id: "under", actual: { tokens: 1 } },
      { do: "fits", cost: { tokens: 4 }, fits: true },
      { do: "fits", cost: { tokens: 1 }, fits: false },
      { do: "adjust", millis: 1000 },
      { do: "reserve", id: "over", cost: { tokens: 1 } },
      { do: "settle", id: "over", actual: { tokens: 4 } },
      { do: "fits", cost: { tokens: 1 }, fits: true },
      { do: "fits", cost: { tokens: 1 }, fits: false }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "sliding window: a debt of 10^9 units fills the window for one window length, then leaves",
    limiters: [{ limits: [{ dimension: "tokens", limit: 5, window: 1000, algorithm: "sliding-window" }] }],
    steps: [
      { do: "reserve", id: "r", cost: { tokens: 1 } },
      { do: "settle", id: "r", actual: { tokens: 1_000_000_000 } },
      { do: "waits", cost: { tokens: 1 }, millis: 1000 },
      { do: "adjust", millis: 999 },
      { do: "fits", cost: { tokens: 1 }, fits: false },
      { do: "adjust", millis: 1 },
      { do: "fits", cost: { tokens: 5 }, fits: true },
      { do: "fits", cost: { tokens: 1 }, fits: false }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "release: the latest reservation goes back exactly, an earlier one as a settle of nothing",
    limiters: [{ limits: [tokens(100)] }],
    steps: [
      { do: "reserve", id: "first", cost: { tokens: 30 } },
      { do: "reserve", id: "second", cost: { tokens: 30 } },
      { do: "release", id: "second" },
      { do: "waits", cost: { tokens: 100 }, millis: 300 },
      { do: "release", id: "first" },
      { do: "fits", cost: { tokens: 100 }, fits: true }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "a reservation settles once: a second settle, or a release after it, is a no-op",
    limiters: [{ limits: [tokens(100)] }],
    steps: [
      { do: "reserve", id: "r", cost: { tokens: 40 } },
      { do: "settle", id: "r", actual: { tokens: 60 } },
      { do: "settle", id: "r", actual: { tokens: 0 } },
      { do: "release", id: "r" },
      { do: "waits", cost: { tokens: 100 }, millis: 600 }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "a dimension the settle omits keeps its estimate",
    limiters: [{
      limits: [{ dimension: "input", limit: 100, window: 1000, burst: 100 }, {
        dimension: "output",
        limit: 100,
        window: 1000,
        burst: 100
      }]
    }],
    steps: [
      { do: "reserve", id: "r", cost: { input: 50, output: 50 } },
      { do: "settle", id: "r", actual: { input: 10 } },
      { do: "waits", cost: { input: 100 }, millis: 100 },
      { do: "waits", cost: { output: 100 }, millis: 500 }
    ],
    starts: {}
  },
  {
    group: "usage",
    name: "tighten: a lower remaining moves the state down, a higher one changes nothing",
    limiters: [{
      limits: [
        { dimension: "requests", limit: 10, window: 1000, burst: 10 },
        tokens(100),
        { dimension: "tokens", limit: 1000, window: 10_000, algorithm: "fixed-window" }
      ]
    }],
    steps: [
      { do: "take", id: "a", cost: { tokens: 50 } },
      { do: "tighten", observations: [{ dimension: "tokens", remaining: 90, limit: 100 }] },
      { do: "waits", cost: { tokens: 60 }, millis: 100 },
      { do: "tighten", observations: [{ dimension: "tokens", remaining: 10, limit: 100 }] },
      { do: "waits", cost: { tokens: 11 }, millis: 10 },
      { do: "tighten", observations: [{ dimension: "tokens", remaining: 0, limit: 900 }] },
      { do: "waits", cost: { tokens: 1 }, millis: 10_000 },
      { do: "fits", cost: { requests: 1 }, fits: true }
    ],
    starts: { a: 0 }
  },
  // a window algorithm counts the whole limit used, so it holds until its window ends
  ...([["gcra", 6000], ["fixed-window", 60_000], ["sliding-window", 60_000]] as const).map((
    [algorithm, wait]
  ): Vector => ({
    group: "usage",
    name: `tighten: remaining 0 holds the dimension's starts until the reset (${algorithm})`,
    limiters: [{
      limits: [
        { dimension: "requests", limit: 10, window: 1000, ...(algorithm === "gcra" ? { burst: 10 } : {}), algorithm },
        { dimension: "tokens", limit: 100, window: 60_000, algorithm }
      ]
    }],
    steps: [
      { do: "tighten", observations: [{ dimension: "tokens", remaining: 0, resetAfter: 6000 }] },
      { do: "fits", cost: { requests: 1 }, fits: true },
      { do: "waits", cost: { requests: 1, tokens: 1 }, millis: wait }
    ],
    starts: {}
  }))
]

// --- mass cancellation ----------------------------------------------------------------------

/** A deterministic shuffle (a linear congruential generator), so that a failure replays. */
export const shuffled = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  let x = seed
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648
    const j = x % (i + 1)
    const tmp = out[i]
    out[i] = out[j]
    out[j] = tmp
  }
  return out
}

const cancellationOrders: ReadonlyArray<readonly [string, (ids: ReadonlyArray<string>) => ReadonlyArray<string>]> = [
  ["oldest first", (ids) => ids],
  ["newest first", (ids) => [...ids].reverse()],
  ["in random order", (ids) => shuffled(ids, 17)]
]

/**
 * 10 per second, 1,000 takers at 0, all interrupted at 500 ms: the ones that started keep their
 * starts, every other slot comes back, and the next take starts where the started ones allow
 * (one emission interval on for GCRA, the next window for the window algorithms).
 */
export const cancellationVectors: ReadonlyArray<Vector> = ([
  ["gcra", 6, (i: number) => i * 100, 600],
  ["fixed-window", 10, () => 0, 1000],
  ["sliding-window", 10, () => 0, 1000]
] as const).flatMap(([algorithm, started, startOf, next]) =>
  cancellationOrders.map(([order, arrange]): Vector => {
    const ids = Array.from({ length: 1000 }, (_, i) => `t${i}`)
    return {
      group: "mass cancellation",
      name: `${algorithm}: interrupting 1,000 queued takers ${order} gives every slot back`,
      limiters: one({ limit: 10, window: 1000, ...(algorithm === "gcra" ? {} : { algorithm }) }),
      steps: [
        ...takes("t", 1000),
        { do: "adjust", millis: 500 },
        ...arrange(ids).map((id): Step => ({ do: "interrupt", id })),
        { do: "take", id: "after" },
        { do: "adjust", millis: 2000 }
      ],
      starts: { ...startsOf("t", Array.from({ length: started }, (_, i) => startOf(i))), after: next }
    }
  })
)

// --- the store interface --------------------------------------------------------------------

/** One limit in the store's terms. */
export interface StoreLimit {
  readonly algorithm: "gcra" | "fixed-window" | "sliding-window"
  readonly limit: number
  readonly windowMillis: number
  readonly burst: number
}

/**
 * A step on a store's own interface, on one key. `reserve` names its reservation `id` for the
 * steps after it and checks the fields of its answer it gives.
 */
export type StoreStep =
  | {
    readonly do: "reserve"
    readonly id?: string
    readonly cost: number
    readonly costs?: ReadonlyArray<number>
    readonly maxWaitMillis: number
    readonly expect:
      | { readonly _tag: "Reserved"; readonly delayMillis?: number }
      | {
        readonly _tag: "Refused"
        readonly delayMillis?: number
        readonly retryAfterMillis?: number
        readonly binding?: number
        /** A delay at least this long (a hold far in the future). */
        readonly delayAtLeast?: number
      }
  }
  | { readonly do: "refund"; readonly id: string; readonly cost: number; readonly expect: boolean }
  | {
    readonly do: "settle"
    readonly id: string
    readonly reserved: ReadonlyArray<number>
    readonly actual: ReadonlyArray<number>
  }
  | {
    readonly do: "tighten"
    readonly observations: ReadonlyArray<unknown>
    /** Texts the one warning it logs must hold; absent: it logs none. */
    readonly warns?: ReadonlyArray<string>
  }
  | { readonly do: "pause"; readonly millis: number }
  | { readonly do: "readPause"; readonly expect: number }
  | { readonly do: "adjust"; readonly millis: number }

/** A store vector: one key's limits and the steps on it, from `startAt` on the test clock. */
export interface StoreVector {
  readonly name: string
  readonly startAt: number
  readonly limits: ReadonlyArray<StoreLimit>
  readonly steps: ReadonlyArray<StoreStep>
}

const gcraSpec = (limit: number, windowMillis: number, burst: number): StoreLimit => ({
  algorithm: "gcra",
  limit,
  windowMillis,
  burst
})

const reserveMany = (n: number, delays: ReadonlyArray<number>, prefix = "r"): Array<StoreStep> =>
  Array.from({ length: n }, (_, i) => ({
    do: "reserve",
    id: `${prefix}${i}`,
    cost: 1,
    maxWaitMillis: Number.POSITIVE_INFINITY,
    expect: { _tag: "Reserved", delayMillis: delays[i] }
  }))

export const storeVectors: ReadonlyArray<StoreVector> = [
  {
    name: "answers with relative delays and refunds only the latest reservation, once",
    startAt: 1_700_000_000_000,
    limits: [gcraSpec(1, 1000, 1)],
    steps: [
      ...reserveMany(2, [0, 1000]),
      {
        do: "reserve",
        cost: 1,
        maxWaitMillis: 1500,
        expect: { _tag: "Refused", delayMillis: 2000, retryAfterMillis: 500, binding: 0 }
      },
      { do: "refund", id: "r0", cost: 1, expect: false },
      { do: "refund", id: "r1", cost: 1, expect: true },
      { do: "refund", id: "r1", cost: 1, expect: false },
      {
        do: "reserve",
        cost: 1,
        maxWaitMillis: Number.POSITIVE_INFINITY,
        expect: { _tag: "Reserved", delayMillis: 1000 }
      }
    ]
  },
  {
    name: "pause and readPause are relative durations",
    startAt: 1_700_000_000_000,
    limits: [gcraSpec(1, 1000, 1)],
    steps: [
      { do: "readPause", expect: 0 },
      { do: "pause", millis: 1500 },
      { do: "readPause", expect: 1500 },
      { do: "adjust", millis: 1000 },
      { do: "readPause", expect: 500 },
      { do: "reserve", cost: 1, maxWaitMillis: 100, expect: { _tag: "Refused", binding: -1, retryAfterMillis: 400 } }
    ]
  },
  {
    name: "a refused take leaves every limit as it was",
    startAt: 0,
    limits: [
      gcraSpec(1, 1000, 1),
      { algorithm: "sliding-window", limit: 3, windowMillis: 10_000, burst: 3 },
      { algorithm: "fixed-window", limit: 3, windowMillis: 10_000, burst: 3 }
    ],
    steps: [0, 1000, 2000, 10_000, 11_000, 12_000].flatMap((delayMillis): Array<StoreStep> => [
      { do: "reserve", cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY, expect: { _tag: "Reserved", delayMillis } },
      { do: "reserve", cost: 1, maxWaitMillis: 0, expect: { _tag: "Refused" } }
    ])
  },
  {
    name: "rolls back over cancelled runs once the latest goes",
    startAt: 1_700_000_000_000,
    limits: [gcraSpec(1, 1000, 1), { algorithm: "fixed-window", limit: 2, windowMillis: 1000, burst: 2 }],
    steps: [
      ...reserveMany(5, [0, 1000, 2000, 3000, 4000]),
      { do: "refund", id: "r2", cost: 1, expect: false },
      { do: "refund", id: "r1", cost: 1, expect: false },
      { do: "refund", id: "r1", cost: 1, expect: false },
      { do: "refund", id: "r4", cost: 1, expect: true },
      // 3 is now the latest; when it goes, 2 and 1 go with it
      { do: "refund", id: "r3", cost: 1, expect: true },
      {
        do: "reserve",
        cost: 1,
        maxWaitMillis: Number.POSITIVE_INFINITY,
        expect: { _tag: "Reserved", delayMillis: 1000 }
      }
    ]
  },
  {
    name: "settle and tighten take plain data",
    startAt: 1_700_000_000_000,
    limits: [gcraSpec(10, 1000, 10), { algorithm: "fixed-window", limit: 100, windowMillis: 60_000, burst: 100 }],
    steps: [
      {
        do: "reserve",
        id: "r",
        cost: 8,
        costs: [1, 8],
        maxWaitMillis: Number.POSITIVE_INFINITY,
        expect: { _tag: "Reserved", delayMillis: 0 }
      },
      { do: "settle", id: "r", reserved: [1, 8], actual: [1, 100] },
      { do: "reserve", cost: 1, costs: [0, 1], maxWaitMillis: 0, expect: { _tag: "Refused", binding: 1 } },
      { do: "tighten", observations: [{ limit: 0, remaining: 0, resetAfterMillis: 2500 }] },
      {
        do: "reserve",
        cost: 1,
        costs: [1, 0],
        maxWaitMillis: 0,
        expect: { _tag: "Refused", binding: 0, delayMillis: 2500 }
      }
    ]
  },
  {
    name: "an observation it cannot apply is ignored with a warning, a huge reset holds",
    startAt: 1_700_000_000_000,
    limits: [gcraSpec(10, 1000, 10), { algorithm: "sliding-window", limit: 10, windowMillis: 1000, burst: 10 }],
    steps: [
      {
        do: "tighten",
        observations: [
          { limit: 5, remaining: 0, resetAfterMillis: 0 },
          { limit: 1, remaining: Number.NaN, resetAfterMillis: 0 },
          { limit: 1, remaining: 0, resetAfterMillis: -5 },
          { limit: 1, remaining: 0, resetAfterMillis: Number.POSITIVE_INFINITY },
          null,
          // IETF's t=999999999999999, as the store would have been given it
          { limit: 0, remaining: 0, resetAfterMillis: 999_999_999_999_999_000 }
        ],
        warns: [`ignored {"limit":5`, "resetAfterMillis (a finite number ≥ 0)"]
      },
      { do: "reserve", cost: 1, costs: [1, 0], maxWaitMillis: 0, expect: { _tag: "Refused", delayAtLeast: 1e17 } },
      // the sliding window was told nothing it could apply
      { do: "reserve", cost: 10, costs: [0, 10], maxWaitMillis: 0, expect: { _tag: "Reserved" } }
    ]
  }
]
