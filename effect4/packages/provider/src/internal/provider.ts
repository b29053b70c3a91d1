/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import { RateLimiter, type RateLimiterStore } from "@sluice/rate-limiter"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as CircuitBreaker from "../CircuitBreaker.js"
import type * as Api from "../Provider.js"
import * as RetryBudget from "../RetryBudget.js"
import { call } from "./call.js"
import { Series } from "./metrics.js"
import { resolve, type Resolved } from "./options.js"
import { ProviderState } from "./providerState.js"
import { shutdown } from "./shutdown.js"

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("@sluice/provider/Provider") as Api.TypeId

/** @internal */
export const isProvider = (u: unknown): u is Api.Provider<unknown> => Predicate.hasProperty(u, TypeId)

/**
 * The line that made a provider's first call, as `Effect.withSpan` would record it for a failed
 * span, captured once per provider rather than on every call, and formatted only when read.
 */
const callSite = (): () => string | undefined => {
  const error = new Error()
  let cache: string | undefined | false = false
  return () => {
    if (cache === false) cache = error.stack?.split("\n")[3]?.trim()
    return cache
  }
}

/** @internal */
export const make = (
  options: Api.Options
): Effect.Effect<Api.Provider<unknown>, never, Scope.Scope | RateLimiterStore.RateLimiterStore> =>
  Effect.suspend(() => {
    let resolved: Resolved
    try {
      resolved = resolve(options)
    } catch (defect) {
      return Effect.die(defect)
    }
    return Effect.gen(function*() {
      const given = options.bulkhead
      const bulkhead = Bulkhead.isBulkhead(given)
        ? given
        : yield* Bulkhead.make({ ...given, name: resolved.name })
      const settings = options.rateLimiter
      const limiter = settings === undefined || RateLimiter.isRateLimiter(settings)
        ? settings
        : yield* RateLimiter.make({ ...settings, name: resolved.name })
      // a breaker or a budget given is used as it is, shared with whatever else uses it
      const breakerGiven = options.circuitBreaker
      const circuitBreaker = breakerGiven === undefined || CircuitBreaker.isCircuitBreaker(breakerGiven)
        ? breakerGiven
        : CircuitBreaker.makeUnsafe({ ...breakerGiven, name: resolved.name })
      const budgetGiven = options.retry?.budget
      const budget = resolved.budget === undefined || budgetGiven === false
        ? undefined
        : RetryBudget.isRetryBudget(budgetGiven)
        ? budgetGiven
        : RetryBudget.makeUnsafe({ ...budgetGiven, name: resolved.name })
      // made before shutdown's finalizer is added, so that it is closed after the calls drained
      const running = yield* FiberSet.make()
      // the metric registry alone, not the maker's whole context: the provider outlives the fiber
      const maker = yield* Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(Metric.MetricRegistry)))
      const series = new Series(resolved.name, Context.make(Metric.MetricRegistry, maker))
      const state = new ProviderState(
        resolved,
        bulkhead,
        Duration.toMillis(bulkhead.maxWait),
        limiter,
        circuitBreaker,
        budget,
        running,
        series
      )
      // added after the limiter's own finalizers, so it runs first: calls drain while the limiter still works
      yield* Effect.addFinalizer(() => shutdown(state))
      let traced = false
      const provider: Api.Provider<unknown> = {
        [TypeId]: TypeId,
        name: resolved.name,
        bulkhead,
        rateLimiter: limiter,
        call: (self, callOptions) => {
          if (!traced) {
            traced = true
            state.spanTrace = callSite()
          }
          return call(state, self, callOptions) as never
        },
        stats: state.stats,
        recording: state.recording
      }
      return provider
    })
  })

/** @internal */
export const withProvider = dual<
  (
    provider: Api.Provider<unknown>,
    options?: Api.CallOptions | undefined
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown, R>,
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    provider: Api.Provider<unknown>,
    options?: Api.CallOptions | undefined
  ) => Effect.Effect<A, unknown, R>
>((args) => Effect.isEffect(args[0]), (self, provider, options) => provider.call(self, options))

// ---------------------------------------------------------------------------------------------
// services and layers
// ---------------------------------------------------------------------------------------------

/** The widened options' provider: `ErrorsOf<Options>`, whose bulkhead store error is unknown to the type. */
const asProvider = (provider: Api.Provider<unknown>): Api.Provider => provider as Api.Provider

/** @internal */
export const layer = <I>(
  tag: Context.Key<I, Api.Provider>,
  options: Api.Options
): Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> => Layer.effect(tag, Effect.map(make(options), asProvider))

/** @internal */
export const layerConfig = <I>(
  tag: Context.Key<I, Api.Provider>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, Config.ConfigError, RateLimiterStore.RateLimiterStore> =>
  Layer.effect(tag, Effect.flatMap(config, (options) => Effect.map(make(options), asProvider)))

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): Api.TagClass<Self, Id> => {
  const tag = Context.Service<Self, Api.Provider>()(`@sluice/provider/${id}`)
  return Object.assign(tag, {
    id,
    layer: (settings: Api.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<Api.Settings>) =>
      layerConfig(tag, Config.map(config, (settings): Api.Options => ({ ...settings, name: id })))
  }) as never
}
