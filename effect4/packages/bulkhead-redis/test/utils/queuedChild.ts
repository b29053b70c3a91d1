/**
 * One permit shared with a child process, set up as the fencing tests need it: a call of this
 * process holds the permit, the child's ticket waits behind it, and a second call of this process
 * waits behind the child's ticket.
 */
import { Deferred, Effect } from "effect"
import { worker } from "./child.js"
import { bulkheadOn, eventually, hold, inspector, stateOf } from "./helpers.js"

export const childQueuedBetween = (url: string, name: string, leaseTtlMillis: number) =>
  Effect.gen(function*() {
    const redis = yield* inspector(url)
    const mine = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: leaseTtlMillis })
    const holder = yield* hold(mine)
    yield* Deferred.await(holder.started)
    const child = yield* worker({ url, name, permits: 1, leaseTtlMillis, mode: "hold" })
    yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "the child's ticket queued")
    const [childTicket] = (yield* stateOf(redis, name)).queue
    const behind = yield* hold(mine)
    yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 2), "a ticket behind it")
    return { redis, mine, holder, child, childTicket, behind }
  })
