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

import { batchOf } from "./internal/fleetScripts/batch.js"
import { preludeOf } from "./internal/fleetScripts/prelude.js"
import type { Policy } from "./LaneQueue.js"
import { formatDuration } from "./OptionMessages.js"

/** A lane script's first statement: a process whose policy differs from the name's changes nothing. */
const refusal = (lanes: boolean): string =>
  lanes ? `local held = policyRefused()\nif held then return {"policy", held} end\n` : ""

/**
 * ARGV: channel, permits, then members. Extends each member's lease by its own ttl.
 *
 * Reply `{nextExpiry, status...}`, one status per member: "h" held, "w" waiting, "x" gone (its
 * lease expired: a holder that reads it has lost its permits).
 */
const renewOf = (lanes: boolean) =>
  `${preludeOf(lanes)}
${refusal(lanes)}expire()
grant()
local out = {0}
for i = ${lanes ? 4 : 3}, #ARGV do
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
const claimOf = (lanes: boolean) =>
  `${preludeOf(lanes)}
${refusal(lanes)}expire()
grant()
local out = {0}
for i = ${lanes ? 4 : 3}, #ARGV do
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
    redis.call("ZREM", wleaseKey, m)${lanes ? "\n    dequeued(m)" : ""}
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

/**
 * ARGV: channel, permits. Reply `{permits, used, holders, waiting, wanted}`; under a lane policy
 * also `{lane, waiting, waitingPermits, granted}` per lane: a priority policy's lanes in its order,
 * a fair share's lanes seen (granted to or queued in; a refused try leaves no trace) by name. A fair
 * share keeps the counts of at most 1,000 lanes besides the busy ones: past that, the lanes
 * neither busy nor counted by the script lose theirs.
 */
const statsOf = (lanes: boolean) =>
  `${preludeOf(lanes)}
${refusal(lanes)}expire()
grant()
finish()
${lanes ? laneStats : ""}return {permits, used, redis.call("ZCARD", heldKey), redis.call("ZCARD", queueKey), wanted${
    lanes ? ", perLane" : ""
  }}
`

const laneStats = `local perLane = {}
local names = {}
if fair then
  local fields = redis.call("HKEYS", lanesKey)
  for _, f in ipairs(fields) do
    if string.sub(f, 1, 2) == "g:" then names[#names + 1] = string.sub(f, 3) end
  end
  table.sort(names)
else
  names = policyOf().names
end
for _, lane in ipairs(names) do
  local members = redis.call("ZRANGE", laneKey(lane), 0, -1)
  local permitsWanted = 0
  for _, m in ipairs(members) do permitsWanted = permitsWanted + (ticketOf(m) or 0) end
  perLane[#perLane + 1] = {lane, #members, permitsWanted, tonumber(redis.call("HGET", lanesKey, "g:" .. lane)) or 0}
end
`

/**
 * ARGV: channel, permits (the new K for the fleet). Growing grants at once; shrinking pre-empts
 * nobody. Under a lane policy it sets the policy up too: a name idle (nothing held or queued, by
 * its counters) takes the caller's, with its lanes' counters anew; a busy one refuses another, and
 * so does one busy under processes without lanes.
 */
const resizeOf = (lanes: boolean) =>
  `${preludeOf(lanes)}
${lanes ? laneSetup : ""}permits = tonumber(ARGV[2])
expire()
grant()
finish()
return {permits}
`

const laneSetup = `local held = policyRefused()
if held then
  if held == "" or used > 0 or wanted > 0 then return {"policy", held} end
  redis.call("DEL", lanesKey, ticketsKey, roundKey)
  storedPolicy = false
end
`

/** @since 0.1.0 */
export const scripts = {
  batch: batchOf(false),
  renew: renewOf(false),
  claim: claimOf(false),
  stats: statsOf(false),
  resize: resizeOf(false)
} as const

/**
 * The scripts of a bulkhead with a lane policy (RFC 0004): the same operations on the name's lane
 * state (`internal/fleetScripts/lanes.ts` lays it out), each taking the policy (`policyText`) third
 * in ARGV and the keys of `laneKeysOf`. One Lua decision per grant: the policy picks the lane, and
 * the rest works as without lanes, except that no instance hands permits over.
 *
 * @since 0.4.0
 */
export const laneScripts: { readonly [K in ScriptName]: string } = {
  batch: batchOf(true),
  renew: renewOf(true),
  claim: claimOf(true),
  stats: statsOf(true),
  resize: resizeOf(true)
}

/** @since 0.1.0 */
export type ScriptName = keyof typeof scripts

/**
 * The first word of a lane script's reply to a process whose policy differs from the name's (the
 * second is the name's policy).
 *
 * @since 0.4.0
 */
export const POLICY_REFUSED = "policy"

/**
 * A lane policy as the scripts take it and compare it: canonical JSON, a fair share's weights by
 * name without those equal to the default, so that two processes giving the same policy send the
 * same text.
 *
 * @since 0.4.0
 */
export const policyText = (policy: Policy): string =>
  policy._tag === "priority"
    ? JSON.stringify(["priority", policy.lanes.map((lane) => [lane.name, lane.yieldForMillis])])
    : JSON.stringify([
      "fairShare",
      policy.defaultWeight,
      [...policy.weights].filter(([, weight]) => weight !== policy.defaultWeight)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    ])

const millis = (ms: number): string => formatDuration(BigInt(Math.round(ms * 1e6)))

/**
 * A policy's text for a person: `priority: interactive, batch after 30s` or
 * `fairShare: default weight 1, tenant-a 3`; the empty text (a process or a name without lanes) is
 * `no lanes`.
 *
 * @since 0.4.0
 */
export const describePolicy = (text: string): string => {
  if (text === "") return "no lanes"
  try {
    const parsed: unknown = JSON.parse(text)
    if (Array.isArray(parsed) && parsed[0] === "priority" && Array.isArray(parsed[1])) {
      const lanes = (parsed[1] as ReadonlyArray<readonly [string, number]>).map(([name, ms], rank) =>
        rank === 0 ? name : `${name} after ${ms === 0 ? "0ms" : millis(ms)}`
      )
      return `priority: ${lanes.join(", ")}`
    }
    if (Array.isArray(parsed) && parsed[0] === "fairShare" && Array.isArray(parsed[2])) {
      const weights = (parsed[2] as ReadonlyArray<readonly [string, number]>).map(([name, w]) => `${name} ${w}`)
      return `fairShare: default weight ${parsed[1]}${weights.length === 0 ? "" : `, ${weights.join(", ")}`}`
    }
  } catch {
    // not JSON: shown as it is
  }
  return text
}

/**
 * The field of `p{n}:meta` that holds the policy while lane scripts keep the name busy: a process
 * without lanes reads it at its start (`HGET`), and is refused if it is there.
 *
 * @since 0.4.0
 */
export const LANES_FIELD = "lanes"

/**
 * The defect of a process whose lanes differ from those its fleet uses under the name (`""`: no
 * lanes, on either side).
 *
 * @since 0.4.0
 */
export const policyMismatch = (name: string, mine: string, theirs: string): string =>
  `bulkhead "${name}": this process's lanes (${describePolicy(mine)}) differ from the lanes the fleet ` +
  `uses under this name (${describePolicy(theirs)}); every process of a name must give the same lanes ` +
  `(to change them, stop the fleet's calls: an idle name takes the lanes of the next process to start)`

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

/**
 * The keys of a bulkhead with lanes: `keysOf`'s five, then the lane hash, the waiting tickets' due
 * times and lanes, and the round of busy lanes (each lane's queue is `<lane hash>:<lane>`).
 *
 * @since 0.4.0
 */
export const laneKeysOf = (prefix: string, name: string) => {
  const { channel, keys } = keysOf(prefix, name)
  const base = `${prefix}{${name}}`
  return { keys: [...keys, `${base}:lanes`, `${base}:tickets`, `${base}:round`], channel } as const
}
