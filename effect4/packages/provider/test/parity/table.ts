/**
 * The parity table of the provider's refusals: the fields of each error, options each line must
 * refuse, and call scenarios each line runs on its TestClock. Plain data (durations in millis),
 * read by `../parity.test.ts` on Effect 4 and by `effect3.mjs` on Effect 3.
 */

export const callTimeouts = [
  { provider: "geo", timeoutMillis: 2000, attempt: 1, maxAttempts: 3 },
  { provider: "geo", timeoutMillis: 1500, attempt: 3, maxAttempts: 3 },
  { provider: "llm", timeoutMillis: Infinity, attempt: 1, maxAttempts: 1 }
] as const

export const totalTimeouts = [
  { provider: "geo", timeoutMillis: 2500, elapsedMillis: 2500, attempts: 3, phase: "call" },
  { provider: "geo", timeoutMillis: 10000, elapsedMillis: 9000, attempts: 2, phase: "backoff" },
  { provider: "geo", timeoutMillis: 1000, elapsedMillis: 1000, attempts: 0, phase: "permit_wait" },
  { provider: "geo", timeoutMillis: 60000, elapsedMillis: 61250, attempts: 1, phase: "limiter_wait" },
  { provider: "geo", timeoutMillis: 500, elapsedMillis: 500, attempts: 1, phase: "circuit" }
] as const

export const circuitOpens = [
  { breaker: "geo", provider: "geo", state: "open", failures: 5, openedForMillis: 1200, retryAfterMillis: 28800 },
  { breaker: "shared", provider: "geo", state: "half-open", failures: 1, openedForMillis: 30000, retryAfterMillis: 0 },
  { breaker: "alone", provider: undefined, state: "open", failures: 3, openedForMillis: 0, retryAfterMillis: 30000 }
] as const

export const budgetsExhausted = [
  {
    budget: "geo",
    provider: "geo",
    attempt: 2,
    retries: 3,
    firstAttempts: 10,
    allowed: 3,
    windowMillis: 10000,
    lastError: "down"
  },
  {
    budget: "shared",
    provider: "geo",
    attempt: 4,
    retries: 1,
    firstAttempts: 1,
    allowed: 1,
    windowMillis: 60000,
    lastError: "down"
  },
  {
    budget: "alone",
    provider: undefined,
    attempt: 3,
    retries: 0,
    firstAttempts: 0,
    allowed: 0,
    windowMillis: 1500,
    lastError: "down"
  }
] as const

export const providersClosed = [
  { provider: "geo", reason: "closing", gracePeriodMillis: 10000 },
  { provider: "geo", reason: "grace-period-elapsed", gracePeriodMillis: 0 },
  { provider: "geo", reason: "closing", gracePeriodMillis: Infinity }
] as const

/** Options a provider refuses, each with the name "bad" and a bulkhead of one permit. */
export const refusedOptions: ReadonlyArray<Record<string, unknown>> = [
  { attemptTimeout: -5 },
  { totalTimeout: 0 },
  { totalTimeout: "forever" },
  { retry: { maxAttempts: 0 } },
  { retry: { maxAttempts: 2.5 } },
  { retry: { maxAttempts: 2, backoff: { factor: 0.5 } } },
  { retry: { maxAttempts: 2, backoff: { jitter: 2 } } },
  { circuitBreaker: { consecutiveFailures: 0 } },
  { circuitBreaker: { failureRatio: { ratio: 0, window: 4 } } },
  { circuitBreaker: { failureRatio: { ratio: 0.5, window: 4, minimumCalls: 5 } } },
  { gracePeriod: -1 },
  { sampleSize: NaN }
]

/**
 * The one known divergence: a bad field inside `retry.budget` (a union of `false` and the
 * budget's settings). Schema 4 names the field; the Effect 3 options binding reports the union.
 * Each line's sentence is pinned here, so that a change on either side is seen.
 */
export const unionRefusal = {
  options: { retry: { maxAttempts: 2, budget: { ratio: -1 } } },
  effect3: `defect: provider "bad": retry.budget Expected false, actual {"ratio":-1}`,
  effect4: `defect: provider "bad": retry.budget.ratio must be a number ≥ 0 and ≤ 1, got -1`
} as const

/**
 * Calls run on the TestClock, each on a fresh provider named "run": its options, the call
 * (`"never"`, `"fail"`: a retryable error, `"succeed"`), and how far the clock moves.
 */
export interface CallRow {
  readonly options: Record<string, unknown>
  readonly call: "never" | "fail" | "succeed"
  readonly adjustMillis: number
}

export const callRows: ReadonlyArray<CallRow> = [
  { options: { attemptTimeout: "2 seconds" }, call: "never", adjustMillis: 2000 },
  { options: { attemptTimeout: "2 seconds", totalTimeout: "2 seconds" }, call: "never", adjustMillis: 2000 },
  {
    options: {
      attemptTimeout: "1 second",
      totalTimeout: "2500 millis",
      retry: { maxAttempts: 5, backoff: { initial: "100 millis", factor: 1, jitter: 0 }, budget: false }
    },
    call: "never",
    adjustMillis: 2500
  },
  {
    options: {
      totalTimeout: "1500 millis",
      retry: { maxAttempts: 3, backoff: { initial: "1 second", jitter: 0 }, budget: false }
    },
    call: "fail",
    adjustMillis: 1000
  },
  {
    options: {
      retry: { maxAttempts: 3, backoff: { initial: "0 millis", jitter: 0 }, budget: { minRetries: 0, ratio: 0 } }
    },
    call: "fail",
    adjustMillis: 0
  },
  { options: { circuitBreaker: { consecutiveFailures: 1, openFor: "30 seconds" } }, call: "fail", adjustMillis: 0 }
]

/** Sizing inputs, valid and not. */
export const sizings: ReadonlyArray<Record<string, unknown>> = [
  { rate: 50, medianLatency: "200 millis" },
  { rate: 3, medianLatency: "1.5 seconds", headroom: 1.5 },
  { rate: 0, medianLatency: 200 },
  { rate: 10, medianLatency: -1 },
  { rate: 10, medianLatency: 100, headroom: 0.5 }
]
