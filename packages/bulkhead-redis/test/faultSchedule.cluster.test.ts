/**
 * The fault schedule on a Redis Cluster (three masters with a replica each, started here): the
 * fleet of test/faultSchedule.test.ts on Cluster connections; two faults of a process drawn from a
 * seed (SIGKILL, or SIGSTOP past the TTL; printed on failure, FAULT_SEED replays one), then two
 * coordinated failovers of the name's shard (`CLUSTER FAILOVER` on its replica, which takes over
 * once it has every write of the master: nothing is lost). Checked:
 *
 * - never more than K requests in flight, leaving out calls a process started before it was stopped;
 * - after a death, K in flight again within the lease TTL + 1 s;
 * - after a failover, calls go on within TTL + 1 s of the new master serving the slot (a lost grant
 *   message costs one beat); how soon K are in flight again and the calls made are logged, not
 *   asserted: the fleet's grant subscriptions (SSUBSCRIBE) do not follow the failover, so it runs at
 *   its beats' pace afterwards;
 * - strict FIFO: the grants, as the shard's two nodes ran them (MONITOR on both), in ticket order.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startCluster } from "../../redis/test/utils/cluster.js"
import { RedisBulkhead } from "../src/index.js"
import { generator, grantLog, K, PROCESSES, seedOf, startFleet, TTL } from "./utils/faultSchedule.js"
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
        const { master, replicas } = yield* Effect.promise(() => cluster.shard(keys[0]))
        const log = grantLog([master, ...replicas], keys[4], keys[2])
        yield* log.attach
        yield* Effect.addFinalizer(() => log.detach)
        const fleet = yield* startFleet(seed, name, { url: "", cluster: cluster.nodes })
        const { server } = fleet
        // two faults of a process (seeded), then two failovers: after a failover the fleet runs at
        // its beat's pace (its grant subscriptions do not follow the shard), so no death is timed after one
        const faults = [random() < 0.5 ? "kill" : "stop", random() < 0.5 ? "kill" : "stop", "failover", "failover"]
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
            const asked = Date.now()
            const { from, to } = yield* Effect.promise(() => cluster.failover(keys[0]))
            // the new master serves the slot, the cluster state is ok on every node
            const served = Date.now()
            server.mark()
            const total = server.counts.total
            // what is promised: calls go on within TTL + 1 s (a lost grant message costs one beat)
            let full: number | undefined
            while (Date.now() - served < TTL + 1000) {
              if (full === undefined && server.fresh.peak >= K) full = Date.now() - served
              yield* Effect.sleep(5)
            }
            const calls = server.counts.total - total
            assert.isAtLeast(calls, 1, fleet.say(`${at}: no call ended within ${TTL + 1000} ms of the failover`))
            const roundPeak = server.counts.peak
            assert.isAtMost(roundPeak, K, fleet.say(`${at}: ${roundPeak} requests in flight, K = ${K}`))
            console.log(fleet.say(
              `${at}: failover ${from} -> ${to} in ${served - asked} ms; in the ${
                TTL + 1000
              } ms after: ${calls} calls, K in flight ${
                full === undefined ? "never" : `after ${full} ms`
              }, peak ${roundPeak}`
            ))
          }
        }
        const grants = yield* fleet.finish(log)
        console.log(fleet.say(`${grants} grants, in ticket order`))
      }).pipe(Effect.tapDefect(() => Effect.sync(() => console.log(`fault schedule failed with seed ${seed}`))))
    },
    120_000
  )
})
