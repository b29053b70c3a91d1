/**
 * The fault schedule on a Redis Cluster (three masters with a replica each, started here): the
 * fleet of test/faultSchedule.test.ts on Cluster connections, four rounds in an order drawn from a
 * seed (printed on failure; FAULT_SEED replays one): two coordinated failovers of the name's shard
 * (`CLUSTER FAILOVER` on its replica, which takes over once it has every write of the master, so
 * nothing is lost), and two faults of a process (SIGKILL, or SIGSTOP past the TTL). After each round:
 *
 * - never more than K requests in flight, leaving out calls a process started before it was stopped;
 * - after a death, K in flight again within the lease TTL + 1 s;
 * - after a failover, K in flight again within 1 s of the new master serving the slot (as after
 *   Redis answers again from a pause: the state is whole; plus `STARVED`, for this process);
 * - strict FIFO: the grants, as the shard's two nodes ran them (MONITOR on both), in ticket order.
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { clusterInspector } from "../../redis/test/utils/clients.js"
import { startCluster } from "../../redis/test/utils/cluster.js"
import { RedisBulkhead } from "../src/index.js"
import { generator, grantLog, PROCESSES, seedOf, startFleet, STARVED } from "./utils/faultSchedule.js"
import { uniqueName } from "./utils/helpers.js"

describe("a fault schedule on a Redis Cluster", () => {
  it.scopedLive(
    "three processes, K permits, failovers of the name's shard, kills and stops: the invariants hold",
    () => {
      const seed = seedOf()
      return Effect.gen(function*() {
        const random = generator(seed)
        const cluster = yield* Effect.acquireRelease(
          Effect.promise(() => startCluster()),
          (cluster) => Effect.promise(() => cluster.stop())
        )
        const name = uniqueName("cfaults")
        const { keys } = RedisBulkhead.keysOf("sluice:bh:", name)
        // the shard of the name: its master and its replica, which swap at each failover
        const redis = yield* clusterInspector(cluster.nodes)
        const slot = yield* Effect.promise(() => redis.cluster("KEYSLOT", keys[0]) as Promise<number>)
        const shard = (redis.slots[slot] ?? []).map((node) => Number(node.split(":")[1]))
        const log = grantLog(shard, keys[4], keys[2])
        yield* log.attach
        yield* Effect.addFinalizer(() => log.detach)
        const fleet = yield* startFleet(seed, name, { url: "", cluster: cluster.nodes })
        const { server, fullAgain } = fleet
        // two failovers and two faults of a process, in a seeded order
        const faults = ["failover", "failover", random() < 0.5 ? "kill" : "stop", random() < 0.5 ? "kill" : "stop"]
        for (let i = faults.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1))
          ;[faults[i], faults[j]] = [faults[j], faults[i]]
        }
        for (const [round, fault] of faults.entries()) {
          const victim = Math.floor(random() * PROCESSES)
          const at = `round ${round} (${faults.slice(0, round + 1).join(", ")})`
          server.resetPeak()
          if (fault === "kill") {
            const { bound, recovery } = yield* fleet.kill(victim, at)
            fleet.check(at, `kill of p${victim}`, recovery, bound)
          } else if (fault === "stop") {
            const { bound, recovery } = yield* fleet.stop(victim, at)
            fleet.check(at, `stop of p${victim}`, recovery, bound)
          } else {
            const before = log.tickets()[0].length
            const asked = Date.now()
            const { from, to } = yield* Effect.promise(() => cluster.failover(keys[0]))
            // the new master serves the slot, the cluster state is ok on every node
            const served = Date.now()
            server.mark()
            const bound = 1000 + STARVED
            const recovery = yield* fullAgain(served, bound, `${at}: after the failover`)
            fleet.check(
              at,
              `failover ${from} -> ${to} in ${served - asked} ms (${
                recovery + served - asked
              } ms from CLUSTER FAILOVER), grants logged ${before} before, ${log.tickets()[0].length} after`,
              recovery,
              bound
            )
          }
        }
        const grants = yield* fleet.finish(log)
        console.log(fleet.say(`${grants} grants, in ticket order`))
      }).pipe(Effect.tapDefect(() => Effect.sync(() => console.log(`fault schedule failed with seed ${seed}`))))
    },
    120_000
  )
})
