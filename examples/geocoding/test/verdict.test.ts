/**
 * The verdict under the table agrees with the table: read on the run's own rate (the "rate /
 * quota" column), not on the rate of the last starts alone, which a batch's tail lowers. A provider
 * that ran at 94 % of its quota in a healthy run (no 429, callers queued for permits as a batch
 * does) is `limiter`, not "the provider slowed down".
 */
import { expect, it } from "vitest"
import * as Report from "../src/Report.js"

const phase = (meanMillis: number) => ({ count: 500, meanMillis, p95Millis: meanMillis * 2, p50Millis: meanMillis })

it("reads the run's rate against the client's, as the table does", () => {
  // what the provider reported at the end: its last starts slowed by the batch's tail, so its own
  // verdict read the permit wait as a queue behind slow calls
  const stats = {
    attempts: 1_800,
    upstreamErrors: 0,
    storeErrors: 0,
    permitWait: phase(240),
    limiterWait: phase(40),
    callTime: phase(300)
  }
  const verdict = Report.runVerdict(stats, 184, 196)
  expect(verdict.binding).toBe("limiter")
  expect(verdict.reason).toMatch(/^the quota is saturated: calls started at 184\/s, 94 % of the limiter's 196\/s/)
  expect(verdict.reason).not.toMatch(/slowed/)
  // well under the rate, the same waits are a queue behind the calls
  expect(Report.runVerdict(stats, 120, 196).binding).toBe("bulkhead")
})
