/**
 * The parity table of the Redis rate limiter store: store options each line refuses (with the
 * defect's message), and the error a fail-closed store gives while Redis cannot be reached, run by
 * both lines (`parity.test.ts` here, `effect3.mjs` for the 0.x line). Plain data, no import.
 */
const cases: ReadonlyArray<Record<string, unknown>> = [
  { prefix: "a{b}" },
  { prefix: 5 },
  { storeDown: "local" },
  { storeDown: "fail-open", localShare: 0.5 },
  { localShare: 0.5 },
  { storeDown: "local", localShare: 0 },
  { storeDown: "local", localShare: 1.5 },
  { storeDown: "sometimes" },
  { clock: "wall" },
  { limiters: { geo: { storeDown: "local" } } },
  { limiters: { geo: { localShare: 0.25 } } },
  { url: "http://127.0.0.1:6379" },
  { commandTimeout: -1 }
]

/** Each case on a valid URL unless it gives its own: the connection's options are checked first. */
export const storeOptions: ReadonlyArray<Record<string, unknown>> = cases.map((o) => ({
  url: "redis://127.0.0.1:1",
  ...o
}))

/** A store on a port nothing listens on: it starts degraded, and fails closed. */
export const unreachable = {
  url: "redis://127.0.0.1:1",
  prefix: "parity:",
  storeDown: "fail-closed",
  connectTimeout: 200,
  commandTimeout: 200
} as const

/** The requests the unreachable store is asked, each failing with `RateLimiterStoreError`. */
export const requests = {
  key: "geo",
  limits: [{ algorithm: "gcra", limit: 10, windowMillis: 1000, burst: 1 }],
  cost: 1,
  maxWaitMillis: 0
} as const
