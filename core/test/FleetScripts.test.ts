/**
 * The lane policy as the fleet's scripts take it: one text per policy whatever the order its
 * weights were given in, a sentence for a person, the keys under the name's hash tag, and the lane
 * scripts' texts apart from the scripts without lanes.
 */
import { describe, expect, it } from "vitest"
import * as FleetScripts from "../src/FleetScripts.js"

const priority = {
  _tag: "priority",
  lanes: [{ name: "interactive", yieldForMillis: 0 }, { name: "batch", yieldForMillis: 30_000 }]
} as const

describe("FleetScripts lanes", () => {
  it("a policy's text is canonical: weights by name, whatever order they came in", () => {
    const a = FleetScripts.policyText({ _tag: "fairShare", defaultWeight: 1, weights: new Map([["b", 0.1], ["a", 3]]) })
    const b = FleetScripts.policyText({ _tag: "fairShare", defaultWeight: 1, weights: new Map([["a", 3], ["b", 0.1]]) })
    expect(a).toBe(b)
    expect(a).toBe(`["fairShare",1,[["a",3],["b",0.1]]]`)
    // a weight equal to the default says nothing: equivalent policies send one text
    const withDefault = FleetScripts.policyText({
      _tag: "fairShare",
      defaultWeight: 1,
      weights: new Map([["c", 1], ["b", 0.1], ["a", 3]])
    })
    expect(withDefault).toBe(a)
    expect(FleetScripts.policyText(priority)).toBe(`["priority",[["interactive",0],["batch",30000]]]`)
  })

  it("a mismatch names both policies", () => {
    const fair = FleetScripts.policyText({ _tag: "fairShare", defaultWeight: 2, weights: new Map() })
    expect(FleetScripts.policyMismatch("openai", fair, FleetScripts.policyText(priority))).toBe(
      `bulkhead "openai": this process's lanes (fairShare: default weight 2) differ from the lanes the fleet ` +
        `uses under this name (priority: interactive, batch after 30s); every process of a name must give the ` +
        `same lanes (to change them, stop the fleet's calls: an idle name takes the lanes of the next process to start)`
    )
    expect(FleetScripts.describePolicy("not json")).toBe("not json")
  })

  it("the lane keys share the name's hash tag, after the five of every script", () => {
    const { channel, keys } = FleetScripts.laneKeysOf("p:", "n")
    expect(keys.slice(0, 5)).toEqual(FleetScripts.keysOf("p:", "n").keys)
    expect(keys.slice(5)).toEqual(["p:{n}:lanes", "p:{n}:tickets", "p:{n}:round"])
    expect(channel).toBe("p:{n}:grants")
  })

  it("the scripts without lanes carry none of the lane code", () => {
    for (const name of ["batch", "renew", "claim", "stats", "resize"] as const) {
      expect(FleetScripts.scripts[name]).not.toContain("lanesKey")
      expect(FleetScripts.laneScripts[name]).toContain("policyRefused")
    }
  })
})
