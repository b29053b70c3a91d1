/**
 * One connection pool for the process, sized from the bulkheads that use it.
 *
 * A connection pool limits connections per origin, and a pool smaller than the bulkheads in front
 * of it is an invisible second bound: callers hold a permit, then queue inside the HTTP client,
 * where no metric of theirs sees them. Each provider's HTTP client therefore *reserves* its
 * bulkhead's `maxPermits` on its origin when its layer is built; the pool for an origin is created
 * on first use with exactly the sum of the reservations, and a limit set by the user that is
 * smaller than that sum is refused when the layer is built, naming the origin and the numbers.
 *
 * @since 2.0.0
 */
import type * as Undici from "@effect/platform-node/Undici"
import type * as HttpPoolLedger from "@sluice/core/HttpPoolLedger"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as errors from "./HttpError.js"
import * as internal from "./internal/httpPool.js"

/**
 * @since 2.0.0
 * @category models
 */
export interface Options {
  /**
   * The most connections per origin, when you want to set it: a number for every origin, or a
   * record by origin (`"https://nominatim.openstreetmap.org"`), with `"*"` for the others. An
   * origin without a limit gets exactly the sum of the bulkheads reserved on it (or no limit if
   * nothing reserved it). A limit below that sum is refused with `PoolTooSmall`.
   */
  readonly connectionsPerOrigin?: number | Readonly<Record<string, number>> | undefined
  /** How long an idle connection is kept for reuse. Default 4 seconds (undici's). */
  readonly keepAliveTimeout?: Duration.Input | undefined
  /** The TCP (and TLS) connect budget. Default 10 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
}

/**
 * One origin's reservations and limit.
 *
 * @since 2.0.0
 * @category models
 */
export interface OriginReservations extends HttpPoolLedger.OriginReservations {}

/**
 * undici's counters for one origin's pool.
 *
 * @since 2.0.0
 * @category models
 */
export interface PoolStats extends HttpPoolLedger.PoolStats {}

/**
 * What `preconnect` opened on an origin.
 *
 * @since 2.0.0
 * @category models
 */
export interface Preconnected {
  readonly origin: string
  /** Connections asked for, less what the origin's pool could never take (its size, and those already waiting). */
  readonly requested: number
  readonly opened: number
  /** Why the first connection that could not open did not, when one did not. */
  readonly failure: string | undefined
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Service {
  /** The undici dispatcher that owns the pools; every sluice HTTP client sends through it. */
  readonly dispatcher: Undici.Dispatcher
  /**
   * Reserves `connections` on `origin` for `provider` until the current scope closes. Fails with
   * `PoolTooSmall` if the origin's limit, or its pool already created, cannot hold the new total.
   */
  readonly reserve: (
    reservation: { readonly origin: string; readonly provider: string; readonly connections: number }
  ) => Effect.Effect<void, PoolTooSmall, Scope.Scope>
  /** Reservations and limits per origin: a snapshot. */
  readonly reservations: Effect.Effect<ReadonlyArray<OriginReservations>>
  /**
   * Opens up to `connections` connections to `origin` now (TCP, and TLS for https) for its pool to
   * take before it connects on its own: the first calls of a batch find them open instead of each
   * paying a handshake while the others wait on the rate limiter's schedule. A connection not taken
   * within the pool's `keepAliveTimeout`, or that the server closes meanwhile, is closed and
   * forgotten, as an idle one would be. Each waits for the pool as soon as it is open; the effect
   * ends when every attempt has (at most `connectTimeout`), and an interrupted one closes what
   * opens after. One that cannot connect is counted out, not failed: the call that needs it
   * connects then and reports a typed error. Only requests sent through `dispatcher` take them.
   */
  readonly preconnect: (origin: string, connections: number) => Effect.Effect<Preconnected>
  /**
   * undici's pool counters per origin (origins that were dispatched to, or preconnected): a
   * snapshot.
   */
  readonly stats: Effect.Effect<Readonly<Record<string, PoolStats>>>
}

/**
 * The pool service's identifier.
 *
 * @since 2.0.0
 * @category tags
 */
export interface HttpPool {
  readonly _: unique symbol
}

/**
 * The pool service.
 *
 * @since 2.0.0
 * @category tags
 */
export const HttpPool: Context.Service<HttpPool, Service> = internal.tag

/**
 * The bulkheads reserved on an origin need more connections than its pool may have.
 *
 * @since 2.0.0
 * @category errors
 */
export const PoolTooSmall: typeof errors.PoolTooSmall = errors.PoolTooSmall

/**
 * @since 2.0.0
 * @category errors
 */
export interface PoolTooSmall extends InstanceType<typeof errors.PoolTooSmall> {}

/**
 * Builds the pool service: an undici `Agent` whose per-origin `Pool`s are sized from the
 * reservations, destroyed when the scope closes.
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: (options?: Options | undefined) => Effect.Effect<Service, never, Scope.Scope> = internal.make

/**
 * The pool for the process. Provide it once, under every provider's HTTP client layer.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: (options?: Options | undefined) => Layer.Layer<HttpPool> = internal.layer

/**
 * Effect's `HttpClient` (`effect/http`), on @effect/platform-node's undici client, sending through the
 * pool's dispatcher, **without any provider's bounds**: what `ProviderHttpClient` sends through.
 * Code that calls a quota-limited API with it bypasses every bulkhead and limiter; a library that
 * asks for `HttpClient.HttpClient` (`HttpApiClient`, ...) should get `Middleware.layer` instead.
 *
 * @since 2.0.0
 * @category layers
 */
export const layerUnboundedHttpClient: Layer.Layer<HttpClient.HttpClient, never, HttpPool> = internal.layerHttpClient

/**
 * The pool and an `HttpClient` on it **without any provider's bounds**, in one layer: what
 * `ProviderHttpClient` layers need below them. Keep its `HttpClient` away from libraries that
 * call a quota-limited API (provide them `Middleware.layer`): it answers them unbounded.
 *
 * @example
 * ```ts
 * import { HttpPool } from "@sluice/http"
 *
 * // every origin sized from the bulkheads of the providers that use it
 * const Http = HttpPool.layerWithUnboundedHttpClient()
 * // or with a limit of your own, checked against those bulkheads when the layers are built
 * const Bounded = HttpPool.layerWithUnboundedHttpClient({ connectionsPerOrigin: 32 })
 * ```
 *
 * @since 2.0.0
 * @category layers
 */
export const layerWithUnboundedHttpClient: (
  options?: Options | undefined
) => Layer.Layer<HttpPool | HttpClient.HttpClient> = internal.layerWithHttpClient

/**
 * @deprecated Renamed `layerUnboundedHttpClient`: its client has no provider's bounds.
 * @since 2.0.0
 * @category layers
 */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient, never, HttpPool> = internal.layerHttpClient

/**
 * @deprecated Renamed `layerWithUnboundedHttpClient`: its client has no provider's bounds.
 * @since 2.0.0
 * @category layers
 */
export const layerWithHttpClient: (
  options?: Options | undefined
) => Layer.Layer<HttpPool | HttpClient.HttpClient> = internal.layerWithHttpClient
