// A library built on @sluice/bulkhead-redis, as a user would publish one: its declarations, emitted
// by tsc and inferred rather than annotated, name the fleet bulkhead's types where they are declared.
import { Bulkhead } from "@sluice/bulkhead"
import { RedisBulkhead } from "@sluice/bulkhead-redis"
import { Config, Effect } from "effect"

/** A service of the library's own, its tag naming the store error. */
export class Search extends Bulkhead.Tag("search")<Search, RedisBulkhead.BulkheadStoreError>() {}

/** Its layers: from options, and from `Config` under `SEARCH`. */
export const searchLayer = (permits: number) => RedisBulkhead.layer(Search, { name: "search", permits })
export const searchFromConfig = RedisBulkhead.layerConfig(
  Search,
  Config.map(Config.nested(RedisBulkhead.config, "SEARCH"), (options) => ({ ...options, name: "search" }))
)

/** A fleet bulkhead that falls back to a local share while Redis is down: no store error in its type. */
export const makeShared = (permits: number) =>
  RedisBulkhead.make({ name: "shared", permits, storeDown: "local", localShare: 0.5 })

/** The store error, narrowed with `instanceof`. */
export const storeError = <E>(error: E) => error instanceof RedisBulkhead.BulkheadStoreError ? error : undefined

/** A call under the library's bulkhead, its refusals and the store error in the error channel. */
export const guarded = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.flatMap(Search, (search) => search.run(self))
