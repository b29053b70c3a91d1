/**
 * The parity table of the bulkhead: refusals built from their fields, and options each line
 * refuses, run by both lines (`parity.test.ts` here, `effect3.mjs` for the 0.x line).
 */
const full = [
  { bulkhead: "geo", requested: 1, cost: 1, permits: 2, inFlight: 2, waiting: 1, maxWaiting: 1 },
  { bulkhead: "geo", requested: 3, cost: 3, permits: 4, inFlight: 4, waiting: 7, maxWaiting: 7 },
  { bulkhead: "geo", requested: 1, cost: 1, permits: 1, inFlight: 1, waiting: 0, maxWaiting: 0 },
  {
    bulkhead: "llm",
    lane: "batch",
    bound: "lane",
    requested: 2,
    cost: 2,
    permits: 8,
    inFlight: 8,
    waiting: 3,
    maxWaiting: 3
  },
  {
    bulkhead: "llm",
    lane: "chat",
    bound: "bulkhead",
    requested: 1,
    cost: 1,
    permits: 8,
    inFlight: 8,
    waiting: 20,
    maxWaiting: 20
  }
] as const

/** `waited` in milliseconds: each line makes its own `Duration` of it. */
const timeout = [
  { bulkhead: "geo", waitedMillis: 2000, requested: 1, cost: 1, permits: 1, inFlight: 1, aheadWhenQueued: 1 },
  { bulkhead: "geo", waitedMillis: 0, requested: 1, cost: 1, permits: 1, inFlight: 1, aheadWhenQueued: 0 },
  { bulkhead: "geo", waitedMillis: 1500.5, requested: 2, cost: 2, permits: 3, inFlight: 3, aheadWhenQueued: 4 },
  { bulkhead: "geo", waitedMillis: 90_061_001, requested: 1, cost: 1, permits: 2, inFlight: 1, aheadWhenQueued: 2 },
  {
    bulkhead: "llm",
    lane: "batch",
    waitedMillis: 30_000,
    requested: 1,
    cost: 1,
    permits: 8,
    inFlight: 8,
    aheadWhenQueued: 1
  }
] as const

/** Options `makeUnsafe` refuses with a defect, the same sentence on both lines. */
const refused: ReadonlyArray<Record<string, unknown>> = [
  { name: "x", permits: 0 },
  { name: "x", permits: 1.5 },
  { name: "x", permits: 2 ** 60 },
  { name: "", permits: 1 },
  { name: "x", permits: 4, maxPermits: 2 },
  { name: "x", permits: 1, maxWaiting: -1 },
  { name: "x", permits: 1, maxWait: -5 },
  { name: "x", permits: 1, maxWait: "-5 seconds" },
  { name: "x", permits: 1, maxWait: [0, NaN] },
  { name: "x", permits: 1, order: "random" }
]

export const table = { full, timeout, refused }
