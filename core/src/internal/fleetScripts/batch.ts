/**
 * The `batch` script (`FleetScripts.ts` describes the keys and the rules). Imports nothing from Effect.
 *
 * @internal
 */
import { preludeOf } from "./prelude.js"

const fifoAcquire = `local function acquire(nonce, cost, mayQueue)
  -- the dead holders' permits are reclaimed when they are needed: by a ticket that does not fit, or
  -- for the queue (nothing else reads them back)
  if unknown or wanted > 0 or used + cost > permits then
    expire()
    grant()
  end
  local queued = 0
  if wanted > 0 or unknown then queued = redis.call("ZCARD", queueKey) end
  local tail = ":" .. cost .. ":" .. ttl .. ":" .. nonce
  if queued == 0 and used + cost <= permits then
    local member = redis.call("INCR", seqKey) .. tail
    redis.call("ZADD", heldKey, clock() + ttl, member)
    used = used + cost
    return {1, member, used, permits, queued}
  end
  if maxWaiting >= 0 and queued >= maxWaiting then return {2, "", used, permits, queued} end
  if not mayQueue then return {3, "", used, permits, queued} end
  local ticket = redis.call("INCR", seqKey)
  local member = ticket .. tail
  redis.call("ZADD", queueKey, ticket, member)
  redis.call("ZADD", wleaseKey, clock() + ttl, member)
  wanted = wanted + cost
  return {0, member, used, permits, queued}
end

`

/**
 * The acquires and releases of one bulkhead instance that one event-loop turn asked for, in the
 * order they were asked, as if each ran as a script of its own: one round trip for all of them.
 *
 * ARGV: channel, permits, mark (the instance's nonce prefix: grants of its tickets come back in the
 * reply rather than by SPUBLISH, its caller is already listening), lease TTL (ms), maxWaiting (-1:
 * unbounded), then one triple per operation:
 *
 * - `q`, nonce, cost: an acquire that may queue. `t`, nonce, cost: one that may not (`maxWait` is
 *   zero: answer at once). Reply `{kind, member, used, permits, queued}`: kind 1 granted, 0 queued,
 *   2 full (the queue holds maxWaiting tickets), 3 not granted and not allowed to queue. `queued`
 *   is the queue's length before this ticket: the callers ahead of it.
 * - `r`, member, "": a release, or a waiter leaving the queue. `k`, member, "": the same, except
 *   that a granted ticket is kept (a waiter whose `maxWait` ran out just as it was granted). Reply
 *   `{state, used, permits}`: state 1 the member held its permits (released, or kept with `k`), 2 it
 *   was queued and left the queue, 0 it was not there (an expired lease: fencing).
 * - `h`, holder's member, waiter's member: a hand-over. The holder's lease ends and the waiter's
 *   begins, without the waiter's passing through the queue's head: the instance handed the permits
 *   over itself, knowing the waiter to be the fleet's oldest and to cost no more. A holder whose
 *   lease had ended leaves the waiter to be claimed (counted if its permits are free after the
 *   queue's grants), as does a Redis that lost both (a restart); a waiter that does not fit K (a
 *   shrink) is not counted. Reply
 *   `{state, used, permits}`: state 1 the waiter holds its permits now (or was granted them
 *   meanwhile: its lease is renewed, as the instance counts it from this script), 0 it holds none
 *   (or had left the queue: nothing is counted for it).
 * - `a`, nonce, "": an acquire its caller gave up on (the command timed out while Redis was paused
 *   or slow, and the script ran after all): the lease or the queued ticket of that nonce ends. Every
 *   `a` runs before the batch's other operations, whatever its place, in one look at the held
 *   leases and the queue. Reply `{state, used, permits}`: state 1 it held permits, 2 it was queued,
 *   0 it was not there; `used` as after all of them.
 *
 * Reply `{grants, runLimit, ...one reply per operation}`: `grants` lists the members of this
 * instance that this script granted, queued ones of earlier turns included; `runLimit` is the
 * limit of this instance's head run (0 when the oldest waiter is another instance's): every
 * waiting ticket numbered below it is this instance's.
 *
 * Under a lane policy (`lanes`, `lanes.ts`) ARGV takes the policy third (the rest one place
 * later); an acquire's third argument is `<cost> <the lane's maxWaiting, -1: unbounded> <lane>`,
 * and its reply `{kind, member, used, permits, queued, queuedAll, laneFull}`: `queued` counts its
 * lane's tickets, `queuedAll` every lane's, `laneFull` 1 when the lane's own bound refused it. A
 * ticket that ranks ahead of a head that does not fit may be granted on arrival (kind 1), also
 * when it could not have queued. There are no hand-overs and `runLimit` is 0. A process whose
 * policy differs from the name's is answered `{"policy", the name's policy}`, and nothing changes.
 *
 * @internal
 */
export const batchOf = (lanes: boolean): string =>
  `${preludeOf(lanes)}
${lanes ? laneArgs : "local mark, ttl, maxWaiting = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])\n"}
${lanes ? laneAcquire : fifoAcquire}local function leave(member, keep)
  if not keep and wanted <= 0 and not unknown then
    -- nobody waits: a holder gives its permits back, and there is no one to expire or grant to
    if redis.call("ZREM", heldKey, member) == 0 then return {0, used, permits} end
    used = used - (ticketOf(member) or 0)
    return {1, used, permits}
  end
  expire()
  local state = 0
  local c = ticketOf(member) or 0
  if keep then
    if redis.call("ZSCORE", heldKey, member) then state = 1 end
  elseif redis.call("ZREM", heldKey, member) == 1 then
    state = 1
    used = used - c
  end
  if state == 0 and redis.call("ZREM", queueKey, member) == 1 then
    state = 2
    wanted = wanted - c
    redis.call("ZREM", wleaseKey, member)${lanes ? "\n    dequeued(member)" : ""}
  end
  -- a heavy head that left, or permits given back, may let the tickets behind in
  grant()
  return {state, used, permits}
end

-- a holder of this instance gave its permits to this instance's oldest waiter, known to be the
-- fleet's oldest (below its head run's limit) and to cost no more: the waiter's lease replaces the
-- holder's, and what the waiter does not take goes to the queue
local function handOver(from, to)
  local had = redis.call("ZREM", heldKey, from) == 1
  if had then used = used - (ticketOf(from) or 0) end
  local c, l = ticketOf(to)
  local state = 0
  if c and redis.call("ZREM", queueKey, to) == 1 then
    redis.call("ZREM", wleaseKey, to)${lanes ? "\n    dequeued(to)" : ""}
    wanted = wanted - c
    -- the holder's lease had ended (Redis lost it, or its process paused past it): its permits may be
    -- another's, so the waiter is claimed as a holder through an outage is, after the queue's grants
    if not had then
      expire()
      grant()
    end
    -- it does not fit (a shrink this instance had not heard of yet, or the queue's grants took the
    -- permits of a holder whose lease had ended): it holds nothing
    if countIfFits(to, c, l) then state = 1 end
  elseif c then
    -- a lease past its deadline is not renewed: it ends first
    expire()
    if redis.call("ZSCORE", heldKey, to) then
      -- granted meanwhile by a release elsewhere: counted once, its lease renewed from now (the heir's
      -- instance sent this script, and counts the lease from when it did)
      redis.call("ZADD", heldKey, "XX", clock() + l, to)
      state = 1
    elseif not had then
      -- neither is here any more (a Redis that restarted empty, and the hand-over sent again): the
      -- waiter is claimed as a holder through an outage is. (Had the holder been here, the waiter would
      -- have left the queue itself: nothing is counted for it.)
      grant()
      if countIfFits(to, c, l) then state = 1 end
    end
  end
  if wanted > 0 or unknown then
    expire()
    grant()
  end
  return {state, used, permits}
end

-- the acquires whose caller gave up on them (its command timed out): what they hold or wait for ends
-- now, before any other operation; one look at the held leases and the queue for all of them
local function abandon(nonces)
  local states = {}
  local sets = {heldKey}
  if wanted > 0 or unknown then sets[2] = queueKey end
  for _, key in ipairs(sets) do
    for _, m in ipairs(redis.call("ZRANGE", key, 0, -1)) do
      local nonce = string.match(m, ":([^:]*)$")
      if nonce and nonces[nonce] and not states[nonce] then
        local c = ticketOf(m) or 0
        redis.call("ZREM", key, m)
        if key == heldKey then
          used = used - c
          states[nonce] = 1
        else
          redis.call("ZREM", wleaseKey, m)${lanes ? "\n          dequeued(m)" : ""}
          wanted = wanted - c
          states[nonce] = 2
        end
      end
    end
  end
  if next(states) then
    expire()
    grant()
  end
  return states
end

local abandoned = {}
local anyAbandoned = false
for i = ${lanes ? 7 : 6}, #ARGV, 3 do
  if ARGV[i] == "a" then
    abandoned[ARGV[i + 1]] = true
    anyAbandoned = true
  end
end
local abandonStates = {}
if anyAbandoned then abandonStates = abandon(abandoned) end

local out = {false, 0}
for i = ${lanes ? 7 : 6}, #ARGV, 3 do
  local op, id = ARGV[i], ARGV[i + 1]
  if op == "a" then
    out[#out + 1] = {abandonStates[id] or 0, used, permits}
  elseif op == "q" or op == "t" then
    out[#out + 1] = acquire(id, ${lanes ? "ARGV[i + 2]" : "tonumber(ARGV[i + 2])"}, op == "q")
  elseif op == "h" then
    out[#out + 1] = handOver(id, ARGV[i + 2])
  else
    out[#out + 1] = leave(id, op == "k")
  end
end
out[1], out[2] = finish(mark)
return out
`

/** @internal */
export const batch = batchOf(false)

const laneArgs = `local held = policyRefused()
if held then return {"policy", held} end
local mark, ttl, maxWaiting = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
-- a lane outside a priority policy: the whole batch is an error, before anything is written
if not fair then
  for i = 7, #ARGV, 3 do
    if ARGV[i] == "q" or ARGV[i] == "t" then
      local lane = string.match(ARGV[i + 2], "^%d+ %-?%d+ (.*)$")
      if not lane or policyOf().value[lane] == nil then
        return redis.error_reply("ERR bulkhead lanes: no lane " .. tostring(lane) .. " in the policy " .. policyText)
      end
    end
  end
end
`

// An acquire under a lane policy: its third argument is "<cost> <lane's maxWaiting> <lane>". As the
// in-process bulkhead, it takes its permits at once when nothing is queued and they are free;
// otherwise it queues and the policy grants what fits, so that a ticket ranking ahead of a blocked
// head is granted at once; one refused (a full lane or queue, or no wait allowed) leaves again.
const laneAcquire = `local function acquire(nonce, arg, mayQueue)
  local cost, laneMaxWaiting, lane = string.match(arg, "^(%d+) (%-?%d+) (.*)$")
  cost, laneMaxWaiting = tonumber(cost), tonumber(laneMaxWaiting)
  if unknown or wanted > 0 or used + cost > permits then
    expire()
    grant()
  end
  local queued = 0
  if wanted > 0 or unknown then queued = redis.call("ZCARD", queueKey) end
  local tail = ":" .. cost .. ":" .. ttl .. ":" .. nonce
  if queued == 0 and used + cost <= permits then
    local member = redis.call("INCR", seqKey) .. tail
    redis.call("ZADD", heldKey, clock() + ttl, member)
    used = used + cost
    grantedTo[lane] = (grantedTo[lane] or 0) + cost
    return {1, member, used, permits, 0, 0, 0}
  end
  local inLane = 0
  if queued > 0 then inLane = redis.call("ZCARD", laneKey(lane)) end
  local laneFull = laneMaxWaiting >= 0 and inLane >= laneMaxWaiting
  local full = laneFull or (maxWaiting >= 0 and queued >= maxWaiting)
  local ticket = redis.call("INCR", seqKey)
  local member = ticket .. tail
  enqueue(member, ticket, cost, ttl, lane)
  grant()
  if redis.call("ZSCORE", heldKey, member) then
    -- granted on arrival: the reply tells it, not the grants
    for i = #granted, 1, -1 do
      if granted[i] == member then table.remove(granted, i) break end
    end
    return {1, member, used, permits, inLane, queued, 0}
  end
  if full or not mayQueue then
    redis.call("ZREM", queueKey, member)
    redis.call("ZREM", wleaseKey, member)
    wanted = wanted - cost
    dequeued(member)
    grant()
    local kind = 3
    if full then kind = 2 end
    local bound = 0
    if laneFull then bound = 1 end
    return {kind, "", used, permits, inLane, queued, bound}
  end
  -- a lane is recorded (seen, at zero) once a ticket of it waits; a refused one leaves no trace
  grantedTo[lane] = grantedTo[lane] or 0
  return {0, member, used, permits, inLane, queued, 0}
end

`
