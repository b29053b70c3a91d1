// A library built on @sluice/bulkhead, as a user would publish one: its declarations, emitted by
// tsc and inferred rather than annotated, name the bulkhead's types where they are declared.
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Effect } from "effect"

/** A service of the library's own, with its layers. */
export class Search extends Bulkhead.Tag("search")<Search>() {}

/** A bulkhead with the library's lanes. */
export const makeLlm = (permits: number) =>
  Bulkhead.make({
    name: "llm",
    permits,
    lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } })
  })

/** Both refusals, narrowed with `instanceof`. */
export const permitWaitTimeout = <E>(error: E) => error instanceof Bulkhead.PermitWaitTimeout ? error : undefined
export const bulkheadFull = <E>(error: E) => error instanceof Bulkhead.BulkheadFull ? error : undefined

/** A call under the library's bulkhead, its refusals in the error channel. */
export const guarded = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.flatMap(Search, (search) => search.run(self))

/** The stats of the library's bulkhead. */
export const stats = Effect.flatMap(Search, (search) => search.stats)
