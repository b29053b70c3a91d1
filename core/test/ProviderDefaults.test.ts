import { describe, expect, it } from "vitest"
import { breakerSettings, budgetSettings } from "../src/ProviderDefaults.js"

describe("ProviderDefaults", () => {
  it("a breaker defaults to 5 failures in a row, open for 30 s; a ratio to 0.5 over its window", () => {
    expect(breakerSettings({}, "")).toEqual({
      _tag: "Settings",
      settings: { consecutiveFailures: 5, ratio: undefined, window: 0, minimumCalls: 0, openForMillis: 30_000 }
    })
    expect(breakerSettings({ failureRatio: { window: 10 }, openForMillis: 1000 }, "")).toEqual({
      _tag: "Settings",
      settings: { consecutiveFailures: undefined, ratio: 0.5, window: 10, minimumCalls: 10, openForMillis: 1000 }
    })
  })

  it("minimumCalls above the window is refused, named where the options sit", () => {
    expect(breakerSettings({ failureRatio: { window: 4, minimumCalls: 5 } }, "circuitBreaker.")).toEqual({
      _tag: "Invalid",
      message: "circuitBreaker.failureRatio.minimumCalls must be ≤ window (4), got 5"
    })
  })

  it("a retry budget defaults to 0.1, 3 retries, 10 s", () => {
    expect(budgetSettings({})).toEqual({ ratio: 0.1, minRetries: 3, windowMillis: 10_000 })
    expect(budgetSettings({ ratio: 0, minRetries: 0, windowMillis: 1 })).toEqual({
      ratio: 0,
      minRetries: 0,
      windowMillis: 1
    })
  })
})
