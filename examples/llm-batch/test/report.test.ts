/**
 * The report's verdict agrees with the table above it: the provider's rule is read on the table's
 * shares (achieved ÷ quota), so the verdict's percentage is the table's, rounded. Before, the
 * verdict read the last starts against the client's limit ("101 % of 11760") under a table that
 * said 97.7 % of 12,000.
 */
import { expect, it } from "vitest"
import * as Report from "../src/Report.js"
import type * as Run from "../src/Run.js"

const phase = (meanMillis: number) => ({ count: 120, meanMillis, p50Millis: meanMillis, p95Millis: meanMillis * 2 })

it("states the table's share, and says saturated only when the table does", () => {
  const summary = (tokensPerCall: number): Run.Summary => ({
    config: {
      url: undefined,
      apiKey: undefined,
      model: "gpt-4o-mini",
      quotas: { windowMillis: 10_000, requests: { limit: 60, burst: 2 }, tokens: { limit: 12_000, burst: 1_000 } },
      margin: 0.02,
      permits: 2,
      maxTokens: 256,
      expectedCompletion: undefined,
      input: undefined,
      samplePrompts: 120,
      redis: undefined,
      seed: 42,
      progress: false
    },
    elapsedMillis: 30_000,
    // a call every 250 ms for 30 s
    calls: Array.from({ length: 121 }, (_, i) => ({
      id: `p${i}`,
      at: i * 250,
      estimate: 400,
      actual: tokensPerCall,
      lane: "batch" as const,
      latencyMillis: 400
    })),
    tooManyRequests: 0,
    verdict: { binding: "limiter", reason: "tokens/10 s saturated: tokens used at 101 % of 11760 per 10 s lately" },
    phases: {
      attempts: 121,
      upstreamErrors: 0,
      storeErrors: 0,
      permitWait: phase(5),
      limiterWait: phase(300),
      callTime: phase(100)
    },
    server: undefined,
    lanes: undefined
  })
  const full = Report.figures(summary(298))
  const tokens = full.dimensions[1]
  // (121 × 298 − 1,000 burst) × 10 s ÷ 30 s = 11,686 of 12,000 a window
  expect(tokens.share).toBeCloseTo(0.974, 3)
  expect(Report.format(full)).toContain("97.4 %")
  expect(full.binding.reason).toMatch(/^tokens\/10 s saturated: 97\.4 % of its quota/)
  expect(full.verdict.reason).toMatch(/^tokens\/10 s saturated: tokens used at 97 % of 12000 per 10 s/)

  const light = Report.figures(summary(100))
  expect(light.dimensions[1].share).toBeCloseTo(0.3, 1)
  expect(light.verdict.reason).not.toMatch(/saturated/)
  expect(light.binding.reason).not.toMatch(/saturated/)
})
