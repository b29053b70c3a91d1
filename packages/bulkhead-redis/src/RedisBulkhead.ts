/**
 * A bulkhead shared by a fleet: K permits under a name, held by the calls of every process that
 * uses the name, with the local bulkhead's API, errors and budgets.
 *
 * Waiters take a ticket from one global counter and are served in that order: a released permit
 * goes to the oldest ticket, a heavy ticket at the head is not overtaken, a newcomer never barges.
 * A held permit is a lease its process renews; a process that dies loses its permits when the lease
 * ends, and they pass on. A grant is told in the reply to the script that made it, when it went to
 * the bulkhead that sent the script, and otherwise by one message on a shard channel; a periodic
 * renewal is the safety net for a lost message.
 *
 * @since 0.1.0
 */
import type { Bulkhead } from "@sluice/bulkhead"
import type { RedisConnection } from "@sluice/redis/RedisConnection"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/redisBulkhead.js"

/**
 * What a call gets while Redis cannot answer (the limiter store's policies):
 *
 * - `"fail-closed"` (default): the call fails with `BulkheadStoreError`; nothing starts that the
 *   shared bound did not allow.
 * - `"local"`: the call is admitted by a local FIFO bulkhead of `⌊K × localShare⌋` permits (at
 *   least 1), with the same `maxWaiting` and `maxWait`: with `localShare` = 1 / the number of
 *   processes, the fleet stays within K.
 * - `"fail-open"`: the call is admitted without a fleet permit, but one process still runs at most
 *   K calls at once (a local bulkhead of K): the whole fleet's bound, never more, in one process.
 *
 * A holder admitted by the fallback is counted in Redis once it answers again (a claim, when its
 * permits are free), never twice; a waiter already queued in Redis keeps its place.
 *
 * @since 0.1.0
 * @category models
 */
export type StoreDownPolicy = "fail-closed" | "fail-open" | "local"

/**
 * What a holder does when it learns that its lease ended (its process was paused past the lease
 * TTL, or Redis lost the lease): its permits may already be someone else's.
 *
 * - `"log"` (default): count it (`sluice_bulkhead_lease_lost_total`), log it, let the call finish.
 * - `"interrupt"`: also interrupt the call (of `run`; a scoped `acquire` has no call to stop).
 *
 * @since 0.1.0
 * @category models
 */
export type OnLeaseLost = "log" | "interrupt"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends Omit<Bulkhead.Settings, "order"> {
  /** The name shared by the fleet: every process using it shares its permits. No braces. */
  readonly name: string
  /**
   * K, the permits of the whole fleet. Every process of a name should give the same number: the
   * last one to start (or to `resize`) sets it for all.
   */
  readonly permits: number
  /** How many tickets may wait, fleet-wide; beyond, `BulkheadFull` at once. Default: unbounded. */
  readonly maxWaiting?: number | undefined
  /**
   * How long a lease lasts without renewal; it is renewed every third of it. A dead holder's
   * permits come back within this time. Default 10 s; from 300 ms to 1 hour.
   */
  readonly leaseTtl?: Duration.DurationInput | undefined
  /** Default `"log"`. */
  readonly onLeaseLost?: OnLeaseLost | undefined
  /** Default `"fail-closed"`. */
  readonly storeDown?: StoreDownPolicy | undefined
  /**
   * With `storeDown: "local"` (required there): the share of K this process may hold alone while
   * Redis is down, in (0, 1]; 1 / the number of processes keeps the fleet within K.
   */
  readonly localShare?: number | undefined
  /** Prepended to every key; no braces. Default `"sluice:bh:"`. */
  readonly prefix?: string | undefined
  /**
   * Lanes across the fleet (`BulkheadLanes.priority` or `BulkheadLanes.fairShare`), with the local
   * bulkhead's rules, decided by one script per grant on the scripts' clock. Every process of a name
   * must give the same policy (its lanes' `maxWaiting` and `maxWait` may differ): one that differs
   * is refused, naming both. Releases then always go through Redis (no hand-overs).
   *
   * @since 0.4.0
   */
  readonly lanes?: Bulkhead.Settings["lanes"]
}

/**
 * The store error a bulkhead built from options `O` adds to its calls: `BulkheadStoreError`,
 * unless `O` names a fallback policy (`"fail-open"` or `"local"`), whose calls never fail with it.
 *
 * @since 0.1.0
 * @category type-level
 */
export type StoreErrorOf<O> = O extends { readonly storeDown: "fail-open" | "local" } ? never : BulkheadStoreError

/**
 * The distributed bulkhead. `E` is its store error (`StoreErrorOf` its options): what `run`,
 * `acquire` and `resize` may fail with beyond the bulkhead's own errors. `bulkhead` is the same
 * bulkhead as a `Bulkhead.Bulkhead<E>`, for a `Provider` or anything else that takes a bulkhead.
 *
 * @since 0.1.0
 * @category models
 */
export interface RedisBulkhead<out E = BulkheadStoreError> {
  readonly name: string
  readonly maxPermits: number
  /** The permit-wait budget (`Duration.infinity` when unbounded). */
  readonly maxWait: Duration.Duration
  readonly leaseTtl: Duration.Duration
  readonly storeDown: StoreDownPolicy
  /** Runs `self` holding `permits` permits (default 1), given back exactly once however it ends. */
  readonly run: <A, E2, R>(
    self: Effect.Effect<A, E2, R>,
    options?: Bulkhead.RunOptions | undefined
  ) => Effect.Effect<A, E2 | Bulkhead.BulkheadError | E, R>
  /** Takes `permits` permits for the lifetime of the current scope. */
  readonly acquire: (
    options?: Bulkhead.RunOptions | undefined
  ) => Effect.Effect<void, Bulkhead.BulkheadError | E, Scope.Scope>
  /**
   * Sets K for the whole fleet, between 1 and `maxPermits`; shrinking pre-empts nobody. With a
   * fallback policy it never fails: the local bulkhead follows at once, Redis at its next answer.
   */
  readonly resize: (permits: number) => Effect.Effect<void, E>
  /** The fleet's counters, read from Redis: a snapshot, never a reservation. */
  readonly stats: Effect.Effect<Bulkhead.Stats, BulkheadStoreError>
  /**
   * This bulkhead as a `Bulkhead.Bulkhead<E>`: a `Provider` given it carries `E` in its error type.
   * Its `stats` answers the last snapshot it read while Redis is down.
   */
  readonly bulkhead: Bulkhead.Bulkhead<E>
}

/**
 * @since 0.1.0
 * @category type ids
 */
export const StoreErrorTypeId: unique symbol = Symbol.for("@sluice/bulkhead-redis/BulkheadStoreError")

/**
 * Redis could not answer for a bulkhead. With `storeDown: "fail-closed"` a call fails with it and
 * holds nothing; with a fallback policy only `stats` (of `RedisBulkhead`) does.
 *
 * @since 0.1.0
 * @category errors
 */
export class BulkheadStoreError extends Data.TaggedError("BulkheadStoreError")<{
  /** The bulkhead's name. */
  readonly bulkhead: string
  /** What was asked of Redis: `acquire`, `release`, `leave`, `renew`, `claim`, `stats`, `resize`. */
  readonly operation: string
  readonly cause: unknown
  /** The bulkhead's store-down policy. */
  readonly policy: StoreDownPolicy
}> {
  /**
   * @since 0.1.0
   */
  readonly [StoreErrorTypeId]: typeof StoreErrorTypeId = StoreErrorTypeId
  /**
   * @since 0.1.0
   */
  override get message(): string {
    const cause = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `bulkhead "${this.bulkhead}": Redis did not answer its ${this.operation} (${cause})` +
      (this.policy === "fail-closed" ? "; it fails closed while Redis is unreachable" : "")
  }
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isBulkheadStoreError = (u: unknown): u is BulkheadStoreError => Predicate.hasProperty(u, StoreErrorTypeId)

/**
 * Creates the bulkhead on the `RedisConnection` of the context. It lives in the current scope: its
 * subscription and renewal fiber end with it. Invalid options are a defect naming the option and
 * the value. Building does not fail when Redis is unreachable; calls do, until it answers.
 *
 * @example
 * ```ts
 * import { RedisBulkhead } from "@sluice/bulkhead-redis"
 * import { RedisConnection } from "@sluice/redis"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   // every process running this shares 8 permits
 *   const nominatim = yield* RedisBulkhead.make({ name: "nominatim", permits: 8, maxWait: "30 seconds" })
 *   yield* nominatim.run(Effect.succeed("Lyon"))
 * }).pipe(Effect.scoped, Effect.provide(RedisConnection.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <const O extends Options>(
  options: O
) => Effect.Effect<RedisBulkhead<StoreErrorOf<O>>, never, Scope.Scope | RedisConnection> = internal.make

/**
 * Provides the bulkhead, as a `Bulkhead.Bulkhead<StoreErrorOf<O>>`, under a bulkhead service tag:
 * a `Provider` or any code written against `@sluice/bulkhead` uses it unchanged. The tag names the
 * store error (`Bulkhead.Tag(id)<Self, BulkheadStoreError>()`) unless a fallback policy is given.
 *
 * @example
 * ```ts
 * import { Bulkhead } from "@sluice/bulkhead"
 * import { RedisBulkhead } from "@sluice/bulkhead-redis"
 * import { RedisConnection } from "@sluice/redis"
 * import { Effect, Layer } from "effect"
 *
 * class Nominatim extends Bulkhead.Tag("nominatim")<Nominatim, RedisBulkhead.BulkheadStoreError>() {}
 *
 * const NominatimLive = RedisBulkhead.layer(Nominatim, { name: "nominatim", permits: 8 }).pipe(
 *   Layer.provide(RedisConnection.layer({ url: "redis://127.0.0.1:6379" }))
 * )
 *
 * const lookup = (q: string) => Effect.flatMap(Nominatim, (bulkhead) => bulkhead.run(Effect.succeed(q)))
 * const main = lookup("Lyon").pipe(Effect.provide(NominatimLive))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <I, const O extends Options>(
  tag: Context.Tag<I, Bulkhead.Bulkhead<StoreErrorOf<O>>>,
  options: O
) => Layer.Layer<I, never, RedisConnection> = internal.layer

/**
 * Provides the bulkhead under a bulkhead service tag, its options read from `Config`: e.g.
 * `RedisBulkhead.layerConfig(Nominatim, Config.map(Config.nested(RedisBulkhead.config, "NOMINATIM"),
 * (o) => ({ ...o, name: "nominatim" })))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: <I>(
  tag: Context.Tag<I, Bulkhead.Bulkhead<BulkheadStoreError>>,
  config: Config.Config<Options>
) => Layer.Layer<I, ConfigError.ConfigError, RedisConnection> = internal.layerConfig

/**
 * The options but the name as `Config`, validated as `make` validates them (invalid data, not a
 * defect): `PERMITS` (required), `MAX_PERMITS`, `MAX_WAITING`, `MAX_WAIT` and `LEASE_TTL`
 * (durations), `ON_LEASE_LOST` (`log` or `interrupt`), `STORE_DOWN` (`fail-closed`, `fail-open` or `local`),
 * `LOCAL_SHARE` (a number in (0, 1], required with `local`), `PREFIX`.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Omit<Options, "name">> = internal.config

/**
 * `sluice_bulkhead_lease_lost_total`: leases a holder found gone at its renewal, labelled `name`.
 * Each one is a call that ran while its permits may have been someone else's.
 *
 * @since 0.1.0
 * @category metrics
 */
export const leaseLostTotal: Metric.Metric.Counter<number> = internal.leaseLostTotal

/**
 * `sluice_bulkhead_store_degraded`: 1 while the bulkhead cannot reach Redis, labelled `name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const storeDegraded: Metric.Metric.Gauge<number> = internal.storeDegraded

/**
 * `sluice_bulkhead_store_errors_total`: commands Redis did not answer, labelled `name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const storeErrorsTotal: Metric.Metric.Counter<number> = internal.storeErrorsTotal

/**
 * `sluice_bulkhead_fallback_total`: calls admitted by the local fallback while Redis was down,
 * labelled `name` and `policy` (`fail-open` or `local`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const fallbackTotal: Metric.Metric.Counter<number> = internal.fallbackTotal

/**
 * The Redis keys of one bulkhead (all under the hash tag `{name}`) and its grant channel.
 *
 * @since 0.1.0
 * @category keys
 */
export const keysOf: (
  prefix: string,
  name: string
) => { readonly keys: ReadonlyArray<string>; readonly channel: string } = internal.keysOf
