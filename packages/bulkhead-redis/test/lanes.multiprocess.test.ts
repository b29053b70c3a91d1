/**
 * Lanes across three Node processes sharing K permits through Redis. Shares are read from the
 * fleet's own counters (`stats.lanes`); the priority rules from the grant log (MONITOR shows every
 * script's commands in the order the server ran them): every ticket granted from the queue was the
 * earliest due one waiting, ties to the higher lane, so an interactive call waits for no batch call
 * queued before it, and a batch call once due for no interactive call due after it. Waits measured
 * on the processes' clocks are reported, not asserted.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { laneKeysOf } from "@sluice/core/FleetScripts"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import type { LaneWorkerOptions } from "./fixtures/laneWorker.js"
import { type Child, laneWorker } from "./utils/child.js"
import { bulkheadOn, eventually, uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")

const ready = (children: ReadonlyArray<Child>) =>
  Effect.forEach(children, (c) => c.lineMatching((l) => l === "ready", "ready"), { discard: true })

const sendAll = (children: ReadonlyArray<Child>, line: string) =>
  Effect.forEach(children, (c) => c.send(line), { discard: true })

/** Grants per lane, fleet-wide, from the counters. */
const grantsOf = (
  stats: { readonly lanes?: ReadonlyArray<{ readonly name: string; readonly granted: number }> | undefined }
) => new Map((stats.lanes ?? []).map((l) => [l.name, l.granted]))

/**
 * The grant log of a lane bulkhead: each waiting ticket's record (`HSET tickets <member> "<due> <lane>"`),
 * its leaving the queue (`HDEL`), and grants (`ZADD held <deadline> <member>`). Checks at every grant of
 * a queued ticket that it was, when it left the queue, the earliest due of those waiting (ties to the
 * lower rank); counts the grants checked and the ones that were not so.
 */
const grantLog = (name: string, rank: (lane: string) => number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const { keys } = laneKeysOf("sluice:bh:", name)
      const [heldKey, ticketsKey] = [keys[4], keys[6]]
      const waiting = new Map<string, { readonly due: number; readonly lane: string }>()
      const first = new Map<string, boolean>()
      const result = { checked: 0, overtaken: [] as Array<string> }
      const base = new Redis(url)
      const monitor = await base.monitor()
      monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
        if (source !== "lua") return
        const command = args[0]?.toLowerCase()
        if (command === "hset" && args[1] === ticketsKey && args.length === 4) {
          const record = args[3]
          const space = record.indexOf(" ")
          waiting.set(args[2], { due: Number(record.slice(0, space)), lane: record.slice(space + 1) })
        } else if (command === "hdel" && args[1] === ticketsKey) {
          const me = waiting.get(args[2])
          if (me === undefined) return
          waiting.delete(args[2])
          const ahead = [...waiting.values()].find((w) =>
            w.due < me.due || (w.due === me.due && rank(w.lane) < rank(me.lane))
          )
          first.set(args[2], ahead === undefined)
        } else if (command === "zadd" && args[1] === heldKey && args.length === 4) {
          const wasFirst = first.get(args[3])
          if (wasFirst === undefined) return
          first.delete(args[3])
          result.checked++
          if (!wasFirst) result.overtaken.push(args[3])
        }
      })
      return { base, monitor, result }
    }),
    ({ base, monitor }) =>
      Effect.promise(async () => {
        monitor.disconnect()
        await base.quit()
      })
  )

describe.sequential("lanes across three processes", () => {
  it.scopedLive(
    "fair share 3:1: shares within 5 % over 10,000 grants, an idle lane's share goes to the others, then shared again",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("fair-fleet")
        const fairShare = { weights: { a: 3 } }
        const options: LaneWorkerOptions = { url, name, permits: 4, holdMillis: 0, fairShare }
        const children = yield* Effect.forEach([0, 1, 2], () => laneWorker(options))
        yield* ready(children)
        const observer = yield* bulkheadOn(url, { name, permits: 4, lanes: BulkheadLanes.fairShare(fairShare) })
        const busy = (lanes: ReadonlyArray<string>) =>
          eventually(
            Effect.map(
              observer.stats,
              (s) => lanes.every((lane) => (s.lanes ?? []).some((l) => l.name === lane && l.waiting > 0))
            ),
            `${lanes.join(", ")} queued`
          )
        const phase = (lanes: ReadonlyArray<string>, grants: number) =>
          Effect.gen(function*() {
            yield* busy(lanes)
            const before = grantsOf(yield* observer.stats)
            const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
            yield* eventually(
              Effect.map(observer.stats, (s) => total(grantsOf(s)) - total(before) >= grants),
              `${grants} grants`
            )
            const after = grantsOf(yield* observer.stats)
            const got = new Map([...after].map(([lane, n]) => [lane, n - (before.get(lane) ?? 0)]))
            return { got, total: total(got) }
          })
        // a and b busy in every process, c idle: c's share goes to a and b, 3:1
        yield* sendAll(children, "run a 6")
        yield* sendAll(children, "run b 6")
        const two = yield* phase(["a", "b"], 10_000)
        const a = two.got.get("a") ?? 0
        const b = two.got.get("b") ?? 0
        assert.isTrue(Math.abs(a / (a + b) - 0.75) <= 0.05 * 0.75, `a ${a}, b ${b}`)
        assert.strictEqual(two.got.get("c") ?? 0, 0)
        // c turns busy: 3:1:1
        yield* sendAll(children, "run c 6")
        const three = yield* phase(["a", "b", "c"], 5_000)
        for (const [lane, weight] of [["a", 0.6], ["b", 0.2], ["c", 0.2]] as const) {
          const share = (three.got.get(lane) ?? 0) / three.total
          assert.isTrue(Math.abs(share - weight) <= 0.05 * weight, `${lane} ${share} of ${three.total}`)
        }
        yield* Effect.forEach(["a", "b", "c"], (lane) => sendAll(children, `stop ${lane}`), { discard: true })
        yield* Effect.forEach(children, (c) => c.lineMatching((l) => l === "stopped c", "stopped"), { discard: true })
        console.log(`fair share over 3 processes: ${JSON.stringify({ a, b, three: Object.fromEntries(three.got) })}`)
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "priority: interactive calls pass a saturated batch lane, a batch call ages past interactive ones; " +
      "lane bounds name the lane; a process with another policy is refused naming both",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("priority-fleet")
        const hold = 20
        const yieldFor = 300
        const priority: LaneWorkerOptions["priority"] = [["interactive", 0, 4], ["batch", yieldFor, -1]]
        const children = yield* Effect.forEach(
          [0, 1, 2],
          () => laneWorker({ url, name, permits: 4, holdMillis: hold, priority })
        )
        yield* ready(children)
        const log = yield* grantLog(name, (lane) => (lane === "interactive" ? 0 : 1))
        // the batch lane saturated from every process; interactive calls arrive one at a time
        yield* sendAll(children, "run batch 8")
        const observer = yield* bulkheadOn(url, {
          name,
          permits: 4,
          lanes: BulkheadLanes.priority({ interactive: { maxWaiting: 4 }, batch: { yieldFor } })
        })
        yield* eventually(Effect.map(observer.stats, (s) => s.waiting >= 12), "the batch lane saturated")
        for (let i = 0; i < 30; i++) {
          const child = children[i % 3]
          const from = child.received()
          yield* child.send(`once interactive i${i}`)
          yield* child.lineMatching((l) => l === `done i${i}`, `i${i} done`, from)
        }
        const interactive = yield* Effect.forEach(children, (c) => {
          const from = c.received()
          return Effect.zipRight(
            c.send("waits interactive"),
            c.lineMatching((l) => l.startsWith("waits interactive"), "waits", from)
          )
        })
        // interactive calls keep coming from every process, more than K of them: batch calls still get through once due
        yield* sendAll(children, "run interactive 3")
        const batchGrants = grantsOf(yield* observer.stats).get("batch") ?? 0
        yield* eventually(
          Effect.map(observer.stats, (s) => (grantsOf(s).get("batch") ?? 0) >= batchGrants + 20),
          "20 batch calls granted while interactive calls keep coming"
        )
        yield* Effect.forEach(children, (c) => c.send("waits batch"), { discard: true })
        const batch = yield* Effect.forEach(
          children,
          (c) => c.lineMatching((l) => l.startsWith("waits batch"), "waits")
        )
        // the interactive lane's own bound (4), fleet-wide: with more interactive callers than K + 4, some are refused by it
        yield* sendAll(children, "run interactive 3")
        let answer = ""
        for (let i = 0; i < 50 && !answer.startsWith("failed"); i++) {
          const from = children[0].received()
          yield* children[0].send(`once interactive full${i}`)
          answer = yield* children[0].lineMatching(
            (l) => l.startsWith(`failed full${i} `) || l === `done full${i}`,
            "the refusal",
            from
          )
        }
        yield* Effect.forEach(["interactive", "batch"], (lane) => sendAll(children, `stop ${lane}`), { discard: true })
        yield* Effect.forEach(children, (c) => c.lineMatching((l) => l === "stopped batch", "stopped"), {
          discard: true
        })
        assert.isAtLeast(log.result.checked, 100)
        assert.deepStrictEqual(log.result.overtaken, [])
        assert.include(answer, `BulkheadFull: bulkhead "${name}" lane "interactive" is full`)
        assert.include(answer, "(maxWaiting 4)")
        // another policy under the same name, while it is busy: refused at start, naming both
        yield* sendAll(children, "run batch 2")
        yield* eventually(Effect.map(observer.stats, (s) => s.inFlight > 0), "busy again")
        const other = yield* laneWorker({ url, name, permits: 4, holdMillis: 0, fairShare: { weights: {} } })
        const refused = yield* other.lineMatching((l) => l.startsWith("refused") || l === "ready", "its start")
        assert.include(
          refused,
          `refused IllegalArgumentException: bulkhead "${name}": this process's lanes (fairShare: default weight 1)`
        )
        assert.include(refused, "(priority: interactive, batch after 300ms)")
        console.log(
          `priority over 3 processes (hold ${hold} ms, K 4, yieldFor ${yieldFor} ms): grants checked ${log.result.checked}; ` +
            `interactive waits ${interactive.join(" | ")}; batch waits with interactive calls coming ${
              batch.join(" | ")
            }; ` +
            `refusal: ${answer}`
        )
      }),
    { timeout: 120_000 }
  )
})
