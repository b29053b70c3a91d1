/**
 * The pieces of the fault schedules (test/faultSchedule*.test.ts): a seeded generator, the grant
 * log read from MONITOR, and a fleet of processes (K = 3, TTL 1.5 s, `fail-closed`) calling a
 * server that counts the requests in flight, with the rounds every schedule has (a process killed,
 * a process stopped past its TTL) and the checks made after each round and at the end.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import type { Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as readline from "node:readline"
import type { WorkerOptions } from "../fixtures/worker.js"
import { type Child, worker } from "./child.js"
import { countingServerExcusing } from "./countingServer.js"

export const K = 3
export const TTL = 1500
export const PROCESSES = 3
/**
 * What the 1 s bound after Redis answers allows on top for this test process itself: it shares the
 * machine's cores with the fleet and Redis, and at a load average of 15 it was seen stalled 0.8 s
 * (the rounds measure 5–150 ms as a rule; the figures are in docs/semantics.md).
 */
export const STARVED = 1000

/** A small seeded generator (mulberry32): the same seed, the same schedule. */
export const generator = (seed: number) => {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The seed of a run: FAULT_SEED, or a random one (printed on failure). */
export const seedOf = () => Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31))

/**
 * Each first grant of a member (a ZADD of 4 arguments to the held set, run by a script), by Redis
 * lifetime, from `redis-cli MONITOR` (one per lifetime) on every node in `ports` that may run the
 * scripts (a shard's master and replica: a coordinated failover keeps the state, so one lifetime),
 * in the order of the nodes' clocks (one machine).
 */
export const grantLog = (ports: ReadonlyArray<number>, heldKey: string, queueKey: string, laneKeys?: string) => {
  const lifetimes: Array<Array<{ readonly at: number; readonly member: string }>> = []
  const seen = new Set<string>()
  // under lanes: each queued member's lane, from its ZADD to `<laneKeys>:<lane>`
  const laneOf = new Map<string, string>()
  let monitors: Array<ChildProcess> = []
  const attach = Effect.sync(() => {
    const grants: Array<{ readonly at: number; readonly member: string }> = []
    lifetimes.push(grants)
    monitors = ports.map((port) => {
      const monitor = spawn("redis-cli", ["-p", String(port), "monitor"], { stdio: ["ignore", "pipe", "ignore"] })
      readline.createInterface({ input: monitor.stdout! }).on("line", (line) => {
        // 1796203168.676313 [0 lua] "ZADD" "<key>" "<score>" "<member>"
        if (!line.includes(" [0 lua] ")) return
        const args = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1])
        if (args[0]?.toLowerCase() !== "zadd" || args.length !== 4) return
        const member = args[3]
        if (laneKeys !== undefined && args[1].startsWith(`${laneKeys}:`)) laneOf.set(member, args[1])
        // a member queued or held before (a claim of a running call, one of an earlier lifetime) is no grant
        if (seen.has(member) || member.startsWith("c:")) return
        if (args[1] === heldKey) grants.push({ at: Number(line.split(" ")[0]), member })
        if (args[1] === heldKey || args[1] === queueKey) seen.add(member)
      })
      return monitor
    })
  })
  const detach = Effect.sync(() => monitors.forEach((monitor) => monitor.kill("SIGKILL")))
  /**
   * The tickets granted in each lifetime, in the order Redis ran the grants: under lanes, one list
   * per lane and lifetime (a member granted without queueing is in none: nothing waited then).
   */
  const tickets = () =>
    lifetimes.flatMap((grants) => {
      const sorted = [...grants].sort((a, b) => a.at - b.at)
      if (laneKeys === undefined) return [sorted.map(({ member }) => Number.parseInt(member, 10))]
      const byLane = new Map<string, Array<number>>()
      for (const { member } of sorted) {
        const lane = laneOf.get(member)
        if (lane !== undefined) byLane.set(lane, [...(byLane.get(lane) ?? []), Number.parseInt(member, 10)])
      }
      return [...byLane.values()]
    })
  return { attach, detach, tickets }
}

/**
 * PROCESSES fleet workers on `connection` sharing K permits under `name`, at work calling a
 * counting server (calls of 60 ms: K of them overlap within a few calls once K permits are free,
 * even on a loaded machine); a call's path carries when it started, and the calls a process started
 * before it was stopped are excused once it runs again (the allowance of docs/semantics.md).
 */
export const startFleet = (
  seed: number,
  name: string,
  connection: Pick<WorkerOptions, "url" | "cluster">,
  lanes?: WorkerOptions["lanes"]
) =>
  Effect.gen(function*() {
    const say = (what: string) => `seed ${seed}: ${what}`
    // per process: when it was stopped and continued (this machine's clock, as the calls' paths)
    const stops = new Map<string, { readonly at: number; continued: number }>()
    const excuse = (path: string) => {
      const [, label, started] = path.split("/")
      const stop = stops.get(label)
      return stop !== undefined && Number(started) < stop.at && Date.now() >= stop.continued
    }
    const server = yield* countingServerExcusing(excuse, 60)
    const spawnOne = (i: number): Effect.Effect<Child, never, Scope.Scope> =>
      Effect.gen(function*() {
        const child = yield* worker({
          ...connection,
          name,
          permits: K,
          leaseTtlMillis: TTL,
          mode: "fleet",
          label: `p${i}`,
          port: server.port,
          concurrency: 2,
          ...(lanes === undefined ? {} : { lanes })
        })
        yield* child.lineMatching((l) => l === "ready", "ready")
        yield* child.send("go")
        return child
      })
    const children = yield* Effect.forEach(Array.from({ length: PROCESSES }, (_, i) => i), spawnOne)
    /** How long after `since` K requests that started after the last mark are in flight at once; fails after `bound` + 3 s. */
    const fullAgain = (since: number, bound: number, what: string) =>
      Effect.gen(function*() {
        while (server.fresh.peak < K) {
          if (Date.now() - since > bound + 3000) {
            return assert.fail(say(`${what}: K in flight again not within ${bound + 3000} ms`))
          }
          yield* Effect.sleep(5)
        }
        return Date.now() - since
      })
    server.mark()
    yield* fullAgain(Date.now(), 5000, "the fleet at work")

    /** A process killed (SIGKILL) and started again: K back within TTL + 1 s of the kill. */
    const kill = (victim: number, at: string) =>
      Effect.gen(function*() {
        children[victim].proc.kill("SIGKILL")
        const killedAt = Date.now()
        server.mark()
        const bound = TTL + 1000
        const recovery = yield* fullAgain(killedAt, bound, `${at}: after the kill`)
        children[victim] = yield* spawnOne(victim)
        return { recovery, bound }
      })

    /** A process stopped (SIGSTOP) for 2.5 × TTL, then continued: K back within TTL + 1 s of the stop. */
    const stop = (victim: number, at: string) =>
      Effect.gen(function*() {
        children[victim].proc.kill("SIGSTOP")
        const stopped = { at: Date.now(), continued: Infinity }
        server.mark()
        stops.set(`p${victim}`, stopped)
        const bound = TTL + 1000
        const recovery = yield* fullAgain(stopped.at, bound, `${at}: after the stop`)
        yield* Effect.sleep(Math.max(0, 2.5 * TTL - (Date.now() - stopped.at)))
        stopped.continued = Date.now()
        children[victim].proc.kill("SIGCONT")
        // it wakes holding grants whose leases ended: whatever it starts now counts
        yield* Effect.sleep(TTL)
        return { recovery, bound }
      })

    /** The checks after a round: K back within the bound, never more than K in flight. */
    const check = (at: string, what: string, recovery: number, bound: number) => {
      assert.isAtMost(
        recovery,
        bound,
        say(`${at}: K in flight again ${recovery} ms after the fault (bound ${bound} ms)`)
      )
      const roundPeak = server.counts.peak
      assert.isAtMost(roundPeak, K, say(`${at}: ${roundPeak} requests in flight, K = ${K}`))
      console.log(say(`${at}: ${what}, K in flight again after ${recovery} ms, peak ${roundPeak}`))
    }

    /** Stops the fleet and checks the grants of each Redis lifetime (of each lane, under lanes) came in ticket order. */
    const finish = (log: ReturnType<typeof grantLog>) =>
      Effect.gen(function*() {
        for (const child of children) yield* child.send("stop")
        yield* Effect.forEach(children, (c) => c.lineMatching((l) => l.startsWith("counts "), "its counts"))
        yield* Effect.sleep(200)
        for (const [i, tickets] of log.tickets().entries()) {
          const outOfOrder = tickets.findIndex((t, j) => j > 0 && t < tickets[j - 1])
          assert.strictEqual(
            outOfOrder,
            -1,
            say(`Redis lifetime ${i}: grants out of ticket order: ${tickets.join(" ")}`)
          )
        }
        return log.tickets().reduce((n, tickets) => n + tickets.length, 0)
      })

    return { server, say, fullAgain, kill, stop, check, finish }
  })
