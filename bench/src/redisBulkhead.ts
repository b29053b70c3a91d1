/**
 * `pnpm bench redis-bulkhead`: the distributed bulkhead (@sluice/bulkhead-redis) against
 * redis-semaphore's Semaphore and effect-distributed-lock's DistributedSemaphore, on a
 * redis-server of the suite's own (loopback, free port), same K, same load, in the same run.
 *
 * 1. Throughput: acquire + release cycles per second (nothing done while holding), 64 in flight,
 *    K = 8: in one process, and in 4 child processes × 16 sharing the name (the fleet carries the
 *    same 64). K = 8 is the issue's case (a provider whose limit is 8, 4 workers): 56 of the 64 wait
 *    at any time, so what is measured is the hand-over of a released permit to a waiter, the path
 *    FIFO and the wake-ups are about. A K = 64 row (nobody waits) shows the bare cost of a cycle.
 *    Rounds interleave the contenders; the median round counts. Each run also reads what a cycle
 *    costs: commands Redis executed (INFO stats, scripts' inner calls included), scripts run and
 *    their time in Redis, messages published (INFO commandstats), Redis' CPU (INFO cpu), and the
 *    CPU of the processes running the cycles (a fleet's children report theirs).
 * 2. Round trips per uncontended acquire and per release: commands the clients sent (MONITOR,
 *    scripts' own calls and the bench's INFO excluded), acquires one at a time, then releases one at
 *    a time; and connections opened (INFO stats) per acquire.
 * 3. FIFO under contention, in one process and across the 4: the server's arrival order against
 *    its grant order, both read from MONITOR (the commands a script runs are logged in execution
 *    order). A violation is a grant made while an older arrival still waits.
 * 4. A holder killed with SIGKILL while holding all K permits, a waiter queued in this process:
 *    the time from the kill to the waiter's grant, against the lease TTL.
 * 5. Lanes (RFC 0004): sluice's cycle under a lane policy (priority, fair share: every release is a
 *    script, no hand-over) beside the single queue (hand-overs on), contended and not, one process.
 *
 * Writes the "Redis bulkhead" section of bench/RESULTS.md, keeping the previous run beside it.
 */
import { BulkheadLanes } from "@sluice/bulkhead"
import { RedisBulkhead } from "@sluice/bulkhead-redis"
import { RedisConnection } from "@sluice/redis"
import { startRedisServer } from "@sluice/test-utils/redisServer"
import { DistributedSemaphore, RedisBacking } from "effect-distributed-lock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import { Redis } from "ioredis"
import { spawn } from "node:child_process"
import * as os from "node:os"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { Semaphore } from "redis-semaphore"
import { formatRatio, machineLine, markdownTable, median, readSection, textTable, writeSection } from "./lib/report.js"

const IN_FLIGHT = 64
const PROCESSES = 4
const PERMITS = 8
const UNCONTENDED_PERMITS = IN_FLIGHT
const ROUNDS = 5
const ROUND_MILLIS = 2_000
const WARMUP_MILLIS = 1_000
/** A fleet's warm-up: longer, as each of its processes runs a quarter of the load. */
const FLEET_WARMUP_MILLIS = 3_000
const FIFO_MILLIS = 1_500
/** The lease TTL of the throughput and FIFO runs: sluice's default, redis-semaphore's default lockTimeout. */
const TTL_MILLIS = 10_000
/** The lease TTL of the kill run: short, so the run stays short. */
const KILL_TTL_MILLIS = 2_000
const ROUND_TRIP_CALLS = 50
const ROUND_TRIP_TTL_MILLIS = 120_000

const now = () => performance.now()
const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))
const fresh = (what: string) => `${what}-${Math.random().toString(36).slice(2, 8)}`

// -----------------------------------------------------------------------------
// the contenders
// -----------------------------------------------------------------------------

interface Setup {
  readonly port: number
  readonly url: string
  readonly name: string
  readonly permits: number
  readonly ttlMillis: number
}

interface Opened {
  /** `inFlight` loops of acquire + release for `millis`; resolves with the cycles completed. */
  readonly cycles: (millis: number, inFlight: number) => Promise<number>
  /** Takes one permit (waiting if need be); resolves with its release. */
  readonly acquire: () => Promise<() => Promise<void>>
  readonly close: () => Promise<void>
}

/** What one MONITOR line means for the FIFO count: a ticket arrived, was granted, or released. */
interface Event {
  readonly kind: "arrive" | "grant" | "release"
  readonly id: string
}

interface Contender {
  readonly label: string
  readonly config: string
  readonly open: (setup: Setup) => Promise<Opened>
  /** `lua`: the command was run by a script. */
  readonly classify: (setup: Setup, args: ReadonlyArray<string>, lua: boolean) => ReadonlyArray<Event>
  /** The processes holding permits now, one entry per permit (none when the holders do not say). */
  readonly holders?: (setup: Setup, admin: Redis) => Promise<ReadonlyArray<string>>
}

/** `inFlight` fibers, each starting a cycle again as soon as the previous one ends. */
const fiberCycles = (cycle: Effect.Effect<unknown>) => (millis: number, inFlight: number): Promise<number> =>
  Effect.runPromise(Effect.suspend(() => {
    const deadline = now() + millis
    let count = 0
    const worker = Effect.whileLoop({
      while: () => now() < deadline,
      body: () => cycle,
      step: () => {
        count++
      }
    })
    return Effect.zipRight(
      Effect.all(Array.from({ length: inFlight }, () => worker), { concurrency: "unbounded", discard: true }),
      Effect.sync(() => count)
    )
  }))

/** `inFlight` fibers as `fiberCycles`, fiber `i` running `cycleOf(i)`. */
const fiberCyclesBy = (cycleOf: (i: number) => Effect.Effect<unknown>) => (millis: number, inFlight: number) =>
  Effect.runPromise(Effect.suspend(() => {
    const deadline = now() + millis
    let count = 0
    const worker = (i: number) => {
      const cycle = cycleOf(i)
      return Effect.whileLoop({
        while: () => now() < deadline,
        body: () => cycle,
        step: () => {
          count++
        }
      })
    }
    return Effect.zipRight(
      Effect.all(Array.from({ length: inFlight }, (_, i) => worker(i)), { concurrency: "unbounded", discard: true }),
      Effect.sync(() => count)
    )
  }))

/** `inFlight` promise loops, each starting a cycle again as soon as the previous one resolves. */
const promiseCycles = (cycle: () => Promise<unknown>) => async (millis: number, inFlight: number) => {
  const deadline = now() + millis
  let count = 0
  const loop = async () => {
    while (now() < deadline) {
      await cycle()
      count++
    }
  }
  await Promise.all(Array.from({ length: inFlight }, loop))
  return count
}

/** A scoped acquire as a promise: the permit is given back when its scope closes. */
const scopedAcquire = (take: Effect.Effect<unknown, unknown, Scope.Scope>) => async () => {
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Scope.extend(Effect.orDie(take), scope))
  return () => Effect.runPromise(Scope.close(scope, Exit.void))
}

const connect = async (port: number): Promise<Redis> => {
  const client = new Redis({ host: "127.0.0.1", port })
  await new Promise((resolve) => client.once("ready", resolve))
  return client
}

const eq = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b

const sluice: Contender = {
  label: "sluice",
  config: "RedisBulkhead (strict FIFO; one script per event-loop turn; hand-overs in the process; grants by SPUBLISH)",
  open: async (s) => {
    const scope = Effect.runSync(Scope.make())
    const bulkhead = await Effect.runPromise(
      RedisBulkhead.make({ name: s.name, permits: s.permits, leaseTtl: s.ttlMillis }).pipe(
        Effect.provideServiceEffect(RedisConnection.RedisConnection, RedisConnection.make({ url: s.url })),
        Scope.extend(scope)
      )
    )
    return {
      cycles: fiberCycles(Effect.orDie(bulkhead.run(Effect.void))),
      acquire: scopedAcquire(bulkhead.acquire()),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  },
  // a queued ticket is added to the queue when it arrives, and every ticket to the held set when
  // granted (a renewal adds with XX): a grant of a ticket never queued is its arrival too
  classify: (s, args, lua) => {
    const { keys } = RedisBulkhead.keysOf("sluice:bh:", s.name)
    if (!lua) {
      // the batch script: EVALSHA sha 5 <keys> channel permits mark ttl maxWaiting (code id cost)...
      if (!eq(args[0], "evalsha") || args[3] !== keys[0]) return []
      const releases: Array<Event> = []
      for (let i = 13; i + 2 < args.length; i += 3) {
        // a release, or a hand-over: the holder's permits given to the process's oldest waiter
        if (args[i] === "r" || args[i] === "h") releases.push({ kind: "release", id: args[i + 1] })
      }
      return releases
    }
    if (eq(args[0], "zadd") && args[1] === keys[2] && args.length === 4) return [{ kind: "arrive", id: args[3] }]
    if (eq(args[0], "zadd") && args[1] === keys[4] && args.length === 4) return [{ kind: "grant", id: args[3] }]
    return []
  },
  // a held member is <ticket>:<cost>:<ttl>:<mark>.<n>: the mark names the bulkhead instance (one per process here)
  holders: async (s, admin) => {
    const { keys } = RedisBulkhead.keysOf("sluice:bh:", s.name)
    const held = await admin.zrange(keys[4], 0, -1)
    return held.map((member) => member.split(":")[3].split(".")[0])
  }
}

const redisSemaphore: Contender = {
  label: "redis-semaphore",
  config: "Semaphore 5.8.0, one per acquire (polls every 10 ms)",
  open: async (s) => {
    const client = await connect(s.port)
    // the suffix names the process in the identifier (for `holders`), nothing else
    const options = { lockTimeout: s.ttlMillis, acquireTimeout: 120_000, identifierSuffix: `pid${process.pid}` }
    const take = async () => {
      const semaphore = new Semaphore(client, s.name, s.permits, options)
      await semaphore.acquire()
      return semaphore
    }
    return {
      cycles: promiseCycles(async () => {
        const semaphore = await take()
        await semaphore.release()
      }),
      acquire: async () => {
        const semaphore = await take()
        return () => semaphore.release()
      },
      close: async () => void (await client.quit())
    }
  },
  // EVALSHA sha 1 key limit identifier lockTimeout now; the script's ZADD key now identifier grants
  classify: (s, args, lua) => {
    if (!lua && eq(args[0], "evalsha") && args.length === 8 && args[3].endsWith(s.name)) {
      return [{ kind: "arrive", id: args[5] }]
    }
    if (lua && eq(args[0], "zadd") && args.length === 4 && args[1].endsWith(s.name)) {
      return [{ kind: "grant", id: args[3] }]
    }
    if (!lua && eq(args[0], "zrem") && args.length === 3 && args[1].endsWith(s.name)) {
      return [{ kind: "release", id: args[2] }]
    }
    return []
  },
  holders: async (s, admin) => {
    const held = await admin.zrange(`semaphore:${s.name}`, 0, -1)
    return held.map((identifier) => identifier.slice(identifier.lastIndexOf("pid")))
  }
}

const edlPrefix = "edl:"

const effectDistributedLock: Contender = {
  label: "effect-distributed-lock",
  config: "DistributedSemaphore 0.0.11, withPermits(1) (pub/sub + polls every 100 ms)",
  open: async (s) => {
    const client = await connect(s.port)
    const runtime = ManagedRuntime.make(RedisBacking.layer(client, { keyPrefix: edlPrefix }))
    const semaphore = await runtime.runPromise(
      DistributedSemaphore.make(s.name, { limit: s.permits, ttl: Duration.millis(s.ttlMillis) })
    )
    return {
      cycles: fiberCycles(Effect.orDie(semaphore.withPermits(1)(Effect.void))),
      acquire: scopedAcquire(semaphore.take(1)),
      close: async () => {
        await runtime.dispose()
        await client.quit()
      }
    }
  },
  // EVAL script 1 key limit permits holderId ttl now; the script's ZADD key now holderId_0 grants
  classify: (s, args, lua) => {
    const key = `${edlPrefix}${s.name}`
    if (!lua && eq(args[0], "eval") && args.length === 9 && args[2] === "1" && args[3] === key) {
      return [{ kind: "arrive", id: args[6] }]
    }
    if (lua && eq(args[0], "zadd") && args.length === 4 && args[1] === key) {
      return [{ kind: "grant", id: args[3].replace(/_0$/, "") }]
    }
    // the release script: EVAL script 2 key channel permits holderId publish
    if (!lua && eq(args[0], "eval") && args.length === 8 && args[2] === "2" && args[3] === key) {
      return [{ kind: "release", id: args[6] }]
    }
    return []
  }
}

const contenders: ReadonlyArray<Contender> = [sluice, redisSemaphore, effectDistributedLock]

/** sluice's bulkhead without lanes and under each lane policy, its 64 fibers alternating between two lanes. */
const laneVariants: ReadonlyArray<{
  readonly label: string
  readonly config: string
  readonly lanes: BulkheadLanes.Lanes | undefined
  readonly laneOf: (fiber: number) => string | undefined
}> = [
  {
    label: "no lanes",
    config: "one FIFO queue; hand-overs in the process",
    lanes: undefined,
    laneOf: () => undefined
  },
  {
    label: "priority",
    config: "lanes interactive, batch (yieldFor 30 s), half the fibers in each; every release a script",
    lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } }),
    laneOf: (fiber) => (fiber % 2 === 0 ? "interactive" : "batch")
  },
  {
    label: "fair share",
    config: "tenants a, b at weights 3:1, half the fibers in each; every release a script",
    lanes: BulkheadLanes.fairShare({ weights: { a: 3 } }),
    laneOf: (fiber) => (fiber % 2 === 0 ? "a" : "b")
  }
]

const openLaneVariant = async (s: Setup, variant: (typeof laneVariants)[number]): Promise<Opened> => {
  const scope = Effect.runSync(Scope.make())
  const bulkhead = await Effect.runPromise(
    RedisBulkhead.make({
      name: s.name,
      permits: s.permits,
      leaseTtl: s.ttlMillis,
      ...(variant.lanes === undefined ? {} : { lanes: variant.lanes })
    }).pipe(
      Effect.provideServiceEffect(RedisConnection.RedisConnection, RedisConnection.make({ url: s.url })),
      Scope.extend(scope)
    )
  )
  return {
    cycles: fiberCyclesBy((fiber) => {
      const lane = variant.laneOf(fiber)
      return Effect.orDie(bulkhead.run(Effect.void, lane === undefined ? undefined : { lane }))
    }),
    acquire: scopedAcquire(bulkhead.acquire()),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

// -----------------------------------------------------------------------------
// child processes
// -----------------------------------------------------------------------------

interface ChildArgs {
  readonly contender: number
  readonly setup: Setup
  /** `cycles`: runs cycles on each "RUN millis inFlight" line; `hold`: takes every permit and waits. */
  readonly mode: "cycles" | "hold"
}

/**
 * In a child: parent → "RUN <millis> <inFlight>" | "EXIT"; child → "READY", "RESULT <cycles> <CPU µs>",
 * "HOLDING".
 */
const child = async (args: ChildArgs) => {
  const contender = contenders[args.contender]
  const opened = await contender.open(args.setup)
  if (args.mode === "hold") {
    for (let i = 0; i < args.setup.permits; i++) await opened.acquire()
    process.stdout.write("HOLDING\n")
    // held until killed
    setInterval(() => {}, 60_000)
    return new Promise<void>(() => {})
  }
  // warm up on a name of its own, so the shared name sees only measured load
  const warm = await contender.open({ ...args.setup, name: `${args.setup.name}-warm-${process.pid}` })
  await warm.cycles(WARMUP_MILLIS / 2, IN_FLIGHT / PROCESSES)
  await warm.close()
  process.stdout.write("READY\n")
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    const [command, millis, inFlight] = line.trim().split(" ")
    if (command === "EXIT") break
    if (command === "RUN") {
      const cpuBefore = process.cpuUsage()
      const count = await opened.cycles(Number(millis), Number(inFlight))
      const cpu = process.cpuUsage(cpuBefore)
      process.stdout.write(`RESULT ${count} ${cpu.user + cpu.system}\n`)
    }
  }
  await opened.close()
  process.exit(0)
}

interface Child {
  readonly lines: (match: (line: string) => boolean) => Promise<string>
  readonly send: (line: string) => void
  readonly kill: () => void
}

/** The children alive, killed when this process exits however it ends. */
const live = new Set<Child>()
process.once("exit", () => {
  for (const c of live) c.kill()
})

/** Spawns one child of this very script; resolves once it printed `ready`. */
const spawnChild = async (args: ChildArgs, ready: string): Promise<Child> => {
  const proc = spawn(process.execPath, [
    ...process.execArgv,
    fileURLToPath(import.meta.url),
    `--child=${JSON.stringify(args)}`
  ], { stdio: ["pipe", "pipe", "inherit"] })
  const seen: Array<string> = []
  const waiting = new Set<() => void>()
  readline.createInterface({ input: proc.stdout }).on("line", (line) => {
    seen.push(line)
    for (const w of waiting) w()
  })
  let exited = false
  proc.once("exit", () => {
    exited = true
    for (const w of waiting) w()
  })
  let from = 0
  const lines = (match: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => check(new Error("no answer from the child within 60 s")), 60_000)
      const check = (error?: Error) => {
        for (; from < seen.length; from++) {
          if (match(seen[from])) {
            const line = seen[from++]
            waiting.delete(check)
            clearTimeout(timer)
            return resolve(line)
          }
        }
        if (exited || error !== undefined) {
          waiting.delete(check)
          clearTimeout(timer)
          reject(error ?? new Error(`child exited with ${proc.exitCode}`))
        }
      }
      waiting.add(check)
      check()
    })
  const handle: Child = {
    lines,
    send: (line) => void proc.stdin.write(`${line}\n`),
    kill: () => void proc.kill("SIGKILL")
  }
  live.add(handle)
  proc.once("exit", () => live.delete(handle))
  await lines((l) => l === ready)
  return handle
}

/** A fleet of PROCESSES children on one name, each with IN_FLIGHT / PROCESSES cycles in flight. */
const fleet = async (contender: number, setup: Setup) => {
  const children = await Promise.all(
    Array.from({ length: PROCESSES }, () => spawnChild({ contender, setup, mode: "cycles" }, "READY"))
  )
  return {
    /** The fleet's cycles, and the CPU its processes spent on them together (µs). */
    run: async (millis: number) => {
      const results = children.map((c) => c.lines((l) => l.startsWith("RESULT ")))
      for (const c of children) c.send(`RUN ${millis} ${IN_FLIGHT / PROCESSES}`)
      const lines = await Promise.all(results)
      const words = lines.map((line) => line.split(" ").slice(1).map(Number))
      return { cycles: words.reduce((sum, [n]) => sum + n, 0), cpuMicros: words.reduce((sum, [, c]) => sum + c, 0) }
    },
    close: () => {
      for (const c of children) c.send("EXIT")
      for (const c of children) setTimeout(c.kill, 2_000).unref()
    }
  }
}

// -----------------------------------------------------------------------------
// Redis' side: INFO and MONITOR
// -----------------------------------------------------------------------------

const infoField = (info: string, field: string): number => {
  const match = new RegExp(`^${field}:([\\d.]+)`, "m").exec(info)
  return match === null ? Number.NaN : Number(match[1])
}

const cpuSeconds = (info: string) => infoField(info, "used_cpu_user") + infoField(info, "used_cpu_sys")

/** Scripts run (EVAL + EVALSHA) and the microseconds Redis spent in them. */
const scriptStats = (info: string) => {
  let calls = 0
  let usec = 0
  for (const match of info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1])
    usec += Number(match[2])
  }
  return { calls, usec }
}

/** The commands the scripts of the three contenders run that write (and PUBLISH, which fans out). */
const writes = new Set([
  "hset",
  "hdel",
  "zadd",
  "zrem",
  "zremrangebyscore",
  "incr",
  "persist",
  "pexpire",
  "spublish",
  "publish"
])

/** Calls of the commands that write, from INFO commandstats. */
const writeCalls = (info: string) => {
  let calls = 0
  for (const match of info.matchAll(/^cmdstat_([a-z]+):calls=(\d+)/gm)) {
    if (writes.has(match[1])) calls += Number(match[2])
  }
  return calls
}

interface Snapshot {
  /** Pub/sub messages sent (SPUBLISH and PUBLISH, scripts' included). */
  readonly messages: number
  readonly commands: number
  readonly writes: number
  readonly scripts: number
  readonly scriptMicros: number
  readonly cpu: number
  readonly connections: number
}

const snapshot = async (admin: Redis): Promise<Snapshot> => {
  const info = await admin.info("all")
  const calls = (command: string) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, "m").exec(info)?.[1] ?? 0)
  return {
    messages: calls("spublish") + calls("publish"),
    commands: infoField(info, "total_commands_processed"),
    writes: writeCalls(info),
    scripts: scriptStats(info).calls,
    scriptMicros: scriptStats(info).usec,
    cpu: cpuSeconds(info),
    connections: infoField(info, "total_connections_received")
  }
}

/** MONITOR from now on: `onCommand` sees every command but the admin connection's. */
const monitor = async (
  port: number,
  adminAddress: string,
  onCommand: (args: ReadonlyArray<string>, lua: boolean, seconds: number) => void
) => {
  const base = new Redis({ host: "127.0.0.1", port })
  const mon = await base.monitor()
  mon.on("monitor", (time: string, args: Array<string>, source: string) => {
    if (source !== adminAddress) onCommand(args, source === "lua", Number(time))
  })
  return async () => {
    // MONITOR lines trail the commands a little
    await sleep(300)
    mon.disconnect()
    base.disconnect()
  }
}

/** Grants made while an older arrival still waited, in the server's order of events. */
const fifoViolations = (events: ReadonlyArray<Event>) => {
  const index = new Map<string, number>()
  const granted: Array<boolean> = []
  let oldest = 0
  let grants = 0
  let violations = 0
  const arrive = (id: string) => {
    let i = index.get(id)
    if (i === undefined) {
      i = granted.length
      index.set(id, i)
      granted.push(false)
    }
    return i
  }
  for (const event of events) {
    if (event.kind === "release") continue
    const i = arrive(event.id)
    if (event.kind === "arrive" || granted[i]) continue
    granted[i] = true
    grants++
    while (oldest < granted.length && granted[oldest]) oldest++
    if (oldest < i) violations++
  }
  return { grants, violations }
}

// -----------------------------------------------------------------------------
// the measurements
// -----------------------------------------------------------------------------

interface Costs {
  readonly commandsPerCycle: number
  /** Of them, the commands that write (scripts' inner calls included). */
  readonly writesPerCycle: number
  readonly scriptsPerCycle: number
  /** The time Redis spent in one script, on average. */
  readonly microsPerScript: number
  readonly redisCpuMicros: number
  /** The CPU of the processes running the cycles (a fleet's together). */
  readonly clientCpuMicros: number
  readonly messagesPerCycle: number
}

const costsOf = (before: Snapshot, after: Snapshot, cycles: number, clientCpuMicros: number): Costs => ({
  commandsPerCycle: (after.commands - before.commands - 1) / cycles,
  writesPerCycle: (after.writes - before.writes) / cycles,
  scriptsPerCycle: (after.scripts - before.scripts) / cycles,
  microsPerScript: (after.scriptMicros - before.scriptMicros) / (after.scripts - before.scripts),
  redisCpuMicros: ((after.cpu - before.cpu) * 1e6) / cycles,
  clientCpuMicros: clientCpuMicros / cycles,
  messagesPerCycle: (after.messages - before.messages) / cycles
})

const measuredCycles = async (opened: Opened, admin: Redis) => {
  const before = await snapshot(admin)
  const clientBefore = process.cpuUsage()
  const cycles = await opened.cycles(ROUND_MILLIS, IN_FLIGHT)
  const client = process.cpuUsage(clientBefore)
  const after = await snapshot(admin)
  return {
    perSecond: cycles / (ROUND_MILLIS / 1000),
    costs: costsOf(before, after, cycles, client.user + client.system)
  }
}

interface RoundTrips {
  readonly perAcquire: number
  readonly perRelease: number
  readonly acquireCommands: string
  readonly releaseCommands: string
  readonly connectionsPerAcquire: number
}

const describeCommands = (counts: Map<string, number>, calls: number) =>
  [...counts.entries()].map(([name, n]) => `${name} ${fmt(n / calls, 2)}`).join(", ") || "none"

/** Uncontended: one acquire at a time (every permit free), then one release at a time. */
const roundTrips = async (opened: Opened, port: number, admin: Redis, adminAddress: string): Promise<RoundTrips> => {
  for (let i = 0; i < 3; i++) await (await opened.acquire())()
  let phase: Map<string, number> = new Map()
  const stop = await monitor(port, adminAddress, (args, lua) => {
    if (lua) return
    const name = (args[0] ?? "").toLowerCase()
    phase.set(name, (phase.get(name) ?? 0) + 1)
  })
  const acquirePhase = phase
  const before = await snapshot(admin)
  const releases: Array<() => Promise<void>> = []
  for (let i = 0; i < ROUND_TRIP_CALLS; i++) releases.push(await opened.acquire())
  await sleep(300)
  const afterAcquires = await snapshot(admin)
  const releasePhase: Map<string, number> = new Map()
  phase = releasePhase
  for (const release of releases) await release()
  await stop()
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
  return {
    perAcquire: total(acquirePhase) / ROUND_TRIP_CALLS,
    perRelease: total(releasePhase) / ROUND_TRIP_CALLS,
    acquireCommands: describeCommands(acquirePhase, ROUND_TRIP_CALLS),
    releaseCommands: describeCommands(releasePhase, ROUND_TRIP_CALLS),
    connectionsPerAcquire: (afterAcquires.connections - before.connections) / ROUND_TRIP_CALLS
  }
}

interface Fifo {
  readonly cycles: number
  readonly grants: number
  readonly violations: number
  /** Median milliseconds from a grant to its holder's release, on Redis' clock (MONITOR). */
  readonly grantToRelease: number
}

/** How a fleet's held permits are spread over its processes, sampled while the load runs. */
interface Spread {
  /** Samples with at least one permit held. */
  readonly samples: number
  /** Processes holding permits at once, on average over the samples. */
  readonly meanProcesses: number
  /** The share of the samples in which one process held every permit held. */
  readonly onlyOne: number
}

/** Reads the holders about once a millisecond while `run` drives the load; none when the holders do not say. */
const spread = async (
  contender: Contender,
  setup: Setup,
  admin: Redis,
  run: () => Promise<unknown>
): Promise<Spread | undefined> => {
  const holders = contender.holders
  if (holders === undefined) return undefined
  let running = true
  let samples = 0
  let processes = 0
  let onlyOne = 0
  const sampling = (async () => {
    while (running) {
      const held = await holders(setup, admin)
      if (held.length > 0) {
        const count = new Set(held).size
        samples++
        processes += count
        if (count === 1) onlyOne++
      }
      await sleep(1)
    }
  })()
  await run()
  running = false
  await sampling
  return { samples, meanProcesses: processes / samples, onlyOne: onlyOne / samples }
}

/** FIFO under contention: `run` drives the load while MONITOR records arrivals and grants. */
const fifo = async (
  contender: Contender,
  setup: Setup,
  port: number,
  adminAddress: string,
  run: () => Promise<number>
): Promise<Fifo> => {
  const events: Array<Event> = []
  // a grant's time, then from it to the holder's release: the hand-over, as Redis sees it
  const grantedAt = new Map<string, number>()
  const holds: Array<number> = []
  const stop = await monitor(port, adminAddress, (args, lua, seconds) => {
    for (const event of contender.classify(setup, args, lua)) {
      if (event.kind === "grant" && !grantedAt.has(event.id)) grantedAt.set(event.id, seconds)
      if (event.kind === "release") {
        const at = grantedAt.get(event.id)
        if (at !== undefined) holds.push((seconds - at) * 1000)
      }
      events.push(event)
    }
  })
  const cycles = await run()
  await stop()
  const counted = fifoViolations(events)
  // every cycle of the run was granted while MONITOR listened: fewer grants mean the classifier
  // no longer reads this contender's commands (its scripts changed), not that FIFO held
  if (counted.grants < 0.9 * cycles) {
    throw new Error(
      `FIFO count for ${contender.label}: MONITOR showed ${counted.grants} grants for ${cycles} cycles; ` +
        `its classify no longer matches the commands the contender sends`
    )
  }
  return { cycles, grantToRelease: median(holds), ...counted }
}

/** A child holds all K permits; this process queues one waiter; the child is killed. */
const killedHolder = async (index: number, url: string, port: number) => {
  const setup: Setup = { port, url, name: fresh("kill"), permits: PERMITS, ttlMillis: KILL_TTL_MILLIS }
  const holder = await spawnChild({ contender: index, setup, mode: "hold" }, "HOLDING")
  const opened = await contenders[index].open(setup)
  try {
    let grantedAt = Number.NaN
    const waiter = opened.acquire().then((release) => {
      grantedAt = now()
      return release()
    })
    await sleep(500)
    if (!Number.isNaN(grantedAt)) throw new Error(`${contenders[index].label}: the waiter was granted before the kill`)
    const killedAt = now()
    holder.kill()
    await waiter
    return grantedAt - killedAt
  } finally {
    holder.kill()
    await opened.close()
  }
}

// -----------------------------------------------------------------------------
// the run
// -----------------------------------------------------------------------------

function fmt(x: number, digits = 0): string {
  return Number.isFinite(x)
    ? x.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "–"
}

const loadLine = () => os.loadavg().map((l) => l.toFixed(2)).join(", ")

const parent = async () => {
  const loadBefore = loadLine()
  const server = await startRedisServer()
  try {
    const { port, url } = server
    console.log(`redis-server on port ${port}; load average ${loadBefore}`)
    const admin = new Redis({ host: "127.0.0.1", port })
    const adminAddress = /(?:^| )addr=(\S+)/.exec(String(await admin.client("INFO")))?.[1] ?? ""
    const setupOf = (what: string, permits: number): Setup => ({
      port,
      url,
      name: fresh(what),
      permits,
      ttlMillis: TTL_MILLIS
    })

    // 1. throughput, one process
    const contended = await Promise.all(contenders.map((c) => c.open(setupOf("contended", PERMITS))))
    const free = await Promise.all(contenders.map((c) => c.open(setupOf("free", UNCONTENDED_PERMITS))))
    for (const o of [...contended, ...free]) await o.cycles(WARMUP_MILLIS, IN_FLIGHT)
    const oneProcess: Array<Array<number>> = contenders.map(() => [])
    const costs: Array<Array<Costs>> = contenders.map(() => [])
    const freeCosts: Array<Array<Costs>> = contenders.map(() => [])
    const uncontended: Array<Array<number>> = contenders.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const i of contenders.keys()) {
        const measured = await measuredCycles(contended[i], admin)
        oneProcess[i].push(measured.perSecond)
        costs[i].push(measured.costs)
        const bare = await measuredCycles(free[i], admin)
        uncontended[i].push(bare.perSecond)
        freeCosts[i].push(bare.costs)
      }
      console.log(
        `round ${round + 1}/${ROUNDS}, one process: K = ${PERMITS}: ${
          oneProcess.map((r) => fmt(r[round])).join(", ")
        }; K = ${UNCONTENDED_PERMITS}: ${uncontended.map((r) => fmt(r[round])).join(", ")} cycles/s`
      )
    }

    // 2. round trips, uncontended
    const trips: Array<RoundTrips> = []
    // a lease far longer than the count, so that no renewal falls among the commands counted
    for (const c of contenders) {
      const opened = await c.open({ ...setupOf("trips", UNCONTENDED_PERMITS), ttlMillis: ROUND_TRIP_TTL_MILLIS })
      trips.push(await roundTrips(opened, port, admin, adminAddress))
      await opened.close()
    }

    // 3a. FIFO in one process
    const fifoOne: Array<Fifo> = []
    for (const [i, c] of contenders.entries()) {
      const setup = setupOf("fifo1", PERMITS)
      const opened = await c.open(setup)
      await opened.cycles(300, IN_FLIGHT)
      fifoOne.push(await fifo(c, setup, port, adminAddress, () => opened.cycles(FIFO_MILLIS, IN_FLIGHT)))
      await opened.close()
      console.log(`FIFO, one process: ${contenders[i].label}: ${fifoOne[i].violations} of ${fifoOne[i].grants}`)
    }
    for (const o of [...contended, ...free]) await o.close()

    // 1b + 3b. four processes: throughput rounds, then the FIFO run
    const fleets = []
    const fleetSetups: Array<Setup> = []
    for (const i of contenders.keys()) {
      const setup = setupOf("fleet", PERMITS)
      fleetSetups.push(setup)
      fleets.push(await fleet(i, setup))
    }
    // a warm-up under the measured load: every process of the fleet on the shared name at once
    for (const f of fleets) await f.run(FLEET_WARMUP_MILLIS)
    const fourProcesses: Array<Array<number>> = contenders.map(() => [])
    const fleetCosts: Array<Array<Costs>> = contenders.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, f] of fleets.entries()) {
        const before = await snapshot(admin)
        const { cpuMicros, cycles } = await f.run(ROUND_MILLIS)
        fleetCosts[i].push(costsOf(before, await snapshot(admin), cycles, cpuMicros))
        fourProcesses[i].push(cycles / (ROUND_MILLIS / 1000))
      }
      console.log(
        `round ${round + 1}/${ROUNDS}, ${PROCESSES} processes: ${
          fourProcesses.map((r) => fmt(r[round])).join(", ")
        } cycles/s`
      )
    }
    const spreads: Array<Spread | undefined> = []
    for (const [i, f] of fleets.entries()) {
      spreads.push(await spread(contenders[i], fleetSetups[i], admin, () => f.run(FIFO_MILLIS)))
      const s = spreads[i]
      if (s !== undefined) {
        console.log(
          `holders, ${PROCESSES} processes: ${contenders[i].label}: ${fmt(s.meanProcesses, 2)} processes at once, ` +
            `one alone ${fmt(100 * s.onlyOne)} % of ${fmt(s.samples)} samples`
        )
      }
    }
    const fifoFleet: Array<Fifo> = []
    for (const [i, f] of fleets.entries()) {
      fifoFleet.push(
        await fifo(contenders[i], fleetSetups[i], port, adminAddress, () => f.run(FIFO_MILLIS).then((r) => r.cycles))
      )
      console.log(
        `FIFO, ${PROCESSES} processes: ${contenders[i].label}: ${fifoFleet[i].violations} of ${fifoFleet[i].grants}`
      )
    }
    for (const f of fleets) f.close()

    // 4. a killed holder
    const comeBack: Array<number> = []
    for (const i of contenders.keys()) {
      comeBack.push(await killedHolder(i, url, port))
      console.log(`killed holder: ${contenders[i].label}: permits back after ${fmt(comeBack[i])} ms`)
    }
    // 5. lanes: interleaved rounds, contended and not, one process
    const laneContended = await Promise.all(laneVariants.map((v) => openLaneVariant(setupOf("lanes8", PERMITS), v)))
    const laneFree = await Promise.all(
      laneVariants.map((v) => openLaneVariant(setupOf("lanes64", UNCONTENDED_PERMITS), v))
    )
    for (const o of [...laneContended, ...laneFree]) await o.cycles(WARMUP_MILLIS, IN_FLIGHT)
    const laneRuns = laneVariants.map(() => ({
      contended: [] as Array<number>,
      contendedCosts: [] as Array<Costs>,
      free: [] as Array<number>,
      freeCosts: [] as Array<Costs>
    }))
    for (let round = 0; round < ROUNDS; round++) {
      for (const i of laneVariants.keys()) {
        const busy = await measuredCycles(laneContended[i], admin)
        laneRuns[i].contended.push(busy.perSecond)
        laneRuns[i].contendedCosts.push(busy.costs)
        const bare = await measuredCycles(laneFree[i], admin)
        laneRuns[i].free.push(bare.perSecond)
        laneRuns[i].freeCosts.push(bare.costs)
      }
      console.log(
        `round ${round + 1}/${ROUNDS}, lanes (${laneVariants.map((v) => v.label).join(", ")}): K = ${PERMITS}: ${
          laneRuns.map((r) => fmt(r.contended[round])).join(", ")
        }; K = ${UNCONTENDED_PERMITS}: ${laneRuns.map((r) => fmt(r.free[round])).join(", ")} cycles/s`
      )
    }
    for (const o of [...laneContended, ...laneFree]) await o.close()
    admin.disconnect()
    const loadAfter = loadLine()

    // the report
    const one = oneProcess.map(median)
    const four = fourProcesses.map(median)
    const bare = uncontended.map(median)
    const rs = contenders.indexOf(redisSemaphore)
    const throughputHeader = [
      "contender",
      "config",
      `1 process, K = ${PERMITS}: cycles/s`,
      "vs redis-semaphore",
      `${PROCESSES} processes × ${IN_FLIGHT / PROCESSES}, K = ${PERMITS}: cycles/s`,
      "vs redis-semaphore",
      `1 process, K = ${UNCONTENDED_PERMITS} (nobody waits): cycles/s`,
      "vs redis-semaphore"
    ]
    const throughputRows = contenders.map((c, i) => [
      c.label,
      c.config,
      fmt(one[i]),
      formatRatio(one[i] / one[rs]),
      fmt(four[i]),
      formatRatio(four[i] / four[rs]),
      fmt(bare[i]),
      formatRatio(bare[i] / bare[rs])
    ])
    const costHeader = [
      "contender",
      "cycles",
      "Redis commands / cycle",
      "of them writes",
      "scripts / cycle",
      "µs in Redis / script",
      "grant messages / cycle",
      "Redis CPU µs / cycle",
      "client CPU µs / cycle"
    ]
    const runs = [
      { label: `1 process, K = ${PERMITS}`, of: costs },
      { label: `${PROCESSES} processes, K = ${PERMITS}`, of: fleetCosts },
      { label: `1 process, K = ${UNCONTENDED_PERMITS}`, of: freeCosts }
    ]
    const costRows = runs.flatMap((run) =>
      contenders.map((c, i) => {
        const cost = (pick: (c: Costs) => number) => median(run.of[i].map(pick))
        return [
          c.label,
          run.label,
          fmt(cost((x) => x.commandsPerCycle), 1),
          fmt(cost((x) => x.writesPerCycle), 1),
          fmt(cost((x) => x.scriptsPerCycle), 2),
          fmt(cost((x) => x.microsPerScript), 1),
          fmt(cost((x) => x.messagesPerCycle), 2),
          fmt(cost((x) => x.redisCpuMicros), 1),
          fmt(cost((x) => x.clientCpuMicros), 1)
        ]
      })
    )
    const spreadOf = (s: Spread | undefined) =>
      s === undefined ? "–" : `${fmt(s.meanProcesses, 2)} (${fmt(100 * s.onlyOne)} %)`
    const share = (f: Fifo) => `${fmt(f.violations)} of ${fmt(f.grants)} (${fmt((100 * f.violations) / f.grants, 1)} %)`
    const behaviourHeader = [
      "contender",
      "round trips / uncontended acquire",
      "commands sent per acquire",
      "connections opened / acquire",
      "round trips / release",
      "commands sent per release",
      `FIFO violations, 1 process (grants)`,
      `FIFO violations, ${PROCESSES} processes (grants)`,
      `grant → release, median ms: 1 process / ${PROCESSES} processes`,
      `${PROCESSES} processes: processes holding permits at once, mean (one alone)`,
      `killed holder's permits back after (TTL ${fmt(KILL_TTL_MILLIS)} ms)`
    ]
    const behaviourRows = contenders.map((c, i) => [
      c.label,
      fmt(trips[i].perAcquire, 2),
      trips[i].acquireCommands,
      fmt(trips[i].connectionsPerAcquire, 2),
      fmt(trips[i].perRelease, 2),
      trips[i].releaseCommands,
      share(fifoOne[i]),
      share(fifoFleet[i]),
      `${fmt(fifoOne[i].grantToRelease, 2)} / ${fmt(fifoFleet[i].grantToRelease, 2)}`,
      spreadOf(spreads[i]),
      `${fmt(comeBack[i])} ms`
    ])
    console.log()
    console.log(textTable(throughputHeader, throughputRows))
    console.log()
    console.log(textTable(costHeader, costRows))
    console.log()
    console.log(textTable(behaviourHeader, behaviourRows))

    const own = contenders.indexOf(sluice)
    const verdict = (ok: boolean) => (ok ? "met" : "**missed**")
    const targets = [
      `- one round trip per uncontended acquire: ${fmt(trips[own].perAcquire, 2)} — ${
        verdict(Math.abs(trips[own].perAcquire - 1) < 0.01)
      }; per release: ${fmt(trips[own].perRelease, 2)} — ${verdict(Math.abs(trips[own].perRelease - 1) < 0.01)}`,
      `- no FIFO violation under contention: ${fmt(fifoOne[own].violations)} in one process, ${
        fmt(fifoFleet[own].violations)
      } across ${PROCESSES} — ${verdict(fifoOne[own].violations === 0 && fifoFleet[own].violations === 0)}`,
      `- a killed holder's permits back within the lease TTL (+ 1 s): ${fmt(comeBack[own])} ms — ${
        verdict(comeBack[own] <= KILL_TTL_MILLIS + 1000)
      }`,
      `- throughput ≥ 1.0x redis-semaphore's: ${formatRatio(one[own] / one[rs])} in one process, ${
        formatRatio(four[own] / four[rs])
      } across ${PROCESSES} processes (K = ${PERMITS}); ${formatRatio(bare[own] / bare[rs])} when nobody waits — ${
        verdict(one[own] >= one[rs] && four[own] >= four[rs])
      }`
    ]
    const freeCost = (i: number, pick: (c: Costs) => number) => median(freeCosts[i].map(pick))
    const contendedCost = (i: number, pick: (c: Costs) => number) => median(costs[i].map(pick))
    const fleetCost = (i: number, pick: (c: Costs) => number) => median(fleetCosts[i].map(pick))
    /** Cores kept busy: cycles per second × (Redis + client) CPU per cycle. */
    const cores = (perSecond: number, cost: (pick: (c: Costs) => number) => number) =>
      fmt((perSecond * (cost((x) => x.redisCpuMicros) + cost((x) => x.clientCpuMicros))) / 1e6, 2)
    const why: Array<string> = []
    if (one[own] < one[rs] || bare[own] < bare[rs]) {
      why.push(
        `- In one process: Redis CPU per cycle, sluice ${fmt(contendedCost(own, (x) => x.redisCpuMicros))} µs, ` +
          `redis-semaphore ${fmt(contendedCost(rs, (x) => x.redisCpuMicros))} at K = ${PERMITS}, ${
            fmt(freeCost(own, (x) => x.redisCpuMicros))
          } and ${fmt(freeCost(rs, (x) => x.redisCpuMicros))} when nobody waits; client CPU per cycle ${
            fmt(contendedCost(own, (x) => x.clientCpuMicros))
          } and ${fmt(contendedCost(rs, (x) => x.clientCpuMicros))}, ${
            fmt(freeCost(own, (x) => x.clientCpuMicros))
          } and ${
            fmt(freeCost(rs, (x) => x.clientCpuMicros))
          }; cores busy at K = ${PERMITS} (cycles per second × CPU per cycle): ${
            cores(one[own], (pick) => contendedCost(own, pick))
          } and ${cores(one[rs], (pick) => contendedCost(rs, pick))}, of 2.`
      )
    }
    if (four[own] < four[rs]) {
      const messages = fleetCost(own, (x) => x.messagesPerCycle)
      const perCycle = (i: number, of: (i: number, pick: (c: Costs) => number) => number) =>
        of(i, (x) => x.redisCpuMicros) + of(i, (x) => x.clientCpuMicros)
      const cpuRatio = formatRatio(perCycle(rs, fleetCost) / perCycle(own, fleetCost))
      // CPU per cycle explains the throughputs when its ratio is about theirs (within a tenth)
      const cpuBound = perCycle(rs, fleetCost) / perCycle(own, fleetCost) < (four[own] / four[rs]) * 1.1
      why.push(
        `- Strict FIFO makes a convoy when the calls take no time. A process's waiters are granted together, ` +
          `release together and queue again together (one script per event-loop turn), so the queue holds runs of ` +
          `one process's tickets and the K permits move from run to run as a group${
            spreads[own] === undefined || spreads[rs] === undefined ?
              "" :
              `: one process held every permit held in ${fmt(100 * spreads[own].onlyOne)} % of the samples (${
                fmt(spreads[own].meanProcesses, 2)
              } processes holding at once on average), against ${fmt(spreads[rs].meanProcesses, 2)} for redis-semaphore`
          }, whose processes each take back the permits they release (${
            fmt((100 * fifoFleet[rs].violations) / Math.max(1, fifoFleet[rs].grants), 1)
          } % of its grants out of arrival order across ${PROCESSES}, above). The process holding the permits works ` +
          `down its run by hand-overs, without Redis; its last releases go to Redis, which grants the next run, ` +
          `another process's, by one message (${fmt(messages, 2)} grant messages per cycle, a switch every ${
            fmt(1 / messages)
          } cycles). The fleet thus goes at the pace of one process at a time.`,
        `- Cores busy (cycles per second × CPU per cycle, Redis included): ${
          cores(four[own], (pick) => fleetCost(own, pick))
        } for sluice, ${cores(four[rs], (pick) => fleetCost(rs, pick))} for redis-semaphore, of the machine's 2, ` +
          `shared by ${PROCESSES} processes and Redis. A cycle costs more CPU across processes than in one: ` +
          `sluice's processes together ${fmt(fleetCost(own, (x) => x.clientCpuMicros))} µs against ${
            fmt(contendedCost(own, (x) => x.clientCpuMicros))
          }, redis-semaphore's ${fmt(fleetCost(rs, (x) => x.clientCpuMicros))} against ${
            fmt(contendedCost(rs, (x) => x.clientCpuMicros))
          }; with Redis, ${fmt(perCycle(own, fleetCost))} µs a cycle for sluice and ${
            fmt(perCycle(rs, fleetCost))
          } for redis-semaphore, a ratio of ${cpuRatio} against the throughputs' ${
            formatRatio(four[own] / four[rs])
          }: ${
            cpuBound
              ? "the CPU a cycle costs accounts for the gap."
              : "the cores sluice leaves idle while one process at a time holds the permits account for most of the gap."
          }`
      )
    }
    if (why.length > 0) why.unshift("", "Where sluice is behind redis-semaphore, and why (figures of this run):", "")
    console.log()
    console.log([...targets, ...why].join("\n").replace(/\*\*/g, ""))

    const laneHeader = [
      "sluice",
      "config",
      "K",
      "cycles/s",
      "vs no lanes",
      "scripts / cycle",
      "Redis commands / cycle",
      "µs in Redis / script",
      "Redis CPU µs / cycle",
      "client CPU µs / cycle"
    ]
    const laneRows = (["contended", "free"] as const).flatMap((run) =>
      laneVariants.map((v, i) => {
        const costsOfRun = run === "contended" ? laneRuns[i].contendedCosts : laneRuns[i].freeCosts
        const cost = (pick: (c: Costs) => number) => median(costsOfRun.map(pick))
        const rate = median(laneRuns[i][run])
        return [
          v.label,
          v.config,
          run === "contended" ? `${PERMITS} (56 of 64 wait)` : `${UNCONTENDED_PERMITS} (nobody waits)`,
          fmt(rate),
          formatRatio(rate / median(laneRuns[0][run])),
          fmt(cost((x) => x.scriptsPerCycle), 2),
          fmt(cost((x) => x.commandsPerCycle), 1),
          fmt(cost((x) => x.microsPerScript), 1),
          fmt(cost((x) => x.redisCpuMicros), 1),
          fmt(cost((x) => x.clientCpuMicros), 1)
        ]
      })
    )
    const rounds = (xs: ReadonlyArray<ReadonlyArray<number>>) =>
      contenders.map((c, i) => `${c.label} ${xs[i].map((x) => fmt(x)).join(" / ")}`).join("; ")
    const latest = [
      `${machineLine()}, ${new Date().toISOString().slice(11, 16)} UTC. Load average (1, 5, 15 min) ${loadBefore} ` +
      `before the run, ${loadAfter} after: the machine's 2 cores were shared with other work during the run, ` +
      `so the figures are noisy; the ratios, from interleaved rounds, are the part to trust.`,
      "",
      markdownTable(throughputHeader, throughputRows),
      "",
      `Per cycle, median round (client CPU: the processes running the cycles, the ${PROCESSES} of a fleet together):`,
      "",
      markdownTable(costHeader, costRows),
      "",
      markdownTable(behaviourHeader, behaviourRows),
      "",
      `Lanes, one process, ${IN_FLIGHT} in flight (median round; a lane policy turns hand-overs off, so every ` +
      `release is a script):`,
      "",
      markdownTable(laneHeader, laneRows),
      "",
      `Rounds (cycles/s): 1 process, K = ${PERMITS}: ${rounds(oneProcess)}. ${PROCESSES} processes: ${
        rounds(fourProcesses)
      }. K = ${UNCONTENDED_PERMITS}: ${rounds(uncontended)}.`,
      "",
      "Targets for sluice:",
      "",
      ...targets,
      ...why
    ].join("\n")

    const previous = extractLatest(readSection(TITLE))
    writeSection(
      TITLE,
      [
        method,
        "",
        "### Latest run",
        "",
        latest,
        ...(previous === undefined ? [] : ["", "### Previous run", "", previous])
      ].join("\n")
    )
  } finally {
    await server.stop()
  }
}

const TITLE = "Redis bulkhead"

/** The "Latest run" block of the section as it was: the next run shows it as the previous one. */
const extractLatest = (section: string | undefined): string | undefined => {
  if (section === undefined) return undefined
  const start = section.indexOf("### Latest run\n")
  if (start === -1) return undefined
  const end = section.indexOf("\n### ", start + 1)
  return section.slice(start + "### Latest run\n".length, end === -1 ? undefined : end).trim()
}

const method = [
  `\`pnpm bench redis-bulkhead\`: a redis-server of the suite's own on loopback; sluice's RedisBulkhead, ` +
  `redis-semaphore's Semaphore (ioredis client) and effect-distributed-lock's DistributedSemaphore (its RedisBacking, ` +
  `push-based waiting on, the default) on the same server, same K, same load, same lease TTL ` +
  `(${fmt(TTL_MILLIS / 1000)} s), each peer with its other defaults. A cycle is an acquire and a release with ` +
  `nothing done in between.`,
  "",
  `- Throughput: ${IN_FLIGHT} cycles in flight, K = ${PERMITS}: in one process, and in ${PROCESSES} child ` +
  `processes × ${IN_FLIGHT / PROCESSES} sharing one name (the fleet carries the same ${IN_FLIGHT}). K = ${PERMITS} ` +
  `is the issue's case (a provider whose concurrency limit is 8): ${IN_FLIGHT - PERMITS} of the ${IN_FLIGHT} wait ` +
  `at any time, so a cycle is mostly the hand-over of a released permit to a waiter, the path that FIFO and the ` +
  `wake-ups are about. K = ${UNCONTENDED_PERMITS} (nobody waits) shows the bare cost of a cycle. ${ROUNDS} ` +
  `interleaved rounds of ${ROUND_MILLIS / 1000} s after a warm-up under the same load (${WARMUP_MILLIS / 1000} s; a ` +
  `fleet: each process ${WARMUP_MILLIS / 2000} s alone on a name of its own, then ${FLEET_WARMUP_MILLIS / 1000} s ` +
  `with the other ${PROCESSES - 1} on the shared name, as each runs a quarter of the load); median round. ` +
  `Per cycle, in each run: commands Redis executed (INFO stats, the calls inside scripts included) and the ` +
  `writes among them (INFO commandstats), scripts run and the time Redis spent in each (INFO commandstats, ` +
  `EVAL + EVALSHA), pub/sub messages sent (SPUBLISH + PUBLISH: sluice's grants to another process), Redis' CPU ` +
  `(INFO cpu) and the CPU of the processes running the cycles (the bench process, or the fleet's ` +
  `${PROCESSES} together).`,
  `- Round trips: ${ROUND_TRIP_CALLS} acquires one at a time with every permit free, then ${ROUND_TRIP_CALLS} ` +
  `releases one at a time; the commands the clients sent, counted with MONITOR (the commands a script runs inside ` +
  `Redis and the bench's own INFO excluded), and the connections Redis accepted meanwhile (INFO stats).`,
  `- FIFO: a ${FIFO_MILLIS / 1000} s contended run (${IN_FLIGHT} in flight, K = ${PERMITS}) in one process and ` +
  `across the ${PROCESSES}, with MONITOR on: arrivals (sluice: a ticket added to the queue, or granted at once; the peers: ` +
  `a holder's first acquire attempt) and grants (the ZADD of the holder into the held set, by whichever script ` +
  `makes it) in the server's execution order. A violation is a grant made while an older arrival still waited. ` +
  `From the same log, the median time from a grant to the holder's release (MONITOR's timestamps): the time a ` +
  `grant takes to reach its holder and the release to come back, MONITOR's own load included.`,
  `- Holders: during a ${FIFO_MILLIS / 1000} s contended run of each fleet (no MONITOR), the bench reads the held ` +
  `set about once a millisecond and counts the processes among the holders (sluice's members carry their ` +
  `process's mark; redis-semaphore's identifiers get a suffix naming the process, its only change of ` +
  `configuration; effect-distributed-lock's do not say): the mean over the samples with a permit held, and the ` +
  `share of those in which one process held every permit held.`,
  `- Lanes: sluice alone in the bench process, with no lanes and under each policy (its ${IN_FLIGHT} fibers ` +
  `alternating between two lanes), K = ${PERMITS} and K = ${UNCONTENDED_PERMITS}, ${ROUNDS} interleaved rounds of ` +
  `${ROUND_MILLIS / 1000} s after a warm-up, the costs per cycle counted as above.`,
  `- Killed holder: a child process takes all ${PERMITS} permits (lease TTL ${fmt(KILL_TTL_MILLIS)} ms), a ` +
  `waiter queues in the bench process, the child is killed with SIGKILL 0.5 s later: the time from the kill to ` +
  `the waiter's grant. A lease is renewed every third of its TTL (redis-semaphore: every 0.8), so a dead holder's ` +
  `permits come back between TTL minus the renewal period and TTL after the kill, plus the waiter's wake-up.`
].join("\n")

const childArg = process.argv.find((arg) => arg.startsWith("--child="))
const main = childArg === undefined ? parent() : child(JSON.parse(childArg.slice("--child=".length)) as ChildArgs)
main.then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
