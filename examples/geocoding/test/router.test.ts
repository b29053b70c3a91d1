/**
 * The router's rounds, on the test clock: a lookup that every provider refused for being busy (a
 * full bulkhead here) is asked again after 0.2 s, then 0.4 s, doubling, for six rounds in all, and
 * answered by the first round that finds a permit; a refusal that is not "busy" ends it at once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { type Geocoder, QuotaExhausted } from "../src/providers/Geocoder.js"
import * as Router from "../src/Router.js"
import * as Scenario from "../src/Scenario.js"

const tuning: Scenario.Tuning = { burst: undefined, margin: 0, headroom: 1, userAgent: "tests" }

/**
 * One provider whose bulkhead has a single permit and no queue, while the router believes it holds
 * two: a second lookup reaches it and is refused with `BulkheadFull`. `hold` is what a search waits
 * on inside the permit.
 */
const oneProvider = (hold: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({ name: "photon", bulkhead: { permits: 1, maxWaiting: 0 } })
    const settings = yield* Scenario.settingsFor(
      "photon",
      { baseUrl: "http://127.0.0.1:1", rate: 100, medianMillis: 10, where: "stand-in" },
      tuning,
      2
    )
    const searches: Array<number> = []
    const geocoder: Geocoder = {
      name: "photon",
      settings: { ...settings, maxWaiting: 0 },
      provider,
      origin: "http://127.0.0.1:1",
      search: (query) =>
        Effect.suspend(() => {
          searches.push(searches.length)
          return provider.call(Effect.as(hold, Option.some({ lat: 0, lon: 0, displayName: query })))
        })
    }
    return { router: yield* Router.make([geocoder]), geocoder, searches }
  })

describe("Router rounds", () => {
  it.scoped("asks a busy provider again after 0.2 s, 0.4 s, ... and answers in the round that finds a permit", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { router, searches } = yield* oneProvider(Deferred.await(gate))
      const first = yield* Effect.fork(router.resolve("Paris"))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(router.resolve("Lyon"))
      yield* Effect.yieldNow()
      expect(searches.length).toBe(2) // the first holds the permit; the second was refused
      yield* TestClock.adjust("199 millis")
      expect(searches.length).toBe(2)
      yield* TestClock.adjust("1 millis")
      expect(searches.length).toBe(3) // round 2 at 0.2 s, refused again
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* TestClock.adjust("399 millis")
      expect(searches.length).toBe(3)
      yield* TestClock.adjust("1 millis")
      const answer = yield* Fiber.join(second) // round 3 at 0.6 s finds the permit
      expect(answer).toEqual({ _tag: "Found", provider: "photon", place: { lat: 0, lon: 0, displayName: "Lyon" } })
      expect(searches.length).toBe(4)
    }))

  it.scoped("gives up after six rounds (6.2 s of pauses) while the provider stays busy", () =>
    Effect.gen(function*() {
      const { router, searches } = yield* oneProvider(Effect.never)
      const holder = yield* Effect.fork(router.resolve("Paris"))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(Effect.either(router.resolve("Lyon")))
      yield* TestClock.adjust("6199 millis")
      expect(searches.length).toBe(1 + 6 - 1)
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(second)
      expect(searches.length).toBe(1 + 6)
      expect(Either.isLeft(result) && result.left.refusals.map((refusal) => refusal.reason)).toEqual(["BulkheadFull"])
      yield* Fiber.interrupt(holder)
    }))

  it.scoped("does not ask again after a refusal that is not busy", () =>
    Effect.gen(function*() {
      const { geocoder } = yield* oneProvider(Effect.void)
      let searches = 0
      const spent: Geocoder = {
        ...geocoder,
        search: () =>
          Effect.suspend(() => {
            searches++
            return Effect.fail(new QuotaExhausted({ provider: "photon", resetAt: 0 }))
          })
      }
      const result = yield* Effect.either(Effect.flatMap(Router.make([spent]), (router) => router.resolve("Paris")))
      expect(Either.isLeft(result) && result.left.refusals.map((refusal) => refusal.reason)).toEqual([
        "QuotaExhausted"
      ])
      expect(searches).toBe(1)
    }))

  it.scoped("when every provider is full, lookups wait for a freed place in arrival order; one interrupted is passed over", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { geocoder } = yield* oneProvider(Deferred.await(gate))
      const asked: Array<string> = []
      // the router knows the provider holds one lookup at a time: the others wait in its queue
      const single: Geocoder = {
        ...geocoder,
        settings: { ...geocoder.settings, permits: 1, maxWaiting: 0 },
        search: (query) => Effect.zipRight(Effect.sync(() => asked.push(query)), geocoder.search(query))
      }
      const router = yield* Router.make([single])
      const first = yield* Effect.fork(router.resolve("Paris"))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(router.resolve("Lyon"))
      const third = yield* Effect.fork(router.resolve("Nice"))
      yield* Effect.yieldNow()
      expect(asked).toEqual(["Paris"])
      yield* Fiber.interrupt(second)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      const answer = yield* Fiber.join(third)
      expect(answer).toEqual({ _tag: "Found", provider: "photon", place: { lat: 0, lon: 0, displayName: "Nice" } })
      expect(asked).toEqual(["Paris", "Nice"])
    }))
})
