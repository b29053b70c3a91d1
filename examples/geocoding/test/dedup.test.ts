/**
 * The dedup in isolation, with a router that counts its lookups: a duplicate in flight is merged
 * into the lookup running, an answer is kept up to the capacity (least recently used out first),
 * and a lookup every provider refused is not kept.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import * as Dedup from "../src/Dedup.js"
import { type Resolution, type Router, Unresolved } from "../src/Router.js"

const routerOf = (answer: (query: string) => Effect.Effect<Resolution, Unresolved>) => {
  const asked: Array<string> = []
  const router: Router = {
    resolve: (query) => Effect.suspend(() => (asked.push(query), answer(query))),
    refusals: () => new Map()
  }
  return { asked, router }
}

const found = (query: string): Resolution => ({
  _tag: "Found",
  provider: "photon",
  place: { lat: 0, lon: 0, displayName: query }
})

describe("Dedup", () => {
  it("merges the duplicates of a lookup in flight into it, spelled any way", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { asked, router } = routerOf((query) => Effect.as(Deferred.await(gate), found(query)))
      const dedup = yield* Dedup.make(router, 10)
      const fibers = yield* Effect.forEach(
        ["São Paulo, BR", "sao paulo BR", "SAO PAULO, BR"],
        (query) => Effect.fork(dedup.resolve(query))
      )
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      const answers = yield* Effect.forEach(fibers, Fiber.join)
      expect(asked).toEqual(["São Paulo, BR"])
      expect(answers.map((a) => a._tag === "Found" && a.place.displayName)).toEqual(Array(3).fill("São Paulo, BR"))
      expect(yield* dedup.stats).toEqual({ lookups: 1, deduplicated: 2, size: 1 })
      // answered from memory now, without a lookup
      expect(dedup.cached("são paulo, br")).toEqual(found("São Paulo, BR"))
    }).pipe(Effect.runPromise))

  it("keeps at most its capacity, the least recently used out first", () =>
    Effect.gen(function*() {
      const { asked, router } = routerOf((query) => Effect.succeed(found(query)))
      const dedup = yield* Dedup.make(router, 2)
      yield* dedup.resolve("a")
      yield* dedup.resolve("b")
      yield* dedup.resolve("a") // a is now the most recently used
      yield* dedup.resolve("c") // evicts b
      expect(dedup.cached("a")).toBeDefined()
      expect(dedup.cached("b")).toBeUndefined()
      yield* dedup.resolve("b")
      expect(asked).toEqual(["a", "b", "c", "b"])
      expect((yield* dedup.stats).size).toBe(2)
    }).pipe(Effect.runPromise))

  it("does not keep a lookup every provider refused: a later duplicate asks again", () =>
    Effect.gen(function*() {
      const { asked, router } = routerOf(() =>
        Effect.fail(new Unresolved({ refusals: [{ provider: "photon", reason: "500", message: "500" }] }))
      )
      const dedup = yield* Dedup.make(router, 10)
      const first = yield* Effect.flip(dedup.resolve("x"))
      expect(first.message).toBe("photon: 500")
      yield* Effect.flip(dedup.resolve("x"))
      expect(asked).toEqual(["x", "x"])
      expect(dedup.cached("x")).toBeUndefined()
      expect(yield* dedup.stats).toEqual({ lookups: 2, deduplicated: 0, size: 0 })
    }).pipe(Effect.runPromise))
})
