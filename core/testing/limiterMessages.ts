/**
 * The rate limiter's message parity table: each refusal's fields (times in milliseconds) and the
 * sentence both Effect lines must print for it, byte for byte. The core's test checks the builders
 * against it; each line's test builds its own error classes from the same rows.
 */

/** A limit as the rows give it (the shape of `LimiterMessages.LimitFields`; data, no import). */
export interface RowLimit {
  readonly dimension: string
  readonly limit: number
  readonly windowMillis: number
  readonly algorithm: "gcra" | "fixed-window" | "sliding-window"
  readonly burst: number
}

/** A `RateLimitExceeded` row. */
export interface ExceededRow {
  readonly fields: {
    readonly limiter: string
    readonly maxWaitMillis: number
    readonly retryAfterMillis: number
    readonly cost: number
    readonly limit: RowLimit | undefined
  }
  readonly message: string
}

/** A `CostExceedsCapacity` row. */
export interface CapacityRow {
  readonly fields: {
    readonly limiter: string
    readonly dimension: string
    readonly cost: number
    readonly capacity: number
    readonly limit: RowLimit
  }
  readonly message: string
}

const gcra = (limit: number, windowMillis: number, burst: number, dimension = "default") => ({
  dimension,
  limit,
  windowMillis,
  algorithm: "gcra" as const,
  burst
})

export const exceededRows: ReadonlyArray<ExceededRow> = [
  {
    fields: { limiter: "nominatim", maxWaitMillis: 2_000, retryAfterMillis: 100, cost: 1, limit: gcra(10, 1_000, 1) },
    message: `rate limiter "nominatim": a start within 2s is impossible under 10 per 1s (burst 1); retry after 100ms`
  },
  {
    fields: {
      limiter: "daily",
      maxWaitMillis: 0,
      retryAfterMillis: 86_399_700,
      cost: 3,
      limit: { dimension: "default", limit: 1000, windowMillis: 86_400_000, algorithm: "fixed-window", burst: 1000 }
    },
    message:
      `rate limiter "daily": a start now for cost 3 is impossible under 1000 per 1d (fixed window); retry after 86399.7s`
  },
  {
    fields: { limiter: "geo", maxWaitMillis: 1_500, retryAfterMillis: 3_600_000, cost: 1, limit: undefined },
    message: `rate limiter "geo": a start within 1.5s is impossible while paused; retry after 1h`
  },
  {
    fields: {
      limiter: "llm",
      maxWaitMillis: 120_000,
      retryAfterMillis: 0.25,
      cost: 1800,
      limit: gcra(200_000, 60_000, 200_000, "tokens")
    },
    message:
      `rate limiter "llm": a start within 2min for cost 1800 is impossible under tokens: 200000 per 1min (burst 200000); retry after 0.25ms`
  }
]

export const capacityRows: ReadonlyArray<CapacityRow> = [
  {
    fields: { limiter: "costly", dimension: "default", cost: 3, capacity: 2, limit: gcra(10, 1_000, 2) },
    message:
      `rate limiter "costly": cost 3 on dimension "default" exceeds what 10 per 1s (burst 2) can ever hold (2); it would wait forever`
  },
  {
    fields: {
      limiter: "window",
      dimension: "default",
      cost: 4,
      capacity: 3,
      limit: { dimension: "default", limit: 3, windowMillis: 60_000, algorithm: "sliding-window", burst: 3 }
    },
    message:
      `rate limiter "window": cost 4 on dimension "default" exceeds what 3 per 1min (sliding window) can ever hold (3); it would wait forever`
  },
  {
    fields: {
      limiter: "openai",
      dimension: "tokens",
      cost: 300_000,
      capacity: 200_000,
      limit: gcra(200_000, 60_000, 200_000, "tokens")
    },
    message:
      `rate limiter "openai": cost 300000 on dimension "tokens" exceeds what tokens: 200000 per 1min (burst 200000) can ever hold (200000); it would wait forever`
  }
]

/**
 * A limiter's options and the takes made on it at one instant (on each line's `TestClock`): each
 * line prints what every take ends with (`started`, its error's `String`, or its defect's
 * message), and what `make` refused, the same on both.
 */
export interface TakeRow {
  readonly options: Readonly<Record<string, unknown>>
  readonly takes: ReadonlyArray<Readonly<Record<string, unknown>>>
}

export const takeRows: ReadonlyArray<TakeRow> = [
  { options: { name: "bad", limit: 0, window: 1000 }, takes: [] },
  { options: { name: "bad", limit: 1.5, window: 1000 }, takes: [] },
  { options: { name: "bad", limit: 10, window: 0 }, takes: [] },
  { options: { name: "bad", limit: 10, window: -5 }, takes: [] },
  { options: { name: "bad", limit: 10, window: "soon" }, takes: [] },
  { options: { name: "bad", limit: 10, window: 1000, maxWait: -1 }, takes: [] },
  { options: { name: "bad", limit: 10, window: 1000, dimension: "" }, takes: [] },
  { options: { name: "bad", limit: 10, window: 1000, algorithm: "leaky" }, takes: [] },
  { options: { name: "bad", limit: 10, window: 1000, algorithm: "fixed-window", burst: 2 }, takes: [] },
  { options: { name: "bad", limit: 10, window: 1000, limits: [{ limit: 1, window: 1000 }] }, takes: [] },
  { options: { name: "bad", limits: [] }, takes: [] },
  { options: { name: "bad", limits: [{ limit: 1, window: 1000, algorithm: "sliding-window", burst: 3 }] }, takes: [] },
  { options: { name: "", limit: 1, window: 1000 }, takes: [] },
  {
    options: { name: "nominatim", limit: 10, window: 1000, maxWait: 2000 },
    takes: [...Array.from({ length: 22 }, () => ({})), { cost: 2 }, { maxWait: 0 }]
  },
  { options: { name: "costly", limit: 10, window: 1000, burst: 2 }, takes: [{ cost: 3 }, { cost: -1 }, { cost: 1.5 }] },
  { options: { name: "window", limit: 3, window: 60_000, algorithm: "sliding-window" }, takes: [{ cost: 4 }] },
  {
    options: {
      name: "llm",
      limits: [
        { dimension: "requests", limit: 10, window: 1000, burst: 10 },
        { dimension: "tokens", limit: 200_000, window: 60_000, burst: 200_000 }
      ]
    },
    takes: [{ cost: { tokens: 300_000 } }, { cost: { token: 1 } }, { cost: { requests: -1 } }, { maxWait: -5 }]
  },
  {
    options: { name: "daily", limit: 2, window: 86_400_000, algorithm: "fixed-window", maxWait: 0 },
    takes: [{}, {}, {}]
  }
]
