/**
 * The HTTP middleware's sentences and judgements on plain values: the messages of its errors, the
 * warnings of its usage metering, what a cost a limiter can charge is, and which failures never
 * reached the upstream. Both Effect lines' `@sluice/http` build their text here, so that the same
 * failure prints the same bytes on Effect 3 and Effect 4. Durations come in nanoseconds
 * (undefined: infinite), so that no Effect `Duration` crosses into the core.
 *
 * @since 0.1.0
 */
import { formatDuration } from "./OptionMessages.js"

/**
 * The WHATWG `URL` class, global in Node and in browsers: the core's `lib` declares neither, so
 * the part read here is declared here.
 */
declare const URL: new(input: string) => { readonly protocol: string }

// -----------------------------------------------------------------------------
// where requests go
// -----------------------------------------------------------------------------

/**
 * Why `url` has no http(s) origin (what a pool is kept per), or `undefined` when it has one.
 *
 * @since 0.1.0
 * @category checks
 */
export const notHttpUrl = (url: unknown): string | undefined => {
  if (typeof url !== "string") return "not a string"
  let protocol: string
  try {
    protocol = new URL(url).protocol
  } catch {
    return "not an absolute URL"
  }
  // only http and https reach an HTTP upstream; any other scheme has no origin to pool on
  return protocol === "http:" || protocol === "https:" ? undefined : `its scheme is ${protocol}`
}

/**
 * Why a connection did not open, in words: a host with several addresses that all refused fails
 * with an `AggregateError` whose message is empty, and whose code and first error say it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const connectFailure = (error: Error): string => {
  if (error.message !== "") return error.message
  const { code, errors } = error as Error & { readonly code?: string; readonly errors?: ReadonlyArray<unknown> }
  const first = errors?.[0]
  if (first instanceof Error && first.message !== "") return first.message
  return code ?? String(error)
}

// -----------------------------------------------------------------------------
// what reached the upstream
// -----------------------------------------------------------------------------

/**
 * Error codes of a connection that never opened: the upstream never saw the request, so its
 * reservation is released. Any other failure may come after the upstream counted it.
 */
const neverConnected = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT"
])

const hasField = <K extends string>(u: unknown, key: K): u is { readonly [k in K]: unknown } =>
  typeof u === "object" && u !== null && key in u

const codeOf = (u: unknown): string | undefined =>
  hasField(u, "code") && typeof u.code === "string" ? u.code : undefined

/**
 * Whether a request failed before it left: an invalid URL or a body that could not be encoded, or
 * a transport failure whose cause (or its cause) is a connection that never opened. `reason` is the
 * request error's kind (`"InvalidUrl"`, `"Encode"`, `"Transport"`, ...), `cause` what it carries.
 *
 * @since 0.1.0
 * @category usage
 */
export const neverSent = (reason: string, cause: unknown): boolean => {
  if (reason === "InvalidUrl" || reason === "Encode") return true
  if (reason !== "Transport") return false
  const code = codeOf(cause) ?? (hasField(cause, "cause") ? codeOf(cause.cause) : undefined)
  return code !== undefined && neverConnected.has(code)
}

// -----------------------------------------------------------------------------
// usage metering
// -----------------------------------------------------------------------------

/**
 * A value for a log line: text quoted, objects with their fields (`undefined` ones included).
 *
 * @since 0.1.0
 * @category formatting
 */
export const show = (u: unknown): string => {
  if (typeof u !== "object" || u === null) return typeof u === "string" ? JSON.stringify(u) : String(u)
  const fields = Object.entries(u).map(([key, value]) => `${key}: ${show(value)}`)
  return `{ ${fields.join(", ")} }`
}

/**
 * What a usage function was given, for the warning that it read nothing.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeBody = (body: unknown): string => {
  if (body === undefined) return "none"
  if (typeof body === "string") return `text of ${body.length} characters`
  if (ArrayBuffer.isView(body)) return `${body.byteLength} bytes`
  return "parsed JSON"
}

/**
 * Why `cost` is no cost a limiter can charge (`undefined` when it is one): a number, or units by
 * dimension, each an integer of at least `min` (0 for a dimension of a record), on the dimensions
 * the limiter has.
 *
 * @since 0.1.0
 * @category usage
 */
export const junkCost = (
  cost: unknown,
  min: number,
  dimensions: ReadonlySet<string> | undefined
): string | undefined => {
  const unit = (n: unknown, least: number) => typeof n === "number" && Number.isSafeInteger(n) && n >= least
  if (typeof cost === "number") return unit(cost, min) ? undefined : `not an integer ≥ ${min}`
  if (typeof cost !== "object" || cost === null) return "neither a number nor units by dimension"
  const entries = Object.entries(cost)
  if (entries.length === 0) return "no dimension"
  for (const [dimension, n] of entries) {
    if (!unit(n, 0)) return `${dimension} is not an integer ≥ 0`
    if (dimensions !== undefined && !dimensions.has(dimension)) {
      return `the limiter has no dimension ${dimension} (it has ${[...dimensions].join(", ")})`
    }
  }
  return undefined
}

/**
 * The warnings of a provider's usage metering, each naming the provider and the value.
 *
 * @since 0.1.0
 * @category messages
 */
export const metering = {
  ignoredHeader: (
    provider: string,
    problem: { readonly header: string; readonly value: unknown; readonly reason: string }
  ) =>
    `provider "${provider}": ignored the rate-limit header ${problem.header}: ${
      JSON.stringify(problem.value)
    } (${problem.reason})`,
  tightenFailed: (provider: string, message: string) =>
    `provider "${provider}": could not apply its rate-limit headers: ${message}`,
  usageThrew: (provider: string, error: unknown) =>
    `provider "${provider}": its usage option threw (${String(error)}); the estimate stands`,
  usageReadNothing: (provider: string, status: number, body: unknown) =>
    `provider "${provider}": its usage option read nothing from a ${status} response (body: ${
      describeBody(body)
    }); the estimate stands`,
  usageJunk: (provider: string, read: unknown, junk: string) =>
    `provider "${provider}": its usage option returned ${show(read)} (${junk}); the estimate stands`,
  estimateThrew: (provider: string, error: unknown) =>
    `provider "${provider}": its estimate option threw (${String(error)}); charged its default cost`,
  estimateJunk: (provider: string, cost: unknown, junk: string) =>
    `provider "${provider}": its estimate option returned ${show(cost)} (${junk}); charged its default cost`
} as const

// -----------------------------------------------------------------------------
// the errors' sentences
// -----------------------------------------------------------------------------

/**
 * A size as messages write it: `512 B`, `1.5 KiB`, `2.0 MiB`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatBytes = (n: number): string =>
  n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`

/**
 * `provider "geo" answered 429 to https://…; paused the provider for 2s (Retry-After: 2)`.
 *
 * @since 0.1.0
 * @category messages
 */
export const upstreamRateLimited = (f: {
  readonly provider: string
  readonly status: number
  readonly url: string
  readonly retryAfterNanos: bigint | undefined
  readonly retryAfterHeader: string | undefined
}): string =>
  `provider "${f.provider}" answered ${f.status} to ${f.url}; paused the provider for ${
    formatDuration(f.retryAfterNanos)
  } (Retry-After: ${f.retryAfterHeader ?? "absent"})`

/**
 * `provider "geo" answered 500 to https://…: <the body's first 200 characters>`.
 *
 * @since 0.1.0
 * @category messages
 */
export const upstreamStatus = (f: {
  readonly provider: string
  readonly status: number
  readonly url: string
  readonly body: string
}): string => {
  const excerpt = f.body.length > 0 ? `: ${f.body.slice(0, 200)}` : ""
  return `provider "${f.provider}" answered ${f.status} to ${f.url}${excerpt}`
}

/**
 * `provider "geo" sent a body from https://… that could not be decoded: <reason>`.
 *
 * @since 0.1.0
 * @category messages
 */
export const decodeError = (f: { readonly provider: string; readonly url: string; readonly reason: string }): string =>
  `provider "${f.provider}" sent a body from ${f.url} that could not be decoded: ${f.reason}`

/**
 * `provider "geo" sent more than 1.0 MiB from https://… (1.0 MiB received); the request was aborted`.
 *
 * @since 0.1.0
 * @category messages
 */
export const bodyTooLarge = (f: {
  readonly provider: string
  readonly url: string
  readonly limit: number
  readonly received: number
}): string =>
  `provider "${f.provider}" sent more than ${formatBytes(f.limit)} from ${f.url} (${
    formatBytes(f.received)
  } received); the request was aborted`

/**
 * `provider "llm" sent nothing for 30s on the stream from https://… (12.0 KiB received); the
 * request was aborted`.
 *
 * @since 0.1.0
 * @category messages
 */
export const streamIdleTimeout = (f: {
  readonly provider: string
  readonly url: string
  readonly idleTimeoutNanos: bigint | undefined
  readonly received: number
}): string =>
  `provider "${f.provider}" sent nothing for ${formatDuration(f.idleTimeoutNanos)} on the stream from ${f.url} (${
    formatBytes(f.received)
  } received); the request was aborted`

/**
 * The connections the bulkheads on an origin need, past its pool's limit: the providers'
 * reservations and why the limit is what it is.
 *
 * @since 0.1.0
 * @category messages
 */
export const poolTooSmall = (f: {
  readonly origin: string
  readonly connections: number
  readonly required: number
  readonly providers: Readonly<Record<string, number>>
  readonly reason: "limit" | "created"
}): string => {
  const parts = Object.entries(f.providers).map(([name, n]) => `${name} ${n}`).join(" + ")
  const why = f.reason === "limit"
    ? `its pool allows ${f.connections} connections`
    : `its pool was already created with ${f.connections} connections (reserve before the first request)`
  return `origin ${f.origin}: ${why}, but the bulkheads on it need ${f.required} (${parts}); ` +
    `a smaller pool would queue calls that hold a permit where no metric sees them`
}
