/**
 * `--report`: the run's report holds every provider of the run, its verdict, and what its
 * stand-in saw (the server's arrivals drawn beside the client's starts). The page itself is
 * checked in a real browser by @sluice/report's own test.
 */
import { Report } from "@sluice/report"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as HtmlReport from "../src/HtmlReport.js"
import { baseConfig, runInProcess, tempDir } from "./utils.js"

describe("--report", () => {
  it("writes one page with every provider, its verdict and its stand-in's arrivals", async () => {
    const dir = tempDir()
    const report = Path.join(dir, "run.html")
    const { servers, summary } = await runInProcess(
      baseConfig({ rates: { opencage: 60, photon: 30, nominatim: 15 } }),
      {
        output: Path.join(dir, "out.jsonl"),
        rows: 300,
        report
      }
    )
    const html = Fs.readFileSync(report, "utf8")
    for (const provider of summary.providers) {
      expect(html).toContain(`<h2>${provider.name}</h2>`)
      expect(provider.recording?.buckets ?? 0).toBeGreaterThan(0)
    }
    const model = Report.model(HtmlReport.input(summary, servers, []))
    expect(model.sections.map((s) => s.provider)).toEqual(summary.providers.map((p) => p.name))
    for (const section of model.sections) {
      const starts = section.plots.find((p) => p.id.endsWith("-starts"))
      const arrivals = starts?.series.find((s) => s.label === "arrivals/s (server)")
      // the server's arrivals, spread over the client's buckets, sum to its requests
      const requests = servers.find((s) => s.name === section.provider)?.requests ?? -1
      const counted = (arrivals?.values ?? []).reduce<number>((a, v) => a + (v ?? 0) * 0.25, 0)
      expect(counted).toBeCloseTo(requests, 1)
      expect(section.verdict).toEqual(summary.providers.find((p) => p.name === section.provider)?.verdict)
    }
  }, 120_000)
})
