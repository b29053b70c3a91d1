import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { Provider, type ProviderRecording } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Report } from "@sluice/report"
import { Effect, Fiber, TestClock } from "effect"
import { recordedRun } from "./run.js"

const memory = Effect.provide(RateLimiterStore.layerMemory)

const plotOf = (model: Report.Model, suffix: string): Report.Plot => {
  const plot = model.sections[0].plots.find((p) => p.id.endsWith(suffix))
  if (plot === undefined) throw new Error(`no plot ${suffix}`)
  return plot
}

const seriesOf = (plot: Report.Plot, label: string): ReadonlyArray<number | null> => {
  const series = plot.series.find((s) => s.label.startsWith(label))
  if (series === undefined) throw new Error(`no series ${label} in ${plot.id}`)
  return series.values
}

describe("the report's data", () => {
  it.scoped("holds what a run on the TestClock did, at its instants", () =>
    Effect.gen(function*() {
      // 2 permits, 6 calls of 500 ms, 2 per second from a burst of 2: starts at 0, 0 and 0.5 (the
      // limiter's next token), 1 and 1.5 (the limiter), 2 (the permit freed at 1.5, then the limiter)
      const provider = yield* Provider.make({
        name: "stand-in",
        bulkhead: { permits: 2 },
        rateLimiter: { limit: 2, window: "1 second", burst: 2 },
        recording: true
      })
      const fiber = yield* Effect.fork(
        Effect.forEach([1, 2, 3, 4, 5, 6], () => provider.call(Effect.sleep("500 millis")), {
          concurrency: "unbounded",
          discard: true
        })
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      const recording = yield* provider.recording
      if (recording === undefined) return assert.fail("no recording")
      const stats = yield* provider.stats
      const model = Report.model({
        title: "run",
        providers: [{ recording, verdict: stats.verdict, quotaPerSecond: 2.5 }]
      })
      const section = model.sections[0]
      assert.strictEqual(section.provider, "stand-in")
      assert.strictEqual(section.verdict, stats.verdict)
      const starts = plotOf(model, "-starts")
      assert.deepStrictEqual(starts.x, [0, 1, 2])
      assert.deepStrictEqual(seriesOf(starts, "starts/s"), [3, 2, 1])
      assert.deepStrictEqual(seriesOf(starts, "client limit 2/s"), [2, 2, 2])
      assert.deepStrictEqual(seriesOf(starts, "quota 2.5/s"), [2.5, 2.5, 2.5])
      const waits = plotOf(model, "-waits")
      // permits granted at 0, 0, 0.5, 0.5 (waits 0, 0, 500, 500), then at 1 and 1.5 (1000, 1500)
      assert.deepStrictEqual(seriesOf(waits, "permit wait"), [250, 1250, null])
      // the limiter held the fourth call from 0.5 to 1, the fifth to 1.5, the sixth to 2
      assert.deepStrictEqual(seriesOf(waits, "limiter wait"), [0, 500, 500])
      assert.deepStrictEqual(seriesOf(waits, "call"), [500, 500, 500])
      const permits = plotOf(model, "-permits")
      // both permits held until 2 s, one until 2.5 s
      assert.deepStrictEqual(seriesOf(permits, "held (mean)"), [2, 2, 0.5])
      assert.deepStrictEqual(seriesOf(permits, "permits 2"), [2, 2, 2])
      const histogram = plotOf(model, "-permit-wait-histogram")
      assert.deepStrictEqual(
        [histogram.xTicks?.[0], histogram.xTicks?.[11], histogram.xTicks?.[12], histogram.xTicks?.[13]],
        ["0", "≤512 ms", "≤1.02 s", "≤2.05 s"]
      )
      assert.deepStrictEqual(histogram.series[0].values, [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1])
      // the two histograms share their x, to be read side by side
      assert.deepStrictEqual(plotOf(model, "-limiter-wait-histogram").x, histogram.x)
      assert.isTrue(section.facts.some(([label, value]) => label === "starts" && value === "6"))
    }).pipe(memory))

  it.effect("429s and pauses on the time axis; dimensions and the estimate error", () =>
    Effect.gen(function*() {
      const recording = yield* recordedRun
      const model = Report.model({ title: "llm", providers: [{ recording }] })
      const section = model.sections[0]
      assert.deepStrictEqual(section.upstream, [[0, 1]])
      assert.deepStrictEqual(section.pauses, [[0, 2]])
      const tokens = model.sections[0].plots.find((p) => p.title.startsWith("tokens used"))
      if (tokens === undefined) return assert.fail("no tokens plot")
      // a 1 s limit on 500 ms buckets: each point is its bucket and the one before, against the limit
      const units = recording.dimensions.find((d) => d.dimension === "tokens")?.units ?? []
      assert.deepStrictEqual(tokens.series[0].values, units.map((u, i) => u + (i > 0 ? units[i - 1] : 0)))
      assert.deepStrictEqual(tokens.series[1].values, units.map(() => 2000))
      // what the attempts used in all: 9 (one retried) settled at 260 tokens each, whatever their exit
      assert.strictEqual(units.reduce((a, b) => a + b, 0), 9 * 260)
      assert.isTrue(
        section.facts.some(([label, value]) =>
          label === "tokens estimate error" && / % more used than estimated \(\d+ estimated, 2340 used\)/.test(value)
        ),
        JSON.stringify(section.facts)
      )
    }))
})

describe("lanes", () => {
  it.scoped("each lane of the provider's bulkhead is one line, with its numbers", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: "lanes",
        recording: true,
        bulkhead: { permits: 1, lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "1 minute" } }) }
      })
      yield* provider.call(Effect.void).pipe(Provider.withLane("interactive"))
      yield* provider.call(Effect.void)
      const stats = yield* provider.stats
      const recording = yield* provider.recording
      if (recording === undefined) return assert.fail("no recording")
      const facts = Report.model({ title: "lanes", providers: [{ recording, lanes: stats.lanes }] }).sections[0].facts
      assert.deepStrictEqual(facts.filter(([label]) => label.startsWith("lane")), [
        ["lane \"interactive\"", "1 attempt, 50 % of the permits; permit wait p50 0 ms, p95 0 ms"],
        ["lane \"batch\"", "1 attempt, 50 % of the permits; permit wait p50 0 ms, p95 0 ms"]
      ])
    }))
})

describe("the page", () => {
  it.effect("is one file with uPlot inlined and no address to fetch", () =>
    Effect.gen(function*() {
      const recording = yield* recordedRun
      const html = yield* Report.render({ title: "run", providers: [{ recording }] })
      assert.include(html, "uPlot")
      assert.notMatch(html, /<script[^>]+src=|<link[^>]+href=|https?:\/\/[^"'\s]*\.(js|css)/)
    }))

  it.effect("escapes every text: a provider named </script> stays text", () =>
    Effect.gen(function*() {
      const recording: ProviderRecording.Recording = { ...(yield* recordedRun), provider: "</script><b>x</b>&" }
      const html = yield* Report.render({
        title: "<title>\u2028",
        notes: ["<img src=x onerror=alert(1)>"],
        providers: [{
          recording,
          verdict: { binding: "none", reason: "</script><script>alert(1)</script>" }
        }]
      })
      // the only closing script tags are the page's own three
      assert.strictEqual(html.match(/<\/script/gi)?.length, 3)
      assert.notInclude(html, "<b>x</b>")
      assert.notInclude(html, "<img")
      assert.include(html, "&#60;/script&#62;&#60;b&#62;x&#60;/b&#62;&#38;")
      // the data round-trips through the page's JSON
      const json = /<script type="application\/json" id="sluice-report-data">([^<]*)<\/script>/.exec(html)
      assert.isNotNull(json)
      const data = JSON.parse(json?.[1] ?? "") as Report.Model
      assert.strictEqual(data.sections[0].provider, "</script><b>x</b>&")
      assert.strictEqual(data.title, "<title>\u2028")
    }))

  it.effect("an error names what it could not do, its tag first", () =>
    Effect.gen(function*() {
      const recording = yield* recordedRun
      const error = yield* Effect.flip(
        Report.write("/nonexistent-dir/report.html", { title: "x", providers: [{ recording }] })
      )
      assert.match(String(error), /^ReportError: could not write the report \(.*\) to \/nonexistent-dir\/report\.html$/)
    }))
})
