/**
 * The parity table of the HTTP package's refusals: the fields of each error, client and pool
 * options each line must refuse, and header-profile bounds. Plain data (durations in millis),
 * read by `../parity.test.ts` on Effect 4 and by `effect3.mjs` on Effect 3.
 */

export const upstreamRateLimited = [
  {
    provider: "llm",
    status: 429,
    url: "https://api.example.com/v1/chat",
    retryAfterMillis: 1000,
    retryAfterHeader: "1"
  },
  {
    provider: "geo",
    status: 503,
    url: "https://geo.example.com/search",
    retryAfterMillis: 300000,
    retryAfterHeader: "86400"
  },
  {
    provider: "geo",
    status: 429,
    url: "https://geo.example.com/search",
    retryAfterMillis: 1000,
    retryAfterHeader: undefined
  },
  { provider: "llm", status: 429, url: "https://api.example.com/v1", retryAfterMillis: 1500, retryAfterHeader: "soon" }
] as const

export const upstreamStatus = [
  { provider: "geo", status: 500, url: "https://geo.example.com/search", body: `{"error":"boom"}` },
  { provider: "geo", status: 404, url: "https://geo.example.com/x", body: "" },
  { provider: "llm", status: 408, url: "https://api.example.com/v1", body: "timeout\nretry" }
] as const

export const decodeErrors = [
  { provider: "geo", url: "https://geo.example.com/search", reason: "not JSON (Unexpected token): <html>" },
  { provider: "llm", url: "https://api.example.com/v1", reason: "" }
] as const

export const bodiesTooLarge = [
  { provider: "geo", url: "https://geo.example.com/big", limit: 8388608, received: 8388609 },
  { provider: "geo", url: "https://geo.example.com/big", limit: 16384, received: 65536 }
] as const

export const streamIdleTimeouts = [
  { provider: "llm", url: "https://api.example.com/v1/chat", idleTimeoutMillis: 30000, received: 0 },
  { provider: "llm", url: "https://api.example.com/v1/chat", idleTimeoutMillis: 250, received: 1234567 }
] as const

export const poolsTooSmall = [
  {
    origin: "https://geo.example.com",
    connections: 4,
    required: 6,
    providers: { geo: 4, "geo-batch": 2 },
    reason: "limit"
  },
  { origin: "http://127.0.0.1:8080", connections: 2, required: 3, providers: { a: 3 }, reason: "created" }
] as const

/** Client options each line refuses, with a defect naming the provider, the option and the value. */
export const refusedClientOptions: ReadonlyArray<Record<string, unknown>> = [
  { baseUrl: "mailto:ops@example.com" },
  { baseUrl: "not a url" },
  { baseUrl: 42 },
  { baseUrl: "https://geo.example.com", maxBodySize: 0 },
  { baseUrl: "https://geo.example.com", errorBodyLimit: 1.5 },
  { baseUrl: "https://geo.example.com", streamIdleTimeout: -5 },
  { baseUrl: "https://geo.example.com", streamIdleTimeout: "forever" },
  { baseUrl: "https://geo.example.com", retryAfter: { min: "2 seconds", max: "1 second" } },
  { baseUrl: "https://geo.example.com", retryAfter: { min: "10 minutes" } },
  { baseUrl: "https://geo.example.com", scheduler: "fast" },
  { baseUrl: "https://geo.example.com", preconnect: "yes" }
]

/** Pool options each line refuses. */
export const refusedPoolOptions: ReadonlyArray<Record<string, unknown>> = [
  { connectionsPerOrigin: 0 },
  { connectionsPerOrigin: 2.5 },
  { connectionsPerOrigin: { "*": 0 } },
  { connectionsPerOrigin: { "mailto:x": 2 } },
  { keepAliveTimeout: -1 },
  { connectTimeout: "soon" }
]

/** Bounds `RateLimitHeaders.withMaxReset` refuses. */
export const refusedMaxResets: ReadonlyArray<unknown> = [-1, Number.NaN, "forever", Infinity]
