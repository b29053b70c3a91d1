/**
 * A provider's HTTP client as a service with typed methods: sugar over `Middleware`, whose calls
 * it makes (the same permit held to the body's last byte, the same 429 pause, bounds and metering).
 * What it adds: error statuses fail as `UpstreamRateLimited` / `UpstreamStatus` (their bodies
 * drained first) instead of being handed back, `json` decodes with a schema, per-request provider
 * options, and a service tag per provider.
 *
 * @since 2.0.0
 */
import type * as Provider from "@sluice/provider/Provider"
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as errors from "./HttpError.js"
import type * as HttpPool from "./HttpPool.js"
import * as internalConfig from "./internal/config.js"
import * as internal from "./internal/providerHttpClient.js"
import type * as Middleware from "./Middleware.js"

/**
 * @since 2.0.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 2.0.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The middleware's options (`Middleware.Options`) but for how requests are told apart: here the
 * method chooses (`stream` streams, the others read the body whole) and `RequestOptions.idempotent`
 * lets a request be retried.
 *
 * @since 2.0.0
 * @category models
 */
export interface Options extends Omit<Middleware.Options, "idempotent" | "streamed"> {}

/**
 * What `Options.usage` reads (`Middleware.UsageResponse`).
 *
 * @since 2.0.0
 * @category models
 */
export type UsageResponse = Middleware.UsageResponse

/**
 * Options of one request: the provider's per-call options, plus the retry opt-in for methods that
 * are not idempotent.
 *
 * @since 2.0.0
 * @category models
 */
export interface RequestOptions extends Provider.CallOptions {
  /**
   * Retry this request even if its method is not idempotent (POST, PATCH), e.g. because it carries
   * an idempotency key. A request with an `Idempotency-Key` header counts as idempotent already.
   */
  readonly idempotent?: boolean | undefined
}

/**
 * What a request can fail with besides the provider's refusals.
 *
 * @since 2.0.0
 * @category errors
 */
export type HttpError =
  | UpstreamRateLimited
  | UpstreamStatus
  | DecodeError
  | BodyTooLarge
  | HttpClientError.HttpClientError

/**
 * @since 2.0.0
 * @category models
 */
export interface ProviderHttpClient<out Err = Provider.ProviderError> {
  readonly [TypeId]: TypeId
  readonly provider: Provider.Provider<Err>
  /** The origin the pool reserved the provider's `maxPermits` on. */
  readonly origin: string
  /**
   * Sends `request`, reads its body whole inside the permit (bounded by `maxBodySize`), and runs
   * `handle` on a successful (2xx) response, from memory, after the release. Error statuses fail
   * with `UpstreamRateLimited` or `UpstreamStatus`, their bodies drained first. For a body too
   * large to hold, use `stream`.
   */
  readonly execute: <A, E, R, const C extends RequestOptions = {}>(
    request: HttpClientRequest.HttpClientRequest,
    handle: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, E, R>,
    options?: (C & RequestOptions) | undefined
  ) => Effect.Effect<A, E | Err | Provider.CallErrorsOf<C> | HttpError, R>
  /** The body as JSON, decoded with `schema`; a body that is not JSON or does not match is a `DecodeError`. */
  readonly json: <A, I, R, const C extends RequestOptions = {}>(
    request: HttpClientRequest.HttpClientRequest,
    schema: Schema.Codec<A, I, R>,
    options?: (C & RequestOptions) | undefined
  ) => Effect.Effect<A, Err | Provider.CallErrorsOf<C> | HttpError, R>
  /** The body as text (UTF-8). */
  readonly text: <const C extends RequestOptions = {}>(
    request: HttpClientRequest.HttpClientRequest,
    options?: (C & RequestOptions) | undefined
  ) => Effect.Effect<string, Err | Provider.CallErrorsOf<C> | HttpError>
  /**
   * The body as a stream of chunks. The permit is held until the stream ends (or its consumer
   * stops); instead of the attempt budget, the stream fails with `StreamIdleTimeout` after
   * `streamIdleTimeout` without a chunk (from the upstream, or read by the consumer). A failure
   * before the headers is retried like any call; after them, never (the consumer may have part of
   * the body), and the call counts as failed. An `attemptTimeout` of its own bounds the whole
   * stream, one attempt only.
   */
  readonly stream: <const C extends RequestOptions = {}>(
    request: HttpClientRequest.HttpClientRequest,
    options?: (C & RequestOptions) | undefined
  ) => Stream.Stream<Uint8Array, Err | Provider.CallErrorsOf<C> | HttpError | StreamIdleTimeout>
}

/**
 * The upstream answered 429 (or 503 with `Retry-After`); the provider's limiter was paused for
 * `retryAfter` for every caller. Retryable.
 *
 * @since 2.0.0
 * @category errors
 */
export const UpstreamRateLimited: typeof errors.UpstreamRateLimited = errors.UpstreamRateLimited

/**
 * @since 2.0.0
 * @category errors
 */
export interface UpstreamRateLimited extends InstanceType<typeof errors.UpstreamRateLimited> {}

/**
 * Any other status that is not 2xx. Retryable when 5xx or 408.
 *
 * @since 2.0.0
 * @category errors
 */
export const UpstreamStatus: typeof errors.UpstreamStatus = errors.UpstreamStatus

/**
 * @since 2.0.0
 * @category errors
 */
export interface UpstreamStatus extends InstanceType<typeof errors.UpstreamStatus> {}

/**
 * The body was not JSON, or did not match the schema.
 *
 * @since 2.0.0
 * @category errors
 */
export const DecodeError: typeof errors.DecodeError = errors.DecodeError

/**
 * @since 2.0.0
 * @category errors
 */
export interface DecodeError extends InstanceType<typeof errors.DecodeError> {}

/**
 * The body passed `maxBodySize` while it arrived; the request was aborted.
 *
 * @since 2.0.0
 * @category errors
 */
export const BodyTooLarge: typeof errors.BodyTooLarge = errors.BodyTooLarge

/**
 * @since 2.0.0
 * @category errors
 */
export interface BodyTooLarge extends InstanceType<typeof errors.BodyTooLarge> {}

/**
 * A stream went `streamIdleTimeout` without a chunk; the request was aborted.
 *
 * @since 2.0.0
 * @category errors
 */
export const StreamIdleTimeout: typeof errors.StreamIdleTimeout = errors.StreamIdleTimeout

/**
 * @since 2.0.0
 * @category errors
 */
export interface StreamIdleTimeout extends InstanceType<typeof errors.StreamIdleTimeout> {}

/**
 * Builds the client of `provider` and reserves the provider's bulkhead `maxPermits` on the origin
 * of `baseUrl` in the pool, for the lifetime of the scope (and, with `preconnect`, opens them).
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: <Err>(
  provider: Provider.Provider<Err>,
  options: Options
) => Effect.Effect<
  ProviderHttpClient<Err>,
  HttpPool.PoolTooSmall,
  HttpPool.HttpPool | HttpClient.HttpClient | Scope.Scope
> = internal.make

/**
 * A service tag for one provider's HTTP client, with its layer.
 *
 * @since 2.0.0
 * @category tags
 */
export interface TagClass<Self, Id extends string>
  extends Context.ServiceClass<Self, `@sluice/http/ProviderHttpClient/${Id}`, ProviderHttpClient>
{
  readonly id: Id
  /** Builds the client once, over the provider of `providerTag`. */
  readonly layer: <P>(
    providerTag: Context.Key<P, Provider.Provider>,
    options: Options
  ) => Layer.Layer<Self, HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient>
  /** Builds the client once from `Config`, e.g. `Config.nested(ProviderHttpClient.config, "NOMINATIM")`. */
  readonly layerConfig: <P>(
    providerTag: Context.Key<P, Provider.Provider>,
    config: Config.Config<Options>
  ) => Layer.Layer<
    Self,
    Config.ConfigError | HttpPool.PoolTooSmall,
    P | HttpPool.HttpPool | HttpClient.HttpClient
  >
}

/**
 * Declares the HTTP client service of one provider:
 *
 * @example
 * ```ts
 * import { HttpClientRequest } from "effect/http"
 * import { HttpPool, ProviderHttpClient } from "@sluice/http"
 * import { Provider } from "@sluice/provider"
 * import { Effect, Layer, Schema } from "effect"
 *
 * class Nominatim extends Provider.Tag("nominatim")<Nominatim>() {}
 * class NominatimHttp extends ProviderHttpClient.Tag("nominatim")<NominatimHttp>() {}
 *
 * const Place = Schema.Struct({ lat: Schema.String, lon: Schema.String, display_name: Schema.String })
 *
 * const search = (q: string) =>
 *   Effect.flatMap(NominatimHttp, (http) =>
 *     http.json(HttpClientRequest.get("/search", { urlParams: { q, format: "jsonv2" } }), Schema.Array(Place)))
 *
 * const Live = NominatimHttp.layer(Nominatim, {
 *   baseUrl: "https://nominatim.openstreetmap.org",
 *   userAgent: "my-geocoder/1.0 (ops@example.com)"
 * }).pipe(
 *   // provideMerge: the `Nominatim` tag and the client share one provider
 *   Layer.provideMerge(Nominatim.layer({ bulkhead: { permits: 1 }, attemptTimeout: "10 seconds" })),
 *   Layer.provide(HttpPool.layerWithUnboundedHttpClient())
 * )
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self>() => TagClass<Self, Id> = internal.Tag

/**
 * A layer that builds the client over the provider of `providerTag` and provides it under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: <I, P>(
  tag: Context.Key<I, ProviderHttpClient>,
  providerTag: Context.Key<P, Provider.Provider>,
  options: Options
) => Layer.Layer<I, HttpPool.PoolTooSmall, P | HttpPool.HttpPool | HttpClient.HttpClient> = internal.layer

/**
 * A layer that reads the options from `Config` and builds the client over the provider of
 * `providerTag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layerConfig: <I, P>(
  tag: Context.Key<I, ProviderHttpClient>,
  providerTag: Context.Key<P, Provider.Provider>,
  config: Config.Config<Options>
) => Layer.Layer<
  I,
  Config.ConfigError | HttpPool.PoolTooSmall,
  P | HttpPool.HttpPool | HttpClient.HttpClient
> = internal.layerConfig

/**
 * The options as `Config`: `BASE_URL` (required), `USER_AGENT`, `MAX_BODY_SIZE`,
 * `ERROR_BODY_LIMIT`, `RETRY_AFTER_FALLBACK`, `RETRY_AFTER_MIN`, `RETRY_AFTER_MAX`,
 * `STREAM_IDLE_TIMEOUT`, `TRACE_PROPAGATION`, `PRECONNECT`, `SCHEDULER`. Values are checked as the options are:
 * a refusal is a `ConfigError` naming the key and the value. With no key at all, the error is
 * missing data (`Config.option` reads it as not configured); with some keys but no `BASE_URL`, it is
 * invalid data naming `BASE_URL`, which no `Config.option` hides. `headers` are not configuration
 * (an API key is a secret): add them with `Config.map` and `Config.redacted`.
 *
 * @since 2.0.0
 * @category config
 */
export const config: Config.Config<Options> = internalConfig.config

/**
 * What the provider's verdict counts as upstream pushback from this client's errors:
 * `UpstreamRateLimited` (429, or 503 with `Retry-After`) and `UpstreamStatus` of 500 or more. A
 * 4xx is the request's fault, not the upstream's.
 *
 * @since 2.0.0
 * @category predicates
 */
export const isUpstreamError: (error: unknown) => boolean = errors.isUpstreamError

/**
 * What `withUpstreamErrors` takes: a provider's `Options` or `Settings` (`bulkhead` is what makes it
 * one, as `isUpstreamError` alone would accept any object).
 *
 * @since 2.0.0
 * @category models
 */
export type UpstreamErrorSettings = Pick<Provider.Options, "bulkhead" | "isUpstreamError">

/**
 * A provider's settings whose `isUpstreamError` also recognises this client's upstream failures
 * (`isUpstreamError`), or'ed with the one they already have. Without it the provider counts no
 * 429 as pushback, and its verdict never reads `upstream`: the provider is built before the
 * client, from settings only you pass.
 *
 * @example
 * ```ts
 * import { ProviderHttpClient } from "@sluice/http"
 * import { Provider } from "@sluice/provider"
 * import { Config } from "effect"
 *
 * class Nominatim extends Provider.Tag("nominatim")<Nominatim>() {}
 *
 * const Live = Nominatim.layer(ProviderHttpClient.withUpstreamErrors({ bulkhead: { permits: 1 } }))
 * const FromConfig = Nominatim.layerConfig(
 *   Config.map(Config.nested(Provider.config, "NOMINATIM"), ProviderHttpClient.withUpstreamErrors)
 * )
 * ```
 *
 * @since 2.0.0
 * @category combinators
 */
export const withUpstreamErrors: <const S extends UpstreamErrorSettings>(
  settings: S
) => S & { readonly isUpstreamError: (error: unknown) => boolean } = internal.withUpstreamErrors

/**
 * Parses a `Retry-After` header (delta-seconds or an HTTP date) into the pause it asks for,
 * clamped to `[min, max]`; a missing or unreadable header gives `fallback`. The HTTP date is read
 * against `now`, once, where it is received.
 *
 * @since 2.0.0
 * @category utils
 */
export const parseRetryAfter: (
  header: string | undefined,
  now: number,
  bounds: { readonly fallbackMillis: number; readonly minMillis: number; readonly maxMillis: number }
) => Duration.Duration = internal.parseRetryAfter

/**
 * `sluice_http_upstream_status_total`: responses the upstream answered with an error status,
 * labelled `name` (the provider) and `status`: 429s (and 503s with `Retry-After`) are the
 * upstream's own rate limiting, the rest its failures. Counted per response, retried ones too.
 *
 * @since 2.0.0
 * @category metrics
 */
export const upstreamStatusTotal: Metric.Counter<number> = internal.upstreamStatusTotal
