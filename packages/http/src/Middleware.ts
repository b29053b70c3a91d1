/**
 * A provider as `HttpClient` middleware: every request an `HttpClient` sends becomes a call of the
 * provider (circuit breaker, then per attempt bulkhead → rate limiter with the request's estimate
 * → attempt budget → the request **and its whole body** → settle → release), retried with the 429
 * pause for every caller, within the provider's retry and total budgets. The result is an
 * `HttpClient`, so `@effect/ai-openai`, `@effect/ai-anthropic`, `HttpApiClient` and any code written
 * against `HttpClient.HttpClient` run through the provider unchanged.
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
 * @since 0.3.0
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as Provider from "@sluice/provider/Provider"
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as HttpPool from "./HttpPool.js"
import * as internal from "./internal/middleware.js"
import type * as ProviderHttpClient from "./ProviderHttpClient.js"

/**
 * The options of `ProviderHttpClient` (base URL, user agent, headers, body bounds, `Retry-After`,
 * `estimate`, `usage`, `rateLimitHeaders`, ...) and how requests are told apart.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options extends ProviderHttpClient.Options {
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
 * @since 0.3.0
 * @category errors
 */
export type BodyError = ProviderHttpClient.BodyTooLarge | ProviderHttpClient.StreamIdleTimeout

/**
 * Every refusal of sluice a request through the middleware can meet: the provider's, and the
 * body's bounds.
 *
 * @since 0.3.0
 * @category errors
 */
export type Refusal = Provider.ProviderError | BodyError

/**
 * The client of `provider` over `client`: its error channel names the provider's refusals and
 * the body's bounds beside the client's own errors. Reserves the provider's bulkhead `maxPermits`
 * on the origin of `baseUrl` in the pool for the scope; a request to another origin fails with a
 * `RequestError` naming both.
 *
 * @since 0.3.0
 * @category constructors
 */
export const wrap: <Err, E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  provider: Provider.Provider<Err>,
  options: Options
) => Effect.Effect<
  HttpClient.HttpClient.With<E | Err | BodyError | HttpClientError.ResponseError, R>,
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
 * @since 0.3.0
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
 * `cause` of a `RequestError` (reason `Transport`); `liftRefusals` around the library's call puts
 * it back in the error channel.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: <P>(
  providerTag: Context.Tag<P, Provider.Provider>,
  options: Options
) => Layer.Layer<HttpClient.HttpClient, HttpPool.PoolTooSmall, P | HttpPool.HttpPool> = internal.layer

/**
 * Lifts a sluice refusal carried in an error's `cause` (a `RequestError`'s, or an SDK error's
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
 * @since 0.3.0
 * @category combinators
 */
export const liftRefusals: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Refusal, R> =
  internal.liftRefusals

/**
 * The sluice refusal behind `error`, following `cause` a few levels.
 *
 * @since 0.3.0
 * @category utils
 */
export const refusalOf: (error: unknown) => Option.Option<Refusal> = internal.refusalOf

/**
 * The default of `Options.streamed`.
 *
 * @since 0.3.0
 * @category utils
 */
export const asksForStream: (request: HttpClientRequest.HttpClientRequest) => boolean = internal.asksForStream
