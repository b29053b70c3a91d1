/**
 * The report's latency is the time a call holds its permit, body included (what a bulkhead is sized
 * by), not the time to the response's headers: against a stand-in whose bodies end 200 ms after
 * they start, every call takes at least that long, and the report's p50 and p95 say so, with the
 * time to the headers beside them, labelled.
 */
import * as Path from "node:path"
import { expect, it } from "vitest"
import * as Report from "../src/Report.js"
import { baseConfig, runInProcess, tempDir } from "./utils.js"

const BODY_DELAY_MILLIS = 200

it("reports the call's p50 and p95 to the end of its body, and the headers' p50 apart", async () => {
  const output = Path.join(tempDir(), "out.jsonl")
  const { summary } = await runInProcess(
    baseConfig({ providers: ["photon"], faults: { photon: { bodyDelayMillis: BODY_DELAY_MILLIS } } }),
    { output, rows: 150 }
  )
  const [photon] = summary.providers
  expect(photon.requests).toBeGreaterThan(0)
  // the body's second half leaves the server 200 ms after its first: no call ends sooner
  expect(photon.p50Millis).toBeGreaterThanOrEqual(BODY_DELAY_MILLIS)
  expect(photon.p95Millis).toBeGreaterThanOrEqual(BODY_DELAY_MILLIS)
  // every call's headers come before the end of its body
  expect(photon.headersP50Millis).toBeLessThanOrEqual(photon.p50Millis)
  const table = Report.render(summary.providers).split("\n")[0]
  expect(table).toMatch(/call p50 +call p95 +headers p50/)
}, 120_000)
