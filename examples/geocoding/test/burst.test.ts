/**
 * The burst of each provider's limiter: against a stand-in it grows with the client rate (so that
 * a loop turn of 20 ms does not cap the limiter below its rate) and the stand-in admits the same;
 * a real service gets none; `--burst` overrides either.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Offline from "../harness/Offline.js"
import * as Scenario from "../src/Scenario.js"
import { Gazetteer } from "../stand-ins/Gazetteer.js"
import { baseConfig } from "./utils.js"

describe("burst", () => {
  it("is rate × 20 ms, at least 3, against a stand-in, and 1 against a real service", () => {
    expect(Scenario.burstFor("stand-in", 196, undefined).burst).toBe(4)
    expect(Scenario.burstFor("stand-in", 98, undefined).burst).toBe(3)
    expect(Scenario.burstFor("stand-in", 1_900, undefined).burst).toBe(38)
    expect(Scenario.burstFor("stand-in", 950, undefined).burst).toBe(19)
    expect(Scenario.burstFor("real", 1_900, undefined).burst).toBe(1)
    expect(Scenario.burstFor("stand-in", 1_900, 2)).toEqual({ burst: 2, reason: "set by --burst" })
  })

  it.scoped("the stand-ins admit the client's burst", () =>
    Effect.gen(function*() {
      const { settings, standIns } = yield* Offline.prepare(
        baseConfig({ rates: { opencage: 2_000, photon: 1_000, nominatim: 500 }, bursts: { nominatim: 1 } })
      )
      // 10 % margin (the tests' own): 1,800/s, 900/s
      expect(settings.map((s) => s.burst)).toEqual([36, 18, 1])
      expect(standIns.map((standIn) => standIn.options.burst)).toEqual([36, 18, 1])
    }).pipe(Effect.provide(Gazetteer.Default)))
})
