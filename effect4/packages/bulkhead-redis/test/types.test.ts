/**
 * The store error in the types: `BulkheadStoreError` in every error channel of a fail-closed
 * bulkhead, through `Bulkhead.Bulkhead<E>` and a `Provider`; none with a fallback policy; the
 * local bulkhead's types unchanged.
 */
import { describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import type { RedisConnection } from "@sluice/redis"
import type { Layer, Scope } from "effect"
import { Config, Effect } from "effect"
import { expectTypeOf } from "vitest"
import { RedisBulkhead } from "../src/index.js"

class Boom {
  readonly _tag = "Boom"
}
const work: Effect.Effect<number, Boom> = Effect.succeed(1)

type ValueOf<T> = T extends Effect.Effect<infer A, infer _E, infer _R> ? A : never
type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E : never

/** The checks are for the compiler: the values are declared, never built, so the body never runs. */
const typesOnly = (check: () => void): void => {
  expectTypeOf(check).toBeFunction()
}

declare const closed: RedisBulkhead.RedisBulkhead
declare const local: RedisBulkhead.RedisBulkhead<never>
declare const localBulkhead: Bulkhead.Bulkhead

describe("types", () => {
  it("make: BulkheadStoreError unless the options name a fallback policy", () => {
    typesOnly(() => {
      const _failClosed = RedisBulkhead.make({ name: "n", permits: 2 })
      expectTypeOf<ValueOf<typeof _failClosed>>().toEqualTypeOf<
        RedisBulkhead.RedisBulkhead<RedisBulkhead.BulkheadStoreError>
      >()
      const _localPolicy = RedisBulkhead.make({ name: "n", permits: 2, storeDown: "local", localShare: 0.5 })
      expectTypeOf<ValueOf<typeof _localPolicy>>().toEqualTypeOf<RedisBulkhead.RedisBulkhead<never>>()
      const _open = RedisBulkhead.make({ name: "n", permits: 2, storeDown: "fail-open" })
      expectTypeOf<ValueOf<typeof _open>>().toEqualTypeOf<RedisBulkhead.RedisBulkhead<never>>()
      const _widened: RedisBulkhead.Options = { name: "n", permits: 2, storeDown: "local", localShare: 0.5 }
      expectTypeOf<ValueOf<ReturnType<typeof RedisBulkhead.make<typeof _widened>>>>().toEqualTypeOf<
        RedisBulkhead.RedisBulkhead<RedisBulkhead.BulkheadStoreError>
      >()
      expectTypeOf<ErrorOf<ReturnType<typeof closed.run<number, Boom, never>>>>().toEqualTypeOf<
        Boom | Bulkhead.BulkheadError | RedisBulkhead.BulkheadStoreError
      >()
      expectTypeOf<ErrorOf<ReturnType<typeof local.run<number, Boom, never>>>>().toEqualTypeOf<
        Boom | Bulkhead.BulkheadError
      >()
      expectTypeOf(closed.resize(1)).toEqualTypeOf<Effect.Effect<void, RedisBulkhead.BulkheadStoreError>>()
      expectTypeOf(local.resize(1)).toEqualTypeOf<Effect.Effect<void>>()
    })
  })

  it("the Bulkhead view carries the store error, and a Provider given it has it in its union", () => {
    typesOnly(() => {
      expectTypeOf(closed.bulkhead).toEqualTypeOf<Bulkhead.Bulkhead<RedisBulkhead.BulkheadStoreError>>()
      expectTypeOf(Bulkhead.withBulkhead(work, closed.bulkhead)).toEqualTypeOf<
        Effect.Effect<number, Boom | Bulkhead.BulkheadError | RedisBulkhead.BulkheadStoreError>
      >()
      const viaClosed = Effect.flatMap(
        Provider.make({ name: "p", bulkhead: closed.bulkhead }),
        (provider) => provider.call(work)
      )
      expectTypeOf(viaClosed).toEqualTypeOf<
        Effect.Effect<
          number,
          Boom | Provider.ProviderClosed | Bulkhead.BulkheadError | RedisBulkhead.BulkheadStoreError,
          Scope.Scope
        >
      >()
      const _viaLocal = Effect.flatMap(Provider.make({ name: "p", bulkhead: local.bulkhead }), (p) => p.call(work))
      expectTypeOf<ErrorOf<typeof _viaLocal>>().toEqualTypeOf<Boom | Provider.ProviderClosed | Bulkhead.BulkheadError>()
    })
  })

  it("the local bulkhead's types are unchanged", () => {
    typesOnly(() => {
      const _made = Bulkhead.make({ name: "b", permits: 1 })
      expectTypeOf<ValueOf<typeof _made>>().toEqualTypeOf<Bulkhead.Bulkhead>()
      expectTypeOf<Bulkhead.Bulkhead>().toEqualTypeOf<Bulkhead.Bulkhead<never>>()
      expectTypeOf(localBulkhead.run(work)).toEqualTypeOf<Effect.Effect<number, Boom | Bulkhead.BulkheadError>>()
      expectTypeOf(localBulkhead.resize(2)).toEqualTypeOf<Effect.Effect<void>>()
    })
  })

  it("layers: a tag names the store error; with a fallback policy a plain tag takes the bulkhead", () => {
    typesOnly(() => {
      class Closed extends Bulkhead.Tag("closed")<Closed, RedisBulkhead.BulkheadStoreError>() {}
      class Plain extends Bulkhead.Tag("plain")<Plain>() {}
      expectTypeOf(RedisBulkhead.layer(Closed, { name: "closed", permits: 2 })).toEqualTypeOf<
        Layer.Layer<Closed, never, RedisConnection.RedisConnection>
      >()
      expectTypeOf(RedisBulkhead.layer(Plain, { name: "plain", permits: 2, storeDown: "local", localShare: 0.25 }))
        .toEqualTypeOf<Layer.Layer<Plain, never, RedisConnection.RedisConnection>>()
      // @ts-expect-error a fail-closed bulkhead cannot hide its store error behind a plain tag
      RedisBulkhead.layer(Plain, { name: "plain", permits: 2 })
      // nor from Config (a key's service is covariant on Effect 4: \`RedisBulkhead.Names\` refuses it)
      // @ts-expect-error the same through layerConfig
      RedisBulkhead.layerConfig(Plain, Config.succeed({ name: "plain", permits: 2 }))
      expectTypeOf(RedisBulkhead.layerConfig(Closed, Config.succeed({ name: "closed", permits: 2 }))).toEqualTypeOf<
        Layer.Layer<Closed, Config.ConfigError, RedisConnection.RedisConnection>
      >()
      // the local layer still fits a tag of either kind
      expectTypeOf(Closed.layer({ permits: 1 })).toEqualTypeOf<Layer.Layer<Closed>>()
    })
  })
})
