import { describe, expect, it } from "vitest"
import { laneSummaries } from "../src/LaneSummaries.js"
import { LaneWaits } from "../src/Samples.js"

describe("LaneSummaries.laneSummaries", () => {
  it("reports each lane's share of the permits, and its weight's share while it has callers waiting", () => {
    const waits = new LaneWaits("batch", 16)
    waits.add("interactive", 0)
    waits.add("interactive", 10)
    waits.add(undefined, 250)
    const lanes = laneSummaries(waits, [
      { name: "interactive", granted: 3, waiting: 1, weight: 3 },
      { name: "batch", granted: 1, waiting: 2, weight: 1 },
      { name: "idle", granted: 0, waiting: 0, weight: 4 }
    ])
    expect(lanes.map((lane) => [lane.lane, lane.attempts, lane.share, lane.weightShare, lane.waiting])).toEqual([
      ["interactive", 2, 0.75, 0.75, 1],
      ["batch", 1, 0.25, 0.25, 2],
      ["idle", 0, 0, undefined, 0]
    ])
    expect(lanes[2].reason).toBe(`lane "idle": no attempts yet, 0 % of the permits`)
    expect(lanes[1].reason).toMatch(
      /^lane "batch": 1 attempt, 25 % of the permits for a weight of 25 %; permit wait p50 /
    )
    expect("weightShare" in lanes[2]).toBe(false)
  })

  it("priority lanes have no weight: shares only, and no lane granted reads 0 %", () => {
    const lanes = laneSummaries(new LaneWaits("low", 8), [
      { name: "high", granted: 0, waiting: 0 },
      { name: "low", granted: 0, waiting: 3 }
    ])
    expect(lanes.map((lane) => lane.reason)).toEqual([
      `lane "high": no attempts yet, 0 % of the permits`,
      `lane "low": no attempts yet, 0 % of the permits`
    ])
  })
})
