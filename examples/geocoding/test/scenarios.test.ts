/**
 * End to end on loopback, in process: the stand-ins, the providers and the pipeline together.
 * Timing is measured, never asserted: the tests read the 429s the servers answered, the rows
 * written and the verdicts.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { baseConfig, runInProcess, tempDir } from "./utils.js"

describe.sequential("geocoding end to end", () => {
  it("answers every row with zero 429s when the quotas match the servers', and reads quota-bound", async () => {
    const output = Path.join(tempDir(), "out.jsonl")
    const { servers, summary } = await runInProcess(
      baseConfig({ rates: { opencage: 200, photon: 100, nominatim: 50 } }),
      { output, rows: 1_500 }
    )
    expect(servers.map((s) => s.rateLimited + s.concurrencyLimited)).toEqual([0, 0, 0])
    expect(summary.providers.map((p) => p.tooManyRequests)).toEqual([0, 0, 0])
    expect(summary.failed).toBe(0)
    expect(summary.ok + summary.notFound).toBe(1_500)
    // deduplicated: fewer lookups than rows, and every row written once
    expect(summary.lookups).toBeLessThan(1_500)
    const ids = Fs.readFileSync(output, "utf8").trim().split("\n").map((line) => JSON.parse(line).id)
    expect(new Set(ids).size).toBe(1_500)
    // nobody was pushed back; at these rates the split between limiter sleep and the call is close
    // to even for some providers, so which of limiter / bulkhead / none they read is not asserted
    for (const provider of summary.providers) expect(provider.verdict.binding).not.toBe("upstream")
  }, 60_000)

  it("reads quota-bound when the quotas are far below what the permits could carry", async () => {
    const output = Path.join(tempDir(), "out.jsonl")
    const { servers, summary } = await runInProcess(
      // 16 permits where rate × latency needs 2: most permit-holding time is sleep in the limiter
      baseConfig({ rates: { opencage: 40, photon: 20, nominatim: 10 }, permits: { opencage: 16 } }),
      { output, rows: 400 }
    )
    expect(servers.map((s) => s.rateLimited)).toEqual([0, 0, 0])
    expect(summary.failed).toBe(0)
    // most of the time a permit is held, the call sleeps in the limiter: the quota binds
    expect(summary.providers[0].verdict.binding).toBe("limiter")
    for (const provider of summary.providers) expect(provider.verdict.binding).not.toBe("upstream")
  }, 60_000)

  it(
    "keeps a slow provider's slowness in its own bulkhead: latency-bound there, the others take its overflow",
    async () => {
      const output = Path.join(tempDir(), "out.jsonl")
      const { servers, summary } = await runInProcess(
        baseConfig({
          rates: { opencage: 200, photon: 100, nominatim: 50 },
          faults: { photon: { slow: 15 } }
        }),
        { output, rows: 1_000 }
      )
      const byName = Object.fromEntries(summary.providers.map((p) => [p.name, p]))
      expect(byName.photon.verdict.binding).toBe("bulkhead")
      // each provider's calls are bounded by its own bulkhead, counted server-side: photon never had
      // more in progress than its permits however slow it was, and the healthy providers take the
      // lookups photon cannot
      for (const server of servers) {
        expect(server.peakInFlight, server.name).toBeLessThanOrEqual(byName[server.name].permits)
      }
      expect(byName.opencage.requests).toBeGreaterThan(byName.photon.requests)
      expect(byName.nominatim.requests).toBeGreaterThan(byName.photon.requests)
      expect(byName.nominatim.verdict.binding).not.toBe("upstream")
      // what the slow provider could not take went elsewhere: nothing failed
      expect(summary.failed).toBe(0)
      expect(summary.ok + summary.notFound).toBe(1_000)
    },
    60_000
  )

  it("falls back on 5xx and malformed bodies, and pauses a provider whose quota is spent (402)", async () => {
    const output = Path.join(tempDir(), "out.jsonl")
    const { servers, summary } = await runInProcess(
      baseConfig({
        rates: { opencage: 200, photon: 100, nominatim: 50 },
        faults: { photon: { errorRate: 0.2, malformedRate: 0.1 } },
        periodQuotas: { opencage: 100 }
      }),
      { output, rows: 800 }
    )
    const opencage = servers.find((s) => s.name === "opencage")
    // the quota stopped opencage; a 402 paused it: at most the calls already in flight met one
    expect(opencage?.answered).toBeLessThanOrEqual(100)
    expect(opencage?.quotaExhausted).toBeLessThanOrEqual(summary.providers[0].permits)
    expect(summary.providers.find((p) => p.name === "photon")?.refused).toBeGreaterThan(0)
    expect(summary.failed).toBe(0)
  }, 60_000)
})
