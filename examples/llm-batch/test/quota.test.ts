import { describe, expect, it } from "@effect/vitest"
import * as Quota from "../src/stand-in/Quota.js"

describe("the stand-in's quota", () => {
  it("accepts up to limit + burst in any window, says when the next fits, and records the busiest window", () => {
    const quota = Quota.make({ limit: 100, burst: 20, windowMillis: 1_000 })
    expect(quota.waitFor(0, 70)).toBe(0)
    quota.add(0, 70)
    expect(quota.waitFor(400, 50)).toBe(0)
    quota.add(400, 50)
    // 120 held: the next 10 fit once the first 70 leave, at 1,000
    expect(quota.waitFor(500, 10)).toBe(500)
    expect(quota.used(999)).toBe(120)
    expect(quota.waitFor(1_000, 10)).toBe(0)
    quota.add(1_000, 10)
    expect(quota.used(1_000)).toBe(60)
    expect(quota.resetAfter(1_000)).toBe(1_000)
    expect(quota.busiest()).toBe(120)
    expect(quota.perWindow()).toEqual([120, 10])
  })

  it("waits a whole window for an amount that could never fit", () => {
    const quota = Quota.make({ limit: 10, burst: 0, windowMillis: 1_000 })
    expect(quota.waitFor(0, 11)).toBe(1_000)
  })

  it("writes resets as OpenAI does", () => {
    expect(Quota.formatReset(20)).toBe("20ms")
    expect(Quota.formatReset(1_000)).toBe("1s")
    expect(Quota.formatReset(8_640)).toBe("8.64s")
    expect(Quota.formatReset(360_000)).toBe("6m0s")
    expect(Quota.formatReset(179_560)).toBe("2m59.56s")
  })
})
