/**
 * `pnpm bench lanes`: what lanes cost, and what they buy.
 *
 * - Overhead: the same calls through a bulkhead without lanes, with priority lanes and with
 *   fair-share lanes, uncontended (one caller, a free permit) and contended (64 callers on 16
 *   permits, each call yielding once). Interleaved rounds in one process; the median per variant.
 * - Interactive wait: 8 permits saturated by 64 batch callers (each call 2 ms of real time), one
 *   interactive call every 20 ms; the interactive calls' permit wait (p50, p95, p99), with one queue
 *   and with priority lanes, in the same run.
 */
import { Bulkhead, BulkheadLanes } from "@sluice/bulkhead"
import { Clock, Effect, Fiber } from "effect"
import { formatNs, formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const ROUNDS = 5
const UNCONTENDED = 500_000
const CONTENDED = 200_000
const CALLERS = 64

const variants: ReadonlyArray<readonly [string, BulkheadLanes.Lanes | undefined, (i: number) => string | undefined]> = [
  ["no lanes", undefined, () => undefined],
  [
    "priority (2 lanes)",
    BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } }),
    (i) => (i % 2 === 0 ? "batch" : "interactive")
  ],
  ["fair share (4 lanes)", BulkheadLanes.fairShare({ weights: { t0: 3 } }), (i) => `t${i % 4}`]
]

const make = (permits: number, lanes: BulkheadLanes.Lanes | undefined) =>
  Bulkhead.unsafeMake({ name: "bench-lanes", permits, ...(lanes === undefined ? {} : { lanes }) })

const time = async (effect: Effect.Effect<unknown, unknown>, calls: number): Promise<number> => {
  const start = process.hrtime.bigint()
  await Effect.runPromise(effect)
  return Number(process.hrtime.bigint() - start) / calls
}

const uncontended = (lanes: BulkheadLanes.Lanes | undefined, laneOf: (i: number) => string | undefined) => {
  const bulkhead = make(1, lanes)
  const options = { lane: laneOf(1) }
  return time(
    Effect.repeatN(bulkhead.run(Effect.void, options), UNCONTENDED - 1),
    UNCONTENDED
  )
}

const contended = (lanes: BulkheadLanes.Lanes | undefined, laneOf: (i: number) => string | undefined) => {
  const bulkhead = make(16, lanes)
  const perCaller = CONTENDED / CALLERS
  return time(
    Effect.forEach(
      Array.from({ length: CALLERS }, (_, i) => i),
      (i) => Effect.repeatN(bulkhead.run(Effect.yieldNow(), { lane: laneOf(i) }), perCaller - 1),
      { concurrency: "unbounded", discard: true }
    ),
    CONTENDED
  )
}

/** The interactive calls' permit waits (ms) beside a saturating batch, in real time. */
const interactiveWaits = (lanes: BulkheadLanes.Lanes | undefined) =>
  Effect.gen(function*() {
    const bulkhead = make(8, lanes)
    const batch = yield* Effect.forEach(
      Array.from({ length: CALLERS }),
      () => Effect.fork(Effect.forever(bulkhead.run(Effect.sleep("2 millis"), { lane: "batch" }))),
      { concurrency: "unbounded" }
    )
    yield* Effect.sleep("100 millis")
    const waits: Array<number> = []
    for (let i = 0; i < 100; i++) {
      const asked = yield* Clock.currentTimeNanos
      yield* bulkhead.run(
        Effect.flatMap(Clock.currentTimeNanos, (now) => Effect.sync(() => waits.push(Number(now - asked) / 1e6))),
        { lane: "interactive" }
      )
      yield* Effect.sleep("20 millis")
    }
    yield* Fiber.interruptAll(batch)
    return waits.sort((a, b) => a - b)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

const main = async () => {
  const results = new Map<string, { uncontended: Array<number>; contended: Array<number> }>()
  for (const [name] of variants) results.set(name, { uncontended: [], contended: [] })
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, lanes, laneOf] of variants) {
      results.get(name)!.uncontended.push(await uncontended(lanes, laneOf))
      results.get(name)!.contended.push(await contended(lanes, laneOf))
    }
  }
  const base = results.get("no lanes")!
  const overheadRows = variants.map(([name]) => {
    const r = results.get(name)!
    return [
      name,
      formatNs(median(r.uncontended)),
      formatRatio(median(r.uncontended) / median(base.uncontended)),
      formatNs(median(r.contended)),
      formatRatio(median(r.contended) / median(base.contended))
    ]
  })
  const overheadHeader = [
    "bulkhead",
    "uncontended: per call",
    "vs no lanes",
    "64 callers on 16: per call",
    "vs no lanes"
  ]

  const oneQueue = await Effect.runPromise(interactiveWaits(undefined))
  const withLanes = await Effect.runPromise(interactiveWaits(variants[1][1]))
  const waitRows = [["one queue", oneQueue], ["priority lanes", withLanes]].map(([name, waits]) => {
    const w = waits as Array<number>
    return [name as string, ...[50, 95, 99].map((p) => `${percentile(w, p).toFixed(2)} ms`)]
  })
  const waitHeader = ["8 permits, 64 batch callers of 2 ms", "interactive wait p50", "p95", "p99"]

  console.log(textTable(overheadHeader, overheadRows))
  console.log()
  console.log(textTable(waitHeader, waitRows))
  writeSection(
    "Lanes",
    `Measured by \`pnpm bench lanes\` on ${machineLine()}. Overhead: median of ${ROUNDS} interleaved rounds in one ` +
      `process, ${UNCONTENDED.toLocaleString("en")} uncontended calls and ${
        CONTENDED.toLocaleString("en")
      } contended ones (each yields once) per round; the callers alternate lanes. Interactive wait: one run each, ` +
      `100 interactive calls 20 ms apart, real time.\n\n${markdownTable(overheadHeader, overheadRows)}\n\n` +
      `${markdownTable(waitHeader, waitRows)}\n\nWith one queue an interactive call waits behind the queued batch ` +
      `(56 callers for 8 permits of 2 ms: about 14 ms); with lanes it waits for the next permit to come back.`
  )
}

main()
