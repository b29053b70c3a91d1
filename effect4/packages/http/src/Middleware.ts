/**
 * A provider as `HttpClient` middleware: every request an `HttpClient` sends becomes a call of the
 * provider (circuit breaker, then per attempt bulkhead → rate limiter with the request's estimate
 * → attempt budget → the request **and its whole body** → settle → release), retried with the 429
 * pause for every caller, within the provider's retry and total budgets. The result is an
 * `HttpClient`, so `HttpApiClient` (`effect/http-api`) and any code written against
 * `HttpClient.HttpClient` run through the provider unchanged.
 *
 * Status, headers and body reach the caller as the upstream sent them, error statuses included
 * (after the provider's last attempt). A request is either:
 *
 * - **buffered** (the default): its body is read inside the permit, bounded by `maxBodySize`
 *   (`BodyTooLarge` past it, the request aborted), and handed on from memory;
 * - **streamed**, when it asks for a stream (its `Accept` names `text/event-stream`, or its JSON
 *   body says `"stream": true`, as OpenAI's and Anthropic's do; `Options.streamed` decides
 *   otherwise): the response is handed on at its headers and its permit held until the body
 *   ends, fails, or its reader stops; `StreamIdleTimeout` after `streamIdleTimeout` without a
 *   chunk from the upstream, or without a read by the reader.
 *
 * @since 2.0.0
 */
import type * as Provider from "@sluice/provider/Provider"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as HttpPool from "./HttpPool.js"
import * as internal from "./internal/middleware.js"
import type * as ProviderHttpClient from "./ProviderHttpClient.js"
import type * as RateLimitHeaders from "./RateLimitHeaders.js"

/**
 * What `Options.usage` reads: the response's status and headers, and its body as read inside the
 * permit (see `Options.usage`).
 *
 * @since 2.0.0
 * @category models
 */
export interface UsageResponse {
  readonly status: number
  readonly headers: Headers.Headers
  readonly body: unknown
}

/**
 * The provider's HTTP settings (base URL, user agent, headers, body bounds, `Retry-After`,
 * `estimate`, `usage`, `rateLimitHeaders`, ...) and how requests are told apart.
 *
 * @since 2.0.0
 * @category models
 */
export interface Options {
  /** The provider's base URL; request URLs are appended to it. Its origin is what the pool reserves on. */
  readonly baseUrl: string
  /**
   * Sent with every request. Third-party APIs expect to know who calls them (Nominatim's usage
   * policy requires it): set it to your application and a contact. Default `sluice-http/` and
   * this package's version.
   */
  readonly userAgent?: string | undefined
  /** Headers sent with every request (an API key header, say). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The most bytes a response body may have, counted as they arrive. Default 8 MiB. */
  readonly maxBodySize?: number | undefined
  /** How much of an error body is read (and so the connection kept) before aborting. Default 64 KiB. */
  readonly errorBodyLimit?: number | undefined
  /**
   * How a `Retry-After` is obeyed: the pause used when it is missing or unreadable (`fallback`,
   * default 1 s), and the bounds it is clamped to (`min` default 100 ms, `max` default 5 minutes).
   */
  readonly retryAfter?: {
    readonly fallback?: Duration.Input | undefined
    readonly min?: Duration.Input | undefined
    readonly max?: Duration.Input | undefined
  } | undefined
  /** Streams fail with `StreamIdleTimeout` after this long without a chunk. Default 30 seconds. */
  readonly streamIdleTimeout?: Duration.Input | undefined
  /**
   * Send `traceparent`/`b3` headers. Default `false`: a third party has no use for your trace ids,
   * and some reject unknown headers.
   */
  readonly tracePropagation?: boolean | undefined
  /**
   * Open the bulkhead's `maxPermits` connections when the client is built, instead of one by one
   * as the first calls need them (a TCP handshake each, and a TLS one for https). The first calls
   * of a batch then start on the rate limiter's schedule rather than a handshake later. Building
   * the client waits for them (at most the pool's `connectTimeout`). Connections not used within
   * the pool's `keepAliveTimeout` close, as idle ones do; one that cannot open is logged as a
   * warning and left to the call that needs it. Only the pool's own `HttpClient` uses them.
   * Default `false`.
   */
  readonly preconnect?: boolean | undefined
  /**
   * Where a call's fibers run, from its permit wait to its body's last byte. `"check-phase"`
   * (default): a Scheduler whose every dispatch is a `setImmediate`, whatever the caller set.
   * `"caller"`: the caller's scheduler. On Effect 4.1 a Scheduler places yields and forks only: a
   * fiber resumed by I/O runs in the I/O callback under any Scheduler, so the 0.x line's effect
   * (undici's deferred writes before the work responses resume) is not had here. Under the
   * `TestClock` calls stay on the caller's scheduler whatever this says: a test that makes many
   * calls before a sleep could register its sleep after the clock moved.
   *
   * @since 2.0.0
   */
  readonly scheduler?: "check-phase" | "caller" | undefined
  /**
   * The cost of a request on the provider's limiter, before it is sent: with `usage`, an estimate
   * that each attempt reserves and settles with what the upstream reports (say prompt tokens plus
   * `max_tokens`: `{ requests: 1, tokens: n }`). A request's own `cost` option wins. Default: the
   * provider's (1).
   *
   * @since 2.0.0
   */
  readonly estimate?: ((request: HttpClientRequest.HttpClientRequest) => Provider.Cost) | undefined
  /**
   * The actual usage a response reports, e.g. OpenAI's
   * `({ body }) => ({ tokens: body.usage.total_tokens })`. Given, every attempt reserves its
   * estimate and settles it inside the permit, before the release, with what this returns
   * (`undefined`: the estimate stands). The body is the one read inside the permit: parsed JSON
   * for a JSON content type, text for `text/*`, the bytes otherwise; for a streamed response, the
   * text that arrived (its final usage event included). An attempt that never reached the upstream (the connection refused)
   * releases its reservation; one that failed after keeps its estimate. An exception thrown here
   * is logged and keeps the estimate.
   *
   * @since 2.0.0
   */
  readonly usage?: ((response: UsageResponse) => Provider.Cost | undefined) | undefined
  /**
   * Read every response's rate-limit headers with this profile (`RateLimitHeaders.openai`, …) and
   * tighten the provider's limiter with what they say: a `remaining` below its own view moves its
   * state down, `remaining: 0` holds the dimension until the reset; a header never raises a
   * configured limit. Observations of dimensions the limiter does not have are ignored (map names
   * with `RateLimitHeaders.rename`); unreadable values are logged with the header and the value.
   *
   * @since 2.0.0
   */
  readonly rateLimitHeaders?: RateLimitHeaders.Profile | undefined
  /**
   * Whether a request may be sent again after a failed attempt. Default: by method (GET, HEAD,
   * OPTIONS, PUT, DELETE, TRACE) or an `Idempotency-Key` header. An LLM API answering 429 did not
   * run the request: `true` lets the provider retry its POSTs (a 5xx is then retried too).
   */
  readonly idempotent?: boolean | ((request: HttpClientRequest.HttpClientRequest) => boolean) | undefined
  /**
   * Whether a request's response is streamed (permit held until the body ends) rather than read
   * whole inside the permit. Default: an `Accept` naming `text/event-stream`, or a JSON body with
   * `"stream": true`.
   */
  readonly streamed?: ((request: HttpClientRequest.HttpClientRequest) => boolean) | undefined
}

/**
 * What the body's bounds add to the provider's refusals.
 *
 * @since 2.0.0
 * @category errors
 */
export type BodyError = ProviderHttpClient.BodyTooLarge | ProviderHttpClient.StreamIdleTimeout

/**
 * Every refusal of sluice a request through the middleware can meet: the provider's, and the
 * body's bounds.
 *
 * @since 2.0.0
 * @category errors
 */
export type Refusal = Provider.ProviderError | BodyError

/**
 * The client of `provider` over `client`: its error channel names the provider's refusals and
 * the body's bounds beside the client's own errors. Reserves the provider's bulkhead `maxPermits`
 * on the origin of `baseUrl` in the pool for the scope; a request to another origin fails with a
 * `HttpClientError` (reason `InvalidUrlError`) naming both.
 *
 * @since 2.0.0
 * @category constructors
 */
export const wrap: <Err, E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  provider: Provider.Provider<Err>,
  options: Options
) => Effect.Effect<
  HttpClient.HttpClient.With<E | Err | BodyError | HttpClientError.HttpClientError, R>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> = internal.wrap

/**
 * `wrap` over the pool's own undici client: the typed client of `provider`.
 *
 * @example
 * ```ts
 * import { HttpPool, Middleware } from "@sluice/http"
 * import { Provider } from "@sluice/provider"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const geo = yield* Provider.make({ name: "geo", bulkhead: { permits: 2, maxWait: "5 seconds" } })
 *   const http = yield* Middleware.make(geo, { baseUrl: "https://geo.example.com" })
 *   return yield* http.get("/search?q=Lyon").pipe(
 *     Effect.flatMap((response) => response.json),
 *     Effect.catchTag("PermitWaitTimeout", () => Effect.succeed("queued too long"))
 *   )
 * }).pipe(Effect.scoped, Effect.provide(HttpPool.layer()))
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: <Err>(
  provider: Provider.Provider<Err>,
  options: Options
) => Effect.Effect<
  HttpClient.HttpClient.With<HttpClientError.HttpClientError | Err | BodyError>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | Scope.Scope
> = internal.makeTyped

/**
 * The `HttpClient` service, every request a call of the provider of `providerTag`, on the pool's
 * undici client: for libraries that require `HttpClient.HttpClient`. A refusal travels as the
 * `cause` of an `HttpClientError`'s `TransportError` reason; `liftRefusals` around the library's call puts
 * it back in the error channel.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: <P>(
  providerTag: Context.Key<P, Provider.Provider>,
  options: Options
) => Layer.Layer<HttpClient.HttpClient, HttpPool.PoolTooSmall, P | HttpPool.HttpPool> = internal.layer

/**
 * Lifts a sluice refusal carried in an error's `cause` (an `HttpClientError`'s reason, or an SDK error's
 * around it) back into the error channel, so that `Effect.catchTag("RateLimitExceeded", ...)`
 * works around a library's call. Other errors pass unchanged.
 *
 * @example
 * ```ts
 * import { Middleware } from "@sluice/http"
 * import { Effect } from "effect"
 *
 * declare const askModel: Effect.Effect<string, Error>
 *
 * const answer = askModel.pipe(
 *   Middleware.liftRefusals,
 *   Effect.catchTag("RateLimitExceeded", () => Effect.succeed("over the token budget, try later")),
 *   Effect.catchTag("PermitWaitTimeout", () => Effect.succeed("queued too long"))
 * )
 * ```
 *
 * @since 2.0.0
 * @category combinators
 */
export const liftRefusals: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refusal, R> =
  internal.liftRefusals

/**
 * The sluice refusal behind `error`, following `cause` a few levels.
 *
 * @since 2.0.0
 * @category utils
 */
export const refusalOf: (error: unknown) => Option.Option<Refusal> = internal.refusalOf

/**
 * The default of `Options.streamed`.
 *
 * @since 2.0.0
 * @category utils
 */
export const asksForStream: (request: HttpClientRequest.HttpClientRequest) => boolean = internal.asksForStream
