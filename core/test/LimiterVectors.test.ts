/**
 * The store contract's store-interface vectors (`core/testing/limiterVectors.ts`) on the core
 * memory store itself, at the instants the vectors give: the same table each Effect line's driver
 * runs through its binding.
 */
import { assert, describe, expect, it } from "vitest"
import * as LimiterInput from "../src/LimiterInput.js"
import { MemoryStore, type Observation, type ReserveResult } from "../src/MemoryStore.js"
import { cancellationVectors, storeVectors, vectors } from "../testing/limiterVectors.js"

describe("limiter vectors on the core memory store", () => {
  for (const vector of storeVectors) {
    it(vector.name, () => {
      const store = new MemoryStore()
      const key = "k"
      const limits = vector.limits
      let now = vector.startAt
      const reserved = new Map<string, Extract<ReserveResult, { _tag: "Reserved" }>>()
      for (const step of vector.steps) {
        switch (step.do) {
          case "reserve": {
            const result = store.reserve(
              { key, limits, cost: step.cost, costs: step.costs, maxWaitMillis: step.maxWaitMillis },
              now
            )
            const { delayAtLeast, ...fields } = step.expect as typeof step.expect & { delayAtLeast?: number }
            expect(result).toMatchObject(Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)))
            if (delayAtLeast !== undefined) expect(result.delayMillis).toBeGreaterThan(delayAtLeast)
            if (step.id !== undefined && result._tag === "Reserved") reserved.set(step.id, result)
            break
          }
          case "refund": {
            const r = reserved.get(step.id)
            assert(r !== undefined)
            const refund = { key, limits, cost: step.cost, reservation: r.reservation, restore: r.restore }
            assert.strictEqual(store.refund(refund, now), step.expect, `refund ${step.id}`)
            break
          }
          case "settle": {
            const r = reserved.get(step.id)
            assert(r !== undefined)
            store.settle({ key, limits, restore: r.restore, reserved: step.reserved, actual: step.actual }, now)
            break
          }
          case "tighten": {
            const request = { key, limits, observations: step.observations as ReadonlyArray<Observation> }
            const { ignored, usable } = LimiterInput.usableObservations(request)
            store.tighten(key, limits, usable, now)
            if (step.warns === undefined) assert.isUndefined(ignored)
            else for (const text of step.warns) assert.include(ignored, text)
            break
          }
          case "pause":
            store.pause(key, step.millis, now)
            break
          case "readPause":
            assert.strictEqual(store.readPause(key, now), step.expect)
            break
          case "adjust":
            now += step.millis
            break
        }
      }
    })
  }

  it("every vector names its takers once, and expects only takers it has", () => {
    for (const vector of [...vectors, ...cancellationVectors]) {
      const ids = vector.steps.flatMap((step) => step.do === "take" ? [step.id] : [])
      assert.strictEqual(new Set(ids).size, ids.length, vector.name)
      for (const id of Object.keys(vector.starts)) assert.include(ids, id, vector.name)
    }
  })
})
