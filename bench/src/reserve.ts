/**
 * What usage-based limits cost: a reserve + settle (the estimate reserved, the actual usage settled
 * after the call) against a plain take of the same cost, on the memory store and on the Redis store
 * (a redis-server of the suite's own, loopback), in one run.
 *
 * One process, 64 callers in flight, limits that never bind (requests and tokens, 2 GCRA limits;
 * plus a plain take on a single GCRA limit, the Redis store's fast path); each caller takes (or
 * reserves, then settles 90 of its 100 estimated tokens: a give back on every call) again as soon
 * as it returns. 3 interleaved rounds of 2 s after a 1 s warm-up; the median round counts.
 *
 * Writes the "Reserve + settle" section of bench/RESULTS.md.
 */
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { cpus, loadavg } from "node:os"
// the same server helper the Redis store's tests use: one place that knows how to start Redis
import { startRedisServer } from "@sluice/test-utils/redisServer"
import { fiberLoops } from "./lib/fiberLoops.js"
import { formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const IN_FLIGHT = 64
const ROUNDS = 3
const ROUND_MILLIS = 2_000
const WARMUP_MILLIS = 1_000
const UNBOUND = 1_000_000_000
const COST = { requests: 1, tokens: 100 }
const ACTUAL = { tokens: 90 }

const limitsOf = (dimensions: boolean): RateLimiter.Settings =>
  dimensions
    ? {
      limits: [
        { dimension: "requests", limit: UNBOUND, window: "1 second", burst: 1_000_000 },
        { dimension: "tokens", limit: UNBOUND, window: "1 second", burst: 1_000_000 }
      ]
    }
    : { limit: UNBOUND, window: "1 second", burst: 1_000_000 }

interface Contender {
  readonly label: string
  readonly store: "memory" | "redis"
  readonly dimensions: boolean
  readonly usage: boolean
}

const contenders: ReadonlyArray<Contender> = [
  { label: "take, 1 limit", store: "memory", dimensions: false, usage: false },
  { label: "take, requests + tokens", store: "memory", dimensions: true, usage: false },
  { label: "reserve + settle, requests + tokens", store: "memory", dimensions: true, usage: true },
  { label: "take, 1 limit", store: "redis", dimensions: false, usage: false },
  { label: "take, requests + tokens", store: "redis", dimensions: true, usage: false },
  { label: "reserve + settle, requests + tokens", store: "redis", dimensions: true, usage: true }
]

const loops = fiberLoops(IN_FLIGHT)

const setUp = (c: Contender, url: string, scope: Scope.Scope) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = c.store === "memory"
        ? yield* RateLimiterStore.makeMemory
        : yield* RedisRateLimiterStore.make({ url, prefix: `bench-reserve-${Math.random().toString(36).slice(2, 8)}:` })
      const limiter = yield* RateLimiter.make({ ...limitsOf(c.dimensions), name: "bench", store })
      const acquire: Effect.Effect<void, unknown> = c.usage
        ? Effect.flatMap(limiter.reserve({ cost: COST }), (reservation) => reservation.settle(ACTUAL))
        : limiter.take(c.dimensions ? { cost: COST } : undefined)
      return (millis: number) => Effect.runPromise(loops(acquire)(millis))
    }).pipe(Scope.extend(scope))
  )

const fmt = (x: number, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "–"

const main = async () => {
  const server = await startRedisServer()
  const scope = Effect.runSync(Scope.make())
  try {
    const runs = []
    for (const c of contenders) runs.push(await setUp(c, server.url, scope))
    for (const run of runs) await run(WARMUP_MILLIS)
    const rounds: Array<Array<number>> = contenders.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, run] of runs.entries()) {
        const count = await run(ROUND_MILLIS)
        rounds[i].push(count / (ROUND_MILLIS / 1000))
      }
      console.log(`round ${round + 1}/${ROUNDS}: ${rounds.map((r) => fmt(r[round])).join(", ")} per second`)
    }
    const perSecond = rounds.map(median)
    const baseline = (c: Contender) =>
      perSecond[contenders.findIndex((o) => o.store === c.store && o.label === "take, requests + tokens")]
    const header = ["store", "operation", "per second (64 in flight)", "µs per operation", "vs take, same limits"]
    const rows = contenders.map((c, i) => [
      c.store,
      c.label,
      fmt(perSecond[i]),
      fmt(1e6 / perSecond[i], 2),
      formatRatio(perSecond[i] / baseline(c))
    ])
    console.log(textTable(header, rows))
    writeSection(
      "Reserve + settle",
      [
        machineLine(),
        "",
        "`pnpm bench reserve`: what a reserve + settle (100 tokens estimated, 90 settled: a give back on every call) " +
        `costs against a plain take of the same cost, one process, ${IN_FLIGHT} callers in flight, limits that ` +
        `never bind; ${ROUNDS} interleaved rounds of ${ROUND_MILLIS / 1000} s after a ${
          WARMUP_MILLIS / 1000
        } s warm-up, median round. Redis: a redis-server of the suite's own on loopback; a reserve + settle is ` +
        "two scripts (two round trips), a take one. " +
        `Load average when written: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores (a shared machine: the ` +
        "figures are only as steady as that).",
        "",
        markdownTable(header, rows)
      ].join("\n")
    )
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await server.stop()
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
