/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import * as S from "@sluice/core/FleetScripts"
import * as Connection from "@sluice/redis/RedisConnection"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Api from "../RedisBulkhead.js"
import * as Acquire from "./acquire.js"
import { Impl, loadScripts } from "./core.js"
import * as metrics from "./metrics.js"
import * as settings from "./settings.js"

/** @internal */
export const leaseLostTotal = metrics.leaseLostTotal
/** @internal */
export const storeDegraded = metrics.storeDegraded
/** @internal */
export const storeErrorsTotal = metrics.storeErrorsTotal
/** @internal */
export const fallbackTotal = metrics.fallbackTotal
/** @internal */
export const keysOf = S.keysOf
/** @internal */
export const config = settings.config

/**
 * The same bulkhead as a `Bulkhead.Bulkhead`, its store error in the type: a plain object of bound
 * functions, as the local bulkhead is, so `const { run } = b` works. `stats` answers the last
 * snapshot while Redis is down (the interface's `stats` never fails).
 */
const viewOf = (impl: Impl): Bulkhead.Bulkhead<Api.BulkheadStoreError> => ({
  [Bulkhead.TypeId]: Bulkhead.TypeId,
  name: impl.settings.name,
  maxPermits: impl.settings.maxPermits,
  maxWait: impl.settings.maxWait,
  ...(impl.settings.lanes === undefined ? {} : { laneOf: (lane: string | undefined) => impl.laneInfo(lane) }),
  run: (self, options) => Acquire.run(impl, self, options),
  acquire: (options) => Acquire.acquire(impl, options),
  resize: (permits) => impl.resize(permits),
  stats: Effect.orElseSucceed(impl.stats, () => impl.lastStats)
})

/** The renewal loop: sleeps what the last beat answered, then beats again, for the scope's life. */
const renewal = (impl: Impl) => {
  const loop = (delay: number): Effect.Effect<never> =>
    Effect.flatMap(Effect.andThen(Effect.sleep(Duration.millis(delay)), impl.beat), loop)
  return loop(impl.renewEveryMillis)
}

/** @internal */
export const make = <const O extends Api.Options>(
  options: O
): Effect.Effect<Api.RedisBulkhead<Api.StoreErrorOf<O>>, never, Scope.Scope | Connection.RedisConnection> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.try({ try: () => settings.resolve(options), catch: (e) => e }).pipe(Effect.orDie)
    const connection = yield* Connection.RedisConnection
    const clock = yield* Effect.clockWith(Effect.succeed)
    // the registry alone, not the maker's whole context: a bulkhead outlives the scope that made it
    const registry = Context.make(Metric.MetricRegistry, yield* Metric.MetricRegistry)
    const impl = new Impl(resolved, connection, loadScripts(resolved.lanes !== undefined), clock, registry)
    yield* connection.subscribe(impl.grantChannel, (message) => impl.onGrants(message))
    // leases, waiting leases, claims and the safety-net check, one script each per beat
    yield* Effect.forkScoped(renewal(impl))
    impl.series.degraded.updateUnsafe(0, impl.context)
    // a process without lanes on a name that lane processes keep busy is refused: its scripts never
    // read the lane keys (Redis down: it starts degraded, unchecked)
    if (resolved.lanes === undefined) {
      const held = yield* Effect.option(
        Effect.tryPromise(() => connection.client.hget(impl.keys[1], S.LANES_FIELD))
      )
      if (Option.isSome(held) && typeof held.value === "string") {
        return yield* Effect.die(new Cause.IllegalArgumentError(S.policyMismatch(resolved.name, "", held.value)))
      }
    }
    // this process's K becomes the fleet's (the last to start sets it), and its lane policy the name's
    // if it has none or is idle (another is refused: a defect); Redis down: it starts degraded
    yield* Effect.ignore(impl.resize(resolved.permits))
    const bulkhead: Api.RedisBulkhead = {
      name: resolved.name,
      maxPermits: resolved.maxPermits,
      maxWait: resolved.maxWait,
      leaseTtl: Duration.millis(resolved.leaseTtlMillis),
      storeDown: resolved.storeDown,
      run: (self, runOptions) => Acquire.run(impl, self, runOptions),
      acquire: (runOptions) => Acquire.acquire(impl, runOptions),
      resize: (permits) => impl.resize(permits),
      stats: impl.stats,
      bulkhead: viewOf(impl)
    }
    // with a fallback policy no call, acquire or resize fails with the store error (`StoreErrorOf`)
    return bulkhead as Api.RedisBulkhead<never> as Api.RedisBulkhead<Api.StoreErrorOf<O>>
  })

/** @internal */
export const layer = <I, E, const O extends Api.Options>(
  tag: Context.Key<I, Bulkhead.Bulkhead<E>> & Api.Names<Api.StoreErrorOf<O>, E>,
  options: O
): Layer.Layer<I, never, Connection.RedisConnection> =>
  // `Names` makes the key's error include the bulkhead's
  Layer.effect(tag, Effect.map(make(options), (bulkhead) => bulkhead.bulkhead as Bulkhead.Bulkhead<E>))

/** @internal */
export const layerConfig = <I, E>(
  tag: Context.Key<I, Bulkhead.Bulkhead<E>> & Api.Names<Api.BulkheadStoreError, E>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, Config.ConfigError, Connection.RedisConnection> =>
  Layer.effect(
    tag,
    Effect.flatMap(config, (options) =>
      Effect.map(make(options), (bulkhead) =>
        bulkhead.bulkhead as Bulkhead.Bulkhead<unknown> as Bulkhead.Bulkhead<E>))
  )
