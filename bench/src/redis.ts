/**
 * The Redis rate limiter against its peers, on a redis-server of its own (loopback, free port).
 *
 * 1. Throughput: acquires per second from one process with 64 acquires in flight and a limit that
 *    never binds, for sluice (RateLimiter on RedisRateLimiterStore), rate-limiter-flexible's
 *    RateLimiterRedis and @effect/experimental's Redis RateLimiter, beside a bare ioredis PING loop
 *    with the same 64 in flight (one round trip per acquire is the ceiling). Rounds interleave the
 *    contenders; the median round counts.
 *    Each round also measures what an acquire costs: Redis' CPU (INFO cpu, its process), the time
 *    Redis spent in the contender's script (INFO commandstats, EVALSHA's usec_per_call; every
 *    contender but PING runs one script per acquire) and this process's CPU (the client side).
 *    Redis and the client share the machine's cores, so on a quiet machine throughput is bounded
 *    by their sum (when the client's writes come in bursts) or by the larger of the two.
 * 2. Round trips per acquire: every command the clients send, counted with MONITOR (which tells a
 *    client's commands from the ones a Lua script runs inside Redis); and every command Redis
 *    executed, scripts' included, from INFO commandstats.
 * 3. Precision: two processes share 2,000 per second for 4 s, 64 acquires in flight each; every
 *    start is recorded on the wall clock; achieved rate and the worst sliding 1 s window.
 *
 * Writes the "Redis rate limiter" section of bench/RESULTS.md.
 */
import * as ExperimentalRateLimiter from "@effect/experimental/RateLimiter"
import * as ExperimentalRedis from "@effect/experimental/RateLimiter/Redis"
import { RateLimiter } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { RedisConnection } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { spawn } from "node:child_process"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { RateLimiterQueue, RateLimiterRedis } from "rate-limiter-flexible"
import { fiberLoops as fiberLoopsOf } from "./lib/fiberLoops.js"
import { maxInWindow } from "./lib/limiterRuns.js"
// the same server helper the Redis store's tests use: one place that knows how to start Redis
import { startRedisServer } from "@sluice/test-utils/redisServer"
import { formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const IN_FLIGHT = 64
const ROUNDS = 3
const ROUND_MILLIS = 2_000
const WARMUP_MILLIS = 1_000
const MONITOR_MILLIS = 300
/** Never binds: far above what one process can reach. */
const UNBOUND = 1_000_000_000
const PRECISION_LIMIT = 2_000
const PRECISION_PROCESSES = 2
const PRECISION_SECONDS = 4
/**
 * 1 % of the rate. With burst 1 each process's pacer releases one start per timer tick, and Node's
 * timers tick at 1 ms at best: 2,000/s over two processes would be capped near 1,000/s each.
 */
const PRECISION_BURST = 20
/**
 * How a user who must never cross the quota configures sluice (docs/guides/distributed-limits.md):
 * `limit + burst + rate × D ≤ quota`, here with D = 10 ms of timer lateness: 2,000 − 20 − 20.
 */
const LATENESS_BUDGET_MILLIS = 10
const UNDER_QUOTA_LIMIT = PRECISION_LIMIT - PRECISION_BURST - (PRECISION_LIMIT * LATENESS_BUDGET_MILLIS) / 1000

/**
 * A contender, set up once: acquires with IN_FLIGHT in flight for `millis` and returns how many;
 * `started` is called right after each acquire returns.
 */
interface Running {
  readonly run: (millis: number, started?: () => void) => Promise<number>
  readonly close: () => Promise<void>
}

interface Contender {
  readonly label: string
  readonly config: string
  /** For throughput: a limit that never binds. */
  readonly unbound: (url: string, port: number) => Promise<Running>
  /** For precision: `limit` per second, waiting (not failing) when over; null when not measured. */
  readonly limited: ((url: string, port: number, limit: number, prefix: string) => Promise<Running>) | null
}

const now = () => performance.now()

/** IN_FLIGHT promise loops, each acquiring again as soon as the previous acquire resolves. */
const promiseLoops = (acquire: () => Promise<unknown>) => async (millis: number, started?: () => void) => {
  const deadline = now() + millis
  let count = 0
  const loop = async () => {
    while (now() < deadline) {
      await acquire()
      count++
      started?.()
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop))
  return count
}

/** IN_FLIGHT fibers, each acquiring again as soon as the previous acquire returns. */
const fiberLoops = fiberLoopsOf(IN_FLIGHT)

/** A fresh prefix per throughput run; the processes of one precision run share theirs. */
const freshPrefix = (label: string) => `bench-${label}-${Math.random().toString(36).slice(2, 8)}:`

/**
 * How the store's commands reach the socket: "corked" is the store as shipped (the commands of one
 * tick written in groups); "uncorked" the same store on a client whose socket ignores `cork()`, one
 * write per command; "auto-pipelined" that client with ioredis' `enableAutoPipelining`.
 */
type Writes = "corked" | "uncorked" | "auto-pipelined"

const storeOf = (url: string, prefix: string, writes: Writes) => {
  if (writes === "corked") return RedisRateLimiterStore.make({ url, prefix })
  return Effect.gen(function*() {
    const client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 1_000,
      enableAutoPipelining: writes === "auto-pipelined"
    })
    yield* Effect.promise(() => new Promise((resolve) => client.once("ready", resolve)))
    client.stream.cork = () => {}
    yield* Effect.addFinalizer(() => Effect.sync(() => client.disconnect()))
    const connection = yield* RedisConnection.make({ client })
    return yield* Effect.provideService(
      RedisRateLimiterStore.makeFromConnection({ prefix }),
      RedisConnection.RedisConnection,
      connection
    )
  })
}

const sluice = async (
  url: string,
  limit: number,
  burst: number,
  prefix: string,
  writes: Writes = "corked"
): Promise<Running> => {
  const scope = Effect.runSync(Scope.make())
  const limiter = await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* storeOf(url, prefix, writes)
      return yield* RateLimiter.make({ name: "bench", limit, window: "1 second", burst, store })
    }).pipe(Scope.extend(scope))
  )
  const loops = fiberLoops(limiter.take())
  return {
    run: (millis, started) => Effect.runPromise(loops(millis, started)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The store alone, without the RateLimiter in front: what the Redis part of a take costs. */
const sluiceStore = async (url: string): Promise<Running> => {
  const scope = Effect.runSync(Scope.make())
  const store = await Effect.runPromise(
    RedisRateLimiterStore.make({ url, prefix: freshPrefix("store") }).pipe(Scope.extend(scope))
  )
  const request = {
    key: "bench",
    limits: [{ algorithm: "gcra" as const, limit: UNBOUND, windowMillis: 1000, burst: 1000 }],
    cost: 1,
    maxWaitMillis: Number.POSITIVE_INFINITY
  }
  const loops = fiberLoops(store.reserve(request))
  return {
    run: (millis, started) => Effect.runPromise(loops(millis, started)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const experimental = async (
  port: number,
  limit: number,
  onExceeded: "fail" | "delay",
  prefix: string
): Promise<Running> => {
  const runtime = ManagedRuntime.make(
    ExperimentalRateLimiter.layer.pipe(
      Layer.provide(ExperimentalRedis.layerStore({ host: "127.0.0.1", port, prefix }))
    )
  )
  const withLimiter = await runtime.runPromise(ExperimentalRateLimiter.makeWithRateLimiter)
  // token-bucket: its Redis fixed window needs a whole number of milliseconds per token (PX)
  const loops = fiberLoops(
    withLimiter({ key: "bench", limit, window: "1 second", algorithm: "token-bucket", onExceeded })(Effect.void)
  )
  return { run: (millis, started) => runtime.runPromise(loops(millis, started)), close: () => runtime.dispose() }
}

const flexible = async (port: number, limit: number, queued: boolean, prefix: string): Promise<Running> => {
  const client = new Redis({ host: "127.0.0.1", port, enableOfflineQueue: false })
  await new Promise((resolve) => client.once("ready", resolve))
  const limiter = new RateLimiterRedis({ storeClient: client, points: limit, duration: 1, keyPrefix: prefix })
  const queue = new RateLimiterQueue(limiter, { maxQueueSize: 10_000 })
  const acquire = queued ? () => queue.removeTokens(1, "bench") : () => limiter.consume("bench")
  return { run: promiseLoops(acquire), close: async () => void (await client.quit()) }
}

const pingLoop = async (port: number): Promise<Running> => {
  const client = new Redis({ host: "127.0.0.1", port, enableOfflineQueue: false })
  await new Promise((resolve) => client.once("ready", resolve))
  return { run: promiseLoops(() => client.ping()), close: async () => void (await client.quit()) }
}

const contenders: ReadonlyArray<Contender> = [
  {
    label: "ioredis PING loop",
    config: "ceiling: one round trip",
    unbound: (_url, port) => pingLoop(port),
    limited: null
  },
  {
    label: "sluice",
    config: "RateLimiter + RedisRateLimiterStore, gcra",
    unbound: (url) => sluice(url, UNBOUND, 1_000, freshPrefix("sluice")),
    limited: (url, _port, limit, prefix) => sluice(url, limit, PRECISION_BURST, prefix)
  },
  {
    label: "sluice, uncorked",
    config: "as sluice, one socket write per command",
    unbound: (url) => sluice(url, UNBOUND, 1_000, freshPrefix("uncorked"), "uncorked"),
    limited: null
  },
  {
    label: "sluice, auto-pipelined",
    config: "as sluice, uncorked, ioredis enableAutoPipelining",
    unbound: (url) => sluice(url, UNBOUND, 1_000, freshPrefix("autopipe"), "auto-pipelined"),
    limited: null
  },
  {
    label: "sluice store only",
    config: "RedisRateLimiterStore.reserve, no RateLimiter",
    unbound: (url) => sluiceStore(url),
    limited: null
  },
  {
    label: "rate-limiter-flexible",
    config: "RateLimiterRedis (+ RateLimiterQueue to wait)",
    unbound: (_url, port) => flexible(port, UNBOUND, false, freshPrefix("rlf")),
    limited: (_url, port, limit, prefix) => flexible(port, limit, true, prefix)
  },
  {
    label: "@effect/experimental",
    config: "RateLimiter/Redis, token-bucket",
    unbound: (_url, port) => experimental(port, UNBOUND, "fail", freshPrefix("experimental")),
    limited: (_url, port, limit, prefix) => experimental(port, limit, "delay", prefix)
  }
]

// -----------------------------------------------------------------------------
// precision: child processes
// -----------------------------------------------------------------------------

interface ChildArgs {
  readonly contender: number
  readonly url: string
  readonly port: number
  readonly limit: number
  readonly seconds: number
  /** Shared by the processes of one run: they share one quota. */
  readonly prefix: string
}

/** In a child: wait for "GO" on stdin, acquire for `seconds`, print every start's wall-clock instant. */
const child = async (args: ChildArgs) => {
  const limited = contenders[args.contender].limited
  if (limited === null) throw new Error("not a limited contender")
  const running = await limited(args.url, args.port, args.limit, args.prefix)
  const starts: Array<number> = []
  const wall = () => performance.timeOrigin + performance.now()
  process.stdout.write("READY\n")
  await new Promise<void>((resolve) => {
    const lines = readline.createInterface({ input: process.stdin })
    lines.on("line", (line) => {
      if (line === "GO") {
        lines.close()
        resolve()
      }
    })
  })
  await running.run(args.seconds * 1000, () => starts.push(wall()))
  await running.close()
  process.stdout.write(`RESULT ${JSON.stringify(starts)}\n`)
  // a waiting limiter may still hold timers
  process.exit(0)
}

/** Spawns one child of this very script; resolves with its handle once it is READY. */
const spawnChild = (args: ChildArgs) =>
  new Promise<{ readonly go: () => void; readonly result: Promise<ReadonlyArray<number>>; readonly kill: () => void }>(
    (resolve, reject) => {
      const proc = spawn(process.execPath, [
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        `--child=${JSON.stringify(args)}`
      ], {
        stdio: ["pipe", "pipe", "inherit"]
      })
      let onResult: (starts: ReadonlyArray<number>) => void = () => {}
      const result = new Promise<ReadonlyArray<number>>((res, rej) => {
        onResult = res
        proc.once("exit", (code) => rej(new Error(`child exited with ${code} before its result`)))
      })
      result.catch(() => {})
      const timer = setTimeout(() => {
        proc.kill("SIGKILL")
        reject(new Error("child not ready within 30 s"))
      }, 30_000)
      readline.createInterface({ input: proc.stdout }).on("line", (line) => {
        if (line === "READY") {
          clearTimeout(timer)
          resolve({ go: () => proc.stdin.write("GO\n"), result, kill: () => proc.kill("SIGKILL") })
        } else if (line.startsWith("RESULT ")) {
          onResult(JSON.parse(line.slice("RESULT ".length)) as ReadonlyArray<number>)
        }
      })
    }
  )

interface Precision {
  readonly starts: number
  readonly achievedPerSecond: number
  readonly worst1s: number
}

const precision = async (contender: number, url: string, port: number, limit = PRECISION_LIMIT): Promise<Precision> => {
  const args: ChildArgs = {
    contender,
    url,
    port,
    limit,
    seconds: PRECISION_SECONDS,
    prefix: freshPrefix(`precision-${contender}`)
  }
  const children = await Promise.all(Array.from({ length: PRECISION_PROCESSES }, () => spawnChild(args)))
  try {
    for (const c of children) c.go()
    const all = (await Promise.all(children.map((c) => c.result))).flat()
    const sorted = Float64Array.from(all).sort()
    const first = sorted[0]
    // what the upstream sees during the run: starts in the 4 s from the first one
    const inRun = sorted.filter((t) => t < first + PRECISION_SECONDS * 1000).length
    return { starts: sorted.length, achievedPerSecond: inRun / PRECISION_SECONDS, worst1s: maxInWindow(sorted, 1000) }
  } finally {
    for (const c of children) c.kill()
  }
}

// -----------------------------------------------------------------------------
// round trips
// -----------------------------------------------------------------------------

/** Commands per acquire: sent by clients (MONITOR, scripts' own excluded) and executed in all. */
const roundTrips = async (running: Running, port: number) => {
  const admin = new Redis({ host: "127.0.0.1", port })
  const monitor = await admin.monitor()
  let fromClients = 0
  let fromScripts = 0
  monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
    if (source === "lua") fromScripts++
    else if (!/^(info|config|monitor)$/i.test(args[0] ?? "")) fromClients++
  })
  const acquires = await running.run(MONITOR_MILLIS)
  // MONITOR lines trail the commands a little
  await new Promise((resolve) => setTimeout(resolve, 200))
  monitor.disconnect()
  admin.disconnect()
  return { perAcquire: fromClients / acquires, executedPerAcquire: (fromClients + fromScripts) / acquires }
}

// -----------------------------------------------------------------------------
// cost per acquire
// -----------------------------------------------------------------------------

interface Costs {
  /** Redis' CPU (user + system, all threads) per acquire, in µs. */
  readonly redisCpu: number
  /** Average time of one EVALSHA inside Redis, in µs; NaN when the contender ran none. */
  readonly scriptMicros: number
  /** This process's CPU per acquire, in µs. */
  readonly clientCpu: number
}

const redisCpuSeconds = (info: string): number => {
  let total = 0
  for (const match of info.matchAll(/^used_cpu_(?:sys|user):([\d.]+)/gm)) total += Number(match[1])
  return total
}

/** Runs one round of `running` and measures what its acquires cost Redis and this process. */
const measuredRound = async (running: Running, admin: Redis, millis: number) => {
  await admin.config("RESETSTAT")
  const redisBefore = redisCpuSeconds(await admin.info("cpu"))
  const clientBefore = process.cpuUsage()
  const acquires = await running.run(millis)
  const client = process.cpuUsage(clientBefore)
  const redisAfter = redisCpuSeconds(await admin.info("cpu"))
  const evalsha = /^cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/m.exec(await admin.info("commandstats"))
  const costs: Costs = {
    redisCpu: ((redisAfter - redisBefore) * 1e6) / acquires,
    scriptMicros: evalsha === null ? Number.NaN : Number(evalsha[1]),
    clientCpu: (client.user + client.system) / acquires
  }
  return { acquires, costs }
}

// -----------------------------------------------------------------------------
// the run
// -----------------------------------------------------------------------------

const fmt = (
  x: number,
  digits = 0
) => (Number.isFinite(x)
  ? x.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits })
  : "–")

const parent = async () => {
  const server = await startRedisServer()
  try {
    const { port, url } = server
    console.log(`redis-server on port ${port}`)
    const running = await Promise.all(contenders.map((c) => c.unbound(url, port)))
    for (const r of running) await r.run(WARMUP_MILLIS)
    const admin = new Redis({ host: "127.0.0.1", port })
    const rounds: Array<Array<number>> = contenders.map(() => [])
    const costs: Array<Array<Costs>> = contenders.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, r] of running.entries()) {
        const measured = await measuredRound(r, admin, ROUND_MILLIS)
        rounds[i].push(measured.acquires / (ROUND_MILLIS / 1000))
        costs[i].push(measured.costs)
      }
      console.log(`round ${round + 1}/${ROUNDS}: ${rounds.map((r) => fmt(r[round])).join(", ")} acquires/s`)
    }
    admin.disconnect()
    const trips: Array<{ readonly perAcquire: number; readonly executedPerAcquire: number }> = []
    for (const r of running) trips.push(await roundTrips(r, port))
    for (const r of running) await r.close()

    const precisions: Array<Precision | undefined> = []
    for (const [i, c] of contenders.entries()) {
      if (c.limited === null) {
        precisions.push(undefined)
        continue
      }
      process.stdout.write(`precision: ${c.label} ... `)
      const p = await precision(i, url, port)
      console.log(`${fmt(p.achievedPerSecond)}/s, worst 1 s window ${p.worst1s}`)
      precisions.push(p)
    }

    const own = 1
    process.stdout.write(`precision: sluice at limit ${fmt(UNDER_QUOTA_LIMIT)} ... `)
    const underQuota = await precision(own, url, port, UNDER_QUOTA_LIMIT)
    console.log(`${fmt(underQuota.achievedPerSecond)}/s, worst 1 s window ${underQuota.worst1s}`)

    const throughput = rounds.map(median)
    const medianCost = (i: number, pick: (c: Costs) => number) => median(costs[i].map(pick))
    const ping = throughput[0]
    const rlf = throughput[contenders.findIndex((c) => c.label === "rate-limiter-flexible")]
    const header = [
      "contender",
      "config",
      "acquires/s (64 in flight)",
      "vs PING",
      "vs RLF",
      "Redis CPU µs / acquire",
      "script µs / call",
      "client CPU µs / acquire",
      "round trips / acquire",
      "commands executed / acquire",
      `2 processes at ${fmt(PRECISION_LIMIT)}/s: achieved`,
      "worst 1 s window"
    ]
    const rows = contenders.map((c, i) => {
      const p = precisions[i]
      return [
        c.label,
        c.config,
        fmt(throughput[i]),
        formatRatio(throughput[i] / ping),
        formatRatio(throughput[i] / rlf),
        fmt(medianCost(i, (c) => c.redisCpu), 1),
        fmt(medianCost(i, (c) => c.scriptMicros), 1),
        fmt(medianCost(i, (c) => c.clientCpu), 1),
        fmt(trips[i].perAcquire, 2),
        fmt(trips[i].executedPerAcquire, 2),
        p === undefined
          ? "–"
          : `${fmt(p.achievedPerSecond)}/s (${fmt((100 * p.achievedPerSecond) / PRECISION_LIMIT, 1)} %)`,
        p === undefined ? "–" : String(p.worst1s)
      ]
    })
    const achievedCell = (p: Precision) =>
      `${fmt(p.achievedPerSecond)}/s (${fmt((100 * p.achievedPerSecond) / PRECISION_LIMIT, 1)} %)`
    rows.push([
      "sluice, under the quota",
      `limit ${fmt(UNDER_QUOTA_LIMIT)}: quota − burst − rate × ${LATENESS_BUDGET_MILLIS} ms`,
      ...Array.from({ length: 8 }, () => "–"),
      achievedCell(underQuota),
      String(underQuota.worst1s)
    ])
    console.log()
    console.log(textTable(header, rows))

    const ownPrecision = precisions[own]
    const verdict = (ok: boolean) => (ok ? "met" : "**missed**")
    const targets = [
      `- exactly one round trip per take: ${fmt(trips[own].perAcquire, 2)} — ${
        verdict(Math.abs(trips[own].perAcquire - 1) < 0.01)
      }`,
      `- acquires/s ≥ 0.8x the PING loop: ${formatRatio(throughput[own] / ping)} (${fmt(throughput[own])} vs ${
        fmt(ping)
      }) — ${verdict(throughput[own] >= 0.8 * ping)}`,
      `- acquires/s ≥ 1.0x rate-limiter-flexible's: ${formatRatio(throughput[own] / rlf)} (${fmt(throughput[own])} vs ${
        fmt(rlf)
      }) — ${verdict(throughput[own] >= rlf)}`,
      ownPrecision === undefined ?
        "- precision: no result" :
        `- two processes achieve ≥ 97 % of ${fmt(PRECISION_LIMIT)}/s: ${
          fmt((100 * ownPrecision.achievedPerSecond) / PRECISION_LIMIT, 1)
        } % — ${verdict(ownPrecision.achievedPerSecond >= 0.97 * PRECISION_LIMIT)}`,
      ownPrecision === undefined ?
        "" :
        `- no 1 s window over the quota (${fmt(PRECISION_LIMIT)}), configured as the docs say for a hard quota ` +
        `(limit ${fmt(UNDER_QUOTA_LIMIT)}): worst ${underQuota.worst1s} — ${
          verdict(underQuota.worst1s <= PRECISION_LIMIT)
        }; achieved ${fmt((100 * underQuota.achievedPerSecond) / PRECISION_LIMIT, 1)} % of the quota — ${
          verdict(underQuota.achievedPerSecond >= 0.97 * PRECISION_LIMIT)
        }. At limit ${fmt(PRECISION_LIMIT)} itself the worst window is ${ownPrecision.worst1s}, within the ` +
        `documented bound limit + burst + rate × timer lateness (${
          PRECISION_LIMIT + PRECISION_BURST
        } + 2 per ms of lateness), not within the quota`
    ]
    const storeOnly = throughput[contenders.findIndex((c) => c.label === "sluice store only")]
    if (throughput[own] > ping || storeOnly > ping) {
      targets.push(
        "",
        "Why sluice can pass the PING loop, which makes one round trip per acquire as it does: the " +
          "PING loop writes each command to the socket on its own, while sluice's store corks the " +
          "socket and writes the commands of one tick in groups of 16 (one writev each), so both the " +
          "client and Redis make fewer system calls per acquire."
      )
    }
    const row = (label: string) => contenders.findIndex((c) => c.label === label)
    const [uncorked, autoPipelined] = [row("sluice, uncorked"), row("sluice, auto-pipelined")]
    const versus = (i: number) =>
      `${formatRatio(throughput[own] / throughput[i])} the acquires/s, ${
        formatRatio(medianCost(own, (c) => c.clientCpu) / medianCost(i, (c) => c.clientCpu))
      } the client CPU and ${
        formatRatio(medianCost(own, (c) => c.redisCpu) / medianCost(i, (c) => c.redisCpu))
      } the Redis CPU per acquire`
    targets.push(
      "",
      `The store's corked writes (the default) against one socket write per command: ${versus(uncorked)}; ` +
        `against ioredis' auto-pipelining: ${versus(autoPipelined)}.`
    )
    console.log()
    console.log(targets.join("\n").replace(/\*\*/g, ""))

    writeSection(
      "Redis rate limiter",
      [
        machineLine(),
        "",
        `\`pnpm bench redis\`: a redis-server of the suite's own on loopback. Throughput: one process, ${IN_FLIGHT} ` +
        `acquires in flight, a limit that never binds; ${ROUNDS} interleaved rounds of ${
          ROUND_MILLIS / 1000
        } s after ` +
        `a ${WARMUP_MILLIS / 1000} s warm-up, median round. Costs per acquire, median round: Redis' CPU (INFO cpu), ` +
        `the time one EVALSHA took inside Redis (INFO commandstats usec_per_call) and the bench process's CPU ` +
        `(the client side); Redis and the client share the machine's cores. Round trips: the commands clients sent per acquire, ` +
        `counted with MONITOR over ${MONITOR_MILLIS} ms (commands a Lua script runs inside Redis excluded; ` +
        `"executed" counts them too, as INFO commandstats does). Precision: ${PRECISION_PROCESSES} processes share ` +
        `${fmt(PRECISION_LIMIT)} per second for ${PRECISION_SECONDS} s, ${IN_FLIGHT} acquires in flight each, ` +
        `every start recorded on the wall clock; "achieved" is starts in the ${PRECISION_SECONDS} s from the first ` +
        `one, the worst window is sliding. sluice paces with GCRA, burst ${PRECISION_BURST}; rate-limiter-flexible waits with its ` +
        `RateLimiterQueue; @effect/experimental with \`onExceeded: "delay"\`.`,
        "",
        markdownTable(header, rows),
        "",
        "Targets for sluice:",
        "",
        ...targets
      ].join("\n")
    )
  } finally {
    await server.stop()
  }
}

const childArg = process.argv.find((arg) => arg.startsWith("--child="))
const main = childArg === undefined ? parent() : child(JSON.parse(childArg.slice("--child=".length)) as ChildArgs)
main.then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
