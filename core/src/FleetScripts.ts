/**
 * The Lua scripts of the distributed bulkhead, each one round trip and atomic: `batch` for the
 * acquires and releases of one event-loop turn (`internal/fleetScripts/batch.ts`), and one script per other
 * operation, each after the common prelude (`internal/fleetScripts/prelude.ts`). These modules import nothing from
 * Effect, so that a build for another Effect major reuses them.
 *
 * Layout, for a bulkhead named `n` under the prefix `p` (every key and the channel share the hash
 * tag `{n}`, so they sit in one Redis Cluster slot and one script may touch them all):
 *
 * - `p{n}:seq`: the ticket counter (`INCR`): the global FIFO order.
 * - `p{n}:meta`: a hash — `permits` (K, shared by the fleet), `used` (permits held under live
 *   leases) and `wanted` (permits the queue asks for). Invariants: `used` is the sum of the costs
 *   in `held`, `wanted` the sum of the costs in `queue`, `used ≤ permits` except after a shrink.
 * - `p{n}:queue`: a sorted set, waiting tickets scored by ticket number (the order of arrival).
 * - `p{n}:wlease`: a sorted set, waiting tickets scored by their lease deadline.
 * - `p{n}:held`: a sorted set, granted tickets scored by their lease deadline (a waiter granted
 *   from the queue keeps its waiting lease's: a grant never outlives the waiter's last renewal).
 * - `p{n}:grants:<mark>`: the shard channel (`SPUBLISH`) of the bulkhead instance whose nonces
 *   start with `<mark>`: each grant of its tickets, members space-separated after the limit of the
 *   instance's head run (below). One channel per instance, so that a release wakes only the process
 *   it granted to (a member without a mark goes to `p{n}:grants`). A `batch` script does not publish
 *   the grants of its own caller's tickets: it returns them.
 *
 * A ticket's member is `<ticket>:<cost>:<ttl>:<nonce>`: the number orders it, the cost and the
 * lease TTL (ms) travel with it (no lookup), and the caller's nonce (`<mark>.<n>`: the instance's
 * mark, random per process, and a counter) makes it a lease id no other grant can have, even after
 * Redis lost the counter (a restart without persistence). A renew or release of a member that is
 * not there does nothing: fencing. A holder admitted by the local fallback while Redis was down
 * claims the member `c:<cost>:<ttl>:<nonce>`.
 *
 * The head run: when the oldest waiting tickets are one instance's, a script tells that instance
 * (in its reply, or with the grants it publishes to it) a ticket number below which every waiting
 * ticket is its own. New tickets join at the back, numbered higher, so that stays true:
 * the instance can hand a permit its caller releases straight to its own oldest waiter, which is
 * the fleet's oldest, and tell Redis in its next script (`h`), instead of waiting for Redis to
 * grant it.
 *
 * Every script first expires what is due (held leases past their deadline give their permits
 * back, waiting tickets past theirs leave the queue), then grants from the head while the head's
 * cost fits — never past a head that does not fit — and publishes the grants. An acquire that fits
 * with nobody queued, and a release with nobody queued, skip it: nothing can come of it, and the
 * dead holders' permits are reclaimed by the next script that needs them.
 * Deadlines are on the server's `TIME`, so processes whose clocks disagree agree on leases.
 *
 * ARGV of every script starts with the grant channels' common name (`p{n}:grants`) and this
 * process's permits (used only when the shared `permits` is missing: a Redis that restarted empty,
 * or a name that fell idle).
 *
 * @since 0.1.0
 */

import { batch } from "./internal/fleetScripts/batch.js"
import { prelude } from "./internal/fleetScripts/prelude.js"

/**
 * ARGV: channel, permits, then members. Extends each member's lease by its own ttl.
 *
 * Reply `{nextExpiry, status...}`, one status per member: "h" held, "w" waiting, "x" gone (its
 * lease expired: a holder that reads it has lost its permits).
 */
const renew = `${prelude}
expire()
grant()
local out = {0}
for i = 3, #ARGV do
  local m = ARGV[i]
  local _, l = ticketOf(m)
  if l and redis.call("ZSCORE", heldKey, m) then
    redis.call("ZADD", heldKey, "XX", clock() + l, m)
    out[#out + 1] = "h"
  elseif l and redis.call("ZSCORE", queueKey, m) then
    redis.call("ZADD", wleaseKey, "XX", clock() + l, m)
    out[#out + 1] = "w"
  else
    out[#out + 1] = "x"
  end
end
finish()
out[1] = nextExpiry()
return out
`

/**
 * ARGV: channel, permits, then members: holders of this process that Redis may not count (their lease ran through an outage, or they were admitted on the local fallback while
 * Redis was down). A member present in `held` is renewed; a missing one is claimed (a lease of its
 * cost) only if its permits are free after the grants: a claim counts a call already running, it
 * never takes permits the head of the queue could use, and never counts a member twice.
 *
 * Reply `{nextExpiry, status...}`, one status per member: "h" held (renewed), "c" claimed, "x" not
 * free, or still queued (a waiting ticket is never claimed: it leaves the queue).
 */
const claim = `${prelude}
expire()
grant()
local out = {0}
for i = 3, #ARGV do
  local m = ARGV[i]
  local c, l = ticketOf(m)
  if not c then
    out[#out + 1] = "x"
  elseif redis.call("ZSCORE", heldKey, m) then
    redis.call("ZADD", heldKey, "XX", clock() + l, m)
    out[#out + 1] = "h"
  elseif redis.call("ZREM", queueKey, m) == 1 then
    -- a waiting ticket holds nothing, and is not counted (its grant would count it a second time);
    -- a process claims only its holders, so nobody waits for this grant any more: it leaves the queue
    redis.call("ZREM", wleaseKey, m)
    wanted = wanted - c
    -- a head that left may let the tickets behind it in, before any claim after this one
    grant()
    out[#out + 1] = "x"
  elseif countIfFits(m, c, l) then
    out[#out + 1] = "c"
  else
    out[#out + 1] = "x"
  end
end
finish()
out[1] = nextExpiry()
return out
`

/** ARGV: channel, permits. Reply `{permits, used, holders, waiting, wanted}`. */
const stats = `${prelude}
expire()
grant()
finish()
return {permits, used, redis.call("ZCARD", heldKey), redis.call("ZCARD", queueKey), wanted}
`

/** ARGV: channel, permits (the new K for the fleet). Growing grants at once; shrinking pre-empts nobody. */
const resize = `${prelude}
permits = tonumber(ARGV[2])
expire()
grant()
finish()
return {permits}
`

/** @since 0.1.0 */
export const scripts = { batch, renew, claim, stats, resize } as const

/** @since 0.1.0 */
export type ScriptName = keyof typeof scripts

/**

 * The operations of a `batch` script.

 *

 * @since 0.1.0

 */
export const ACQUIRE = "q"
/** @since 0.1.0 */
export const TRY_ACQUIRE = "t"
/** @since 0.1.0 */
export const RELEASE = "r"
/** @since 0.1.0 */
export const LEAVE_KEEPING = "k"
/** @since 0.1.0 */
export const HAND_OVER = "h"
/** @since 0.1.0 */
export const ABANDON = "a"
/** @since 0.1.0 */
export type OperationCode =
  | typeof ABANDON
  | typeof ACQUIRE
  | typeof TRY_ACQUIRE
  | typeof RELEASE
  | typeof LEAVE_KEEPING
  | typeof HAND_OVER

/**

 * Reply kinds of an acquire.

 *

 * @since 0.1.0

 */
export const ACQUIRE_QUEUED = 0
/** @since 0.1.0 */
export const ACQUIRE_GRANTED = 1
/** @since 0.1.0 */
export const ACQUIRE_FULL = 2
/** @since 0.1.0 */
export const ACQUIRE_REFUSED = 3

/**

 * States in a release's reply.

 *

 * @since 0.1.0

 */
export const LEFT_NOTHING = 0
/** @since 0.1.0 */
export const LEFT_HELD = 1
/** @since 0.1.0 */
export const LEFT_QUEUE = 2

/**
 * The keys of one bulkhead, in the order every script takes them, then the common name of its grant
 * channels (`<channel>:<mark>` for each bulkhead instance). All share the hash tag `{name}`.
 *
 * @since 0.1.0
 */
export const keysOf = (prefix: string, name: string) => {
  const base = `${prefix}{${name}}`
  return {
    keys: [`${base}:seq`, `${base}:meta`, `${base}:queue`, `${base}:wlease`, `${base}:held`],
    channel: `${base}:grants`
  } as const
}
