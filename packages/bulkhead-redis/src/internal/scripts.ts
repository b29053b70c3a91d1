/**
 * The Lua scripts of the distributed bulkhead: one script per operation, each one round trip and
 * atomic. This module imports nothing from Effect, so that a build for another Effect major
 * reuses it.
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
 * - `p{n}:held`: a sorted set, granted tickets scored by their lease deadline.
 * - `p{n}:tickets`: a hash, ticket → `cost:ttl` for every waiting or granted ticket.
 * - `p{n}:grants:<mark>`: the shard channel (`SPUBLISH`) of the process whose nonces start with
 *   `<mark>`: each grant of its tickets, members space-separated. One channel per process, so that
 *   a release wakes only the process it granted to (a member without a mark goes to `p{n}:grants`).
 *
 * A ticket's member is `<ticket>:<nonce>`: the number orders it, the caller's nonce (`<mark>.<n>`:
 * the process's random mark and a counter) makes it a lease id no other grant can have, even after
 * Redis lost the counter (a restart without persistence). A renew or release of a member that is
 * not there does nothing: fencing.
 *
 * Every script first expires what is due (held leases past their deadline give their permits
 * back, waiting tickets past theirs leave the queue), then grants from the head while the head's
 * cost fits — never past a head that does not fit — and publishes the grants. Two skip it when
 * nothing can come of it: an acquire that fits with nobody queued, and a release with nobody
 * queued; the dead holders' permits are reclaimed by the next script that needs them.
 * Deadlines are on the server's `TIME`, so processes whose clocks disagree agree on leases.
 *
 * ARGV of every script starts with the grant channels' common name (`p{n}:grants`) and this
 * process's permits (used only when the shared `permits` is missing: a Redis that restarted empty,
 * or a name that fell idle).
 *
 * @internal
 */

const prelude = `
local seqKey, metaKey, queueKey, wleaseKey, heldKey, ticketsKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local channel = ARGV[1]
-- the server's clock, read once and only by a script that needs it (a release nobody waits for does not)
local now
local function clock()
  if not now then
    local t = redis.call("TIME")
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end
local meta = redis.call("HMGET", metaKey, "permits", "used", "wanted")
local permits = tonumber(meta[1])
-- no counters (a Redis that restarted empty, or a name that fell idle): read every key, trust nothing
local unknown = not permits
if unknown then permits = tonumber(ARGV[2]) end
local used = tonumber(meta[2]) or 0
local wanted = tonumber(meta[3]) or 0
-- the keys lose their idle expiry when the name turns busy, and get it back when it turns idle
local wasBusy = not unknown and (used > 0 or wanted > 0)
local granted = {}

local function ticketOf(member)
  local v = redis.call("HGET", ticketsKey, member)
  if not v then return nil, nil end
  local c, l = string.match(v, "^(%d+):(%d+)$")
  return tonumber(c), tonumber(l)
end

-- leases past their deadline: a dead holder's permits come back, a dead waiter leaves the queue
local function expire()
  local dead = redis.call("ZRANGEBYSCORE", heldKey, "-inf", clock())
  for _, m in ipairs(dead) do
    local c = ticketOf(m)
    used = used - (c or 0)
    redis.call("HDEL", ticketsKey, m)
    redis.call("ZREM", heldKey, m)
  end
  -- nothing wanted means an empty queue (wanted is the sum of its costs, each at least 1)
  if wanted <= 0 and not unknown then return end
  local gone = redis.call("ZRANGEBYSCORE", wleaseKey, "-inf", clock())
  for _, m in ipairs(gone) do
    local c = ticketOf(m)
    wanted = wanted - (c or 0)
    redis.call("HDEL", ticketsKey, m)
    redis.call("ZREM", queueKey, m)
    redis.call("ZREM", wleaseKey, m)
  end
end

-- strict FIFO: the head is granted when its cost fits, and nothing behind it overtakes it
local function grant()
  -- every cost is at least 1: with every permit used nothing fits, whoever the head is
  while (wanted > 0 or unknown) and used < permits do
    local head = redis.call("ZRANGE", queueKey, 0, 0)[1]
    if not head then return end
    local c, l = ticketOf(head)
    if used + c > permits then return end
    redis.call("ZREM", queueKey, head)
    redis.call("ZREM", wleaseKey, head)
    redis.call("ZADD", heldKey, clock() + l, head)
    used = used + c
    wanted = wanted - c
    granted[#granted + 1] = head
  end
end

-- writes the counters back and tells the waiters; a name with no ticket left expires in an hour
local function finish()
  redis.call("HSET", metaKey, "permits", permits, "used", used, "wanted", wanted)
  local busy = used > 0 or wanted > 0
  if not busy and (wasBusy or unknown) then
    redis.call("PEXPIRE", metaKey, 3600000)
    redis.call("PEXPIRE", seqKey, 3600000)
  elseif busy and not wasBusy then
    redis.call("PERSIST", metaKey)
    redis.call("PERSIST", seqKey)
  end
  -- one message per process granted to, on that process's channel
  local owners, byOwner = {}, {}
  for _, m in ipairs(granted) do
    local owner = string.match(m, "^%d+:(%x+)%.") or ""
    local members = byOwner[owner]
    if not members then
      members = {}
      byOwner[owner] = members
      owners[#owners + 1] = owner
    end
    members[#members + 1] = m
  end
  for _, owner in ipairs(owners) do
    local to = channel
    if owner ~= "" then to = channel .. ":" .. owner end
    redis.call("SPUBLISH", to, table.concat(byOwner[owner], " "))
  end
end

-- the earliest held deadline, in milliseconds from now (-1 when nothing is held)
local function nextExpiry()
  local first = redis.call("ZRANGE", heldKey, 0, 0, "WITHSCORES")
  if first[2] == nil then return -1 end
  return math.max(0, tonumber(first[2]) - clock())
end
`

/**
 * ARGV: channel, permits, nonce, cost, ttl (ms), maxWaiting (-1: unbounded), queue (1: may queue;
 * 0: `maxWait` is zero, answer at once).
 *
 * Reply `{kind, member, used, permits, queued}`: kind 1 granted, 0 queued, 2 full (the
 * queue holds maxWaiting tickets), 3 not granted and not allowed to queue. `queued` is the queue's
 * length before this ticket: the callers ahead of it.
 */
const acquire = `${prelude}
local nonce, cost, ttl = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local maxWaiting, mayQueue = tonumber(ARGV[6]), ARGV[7] == "1"
-- the dead holders' permits are reclaimed when they are needed: by a ticket that does not fit, or
-- for the queue (nothing else reads them back)
if unknown or wanted > 0 or used + cost > permits then
  expire()
  grant()
end
local queued = 0
if wanted > 0 or unknown then queued = redis.call("ZCARD", queueKey) end
local kind, member = 0, ""
if queued == 0 and used + cost <= permits then
  local ticket = redis.call("INCR", seqKey)
  member = ticket .. ":" .. nonce
  redis.call("HSET", ticketsKey, member, cost .. ":" .. ttl)
  redis.call("ZADD", heldKey, clock() + ttl, member)
  used = used + cost
  kind = 1
elseif maxWaiting >= 0 and queued >= maxWaiting then
  kind = 2
elseif not mayQueue then
  kind = 3
else
  local ticket = redis.call("INCR", seqKey)
  member = ticket .. ":" .. nonce
  redis.call("HSET", ticketsKey, member, cost .. ":" .. ttl)
  redis.call("ZADD", queueKey, ticket, member)
  redis.call("ZADD", wleaseKey, clock() + ttl, member)
  wanted = wanted + cost
end
finish()
return {kind, member, used, permits, queued}
`

/**
 * ARGV: channel, permits, member, keep (1: a granted ticket is kept, for a waiter whose `maxWait`
 * ran out just as it was granted; 0: it is released).
 *
 * Reply `{state, used, permits}`: state 1 the member held its permits (released, or kept with keep
 * 1), 2 it was queued and left the queue, 0 it was not there (an expired lease: fencing).
 */
const leave = `${prelude}
local member, keep = ARGV[3], ARGV[4] == "1"
local state = 0
if not keep and wanted <= 0 and not unknown then
  -- nobody waits: a holder gives its permits back, and there is no one to expire or grant to
  if redis.call("ZREM", heldKey, member) == 1 then
    state = 1
    used = used - (ticketOf(member) or 0)
    redis.call("HDEL", ticketsKey, member)
  end
  finish()
  return {state, used, permits}
end
expire()
local c = ticketOf(member)
if redis.call("ZSCORE", heldKey, member) then
  state = 1
  if not keep then
    used = used - c
    redis.call("ZREM", heldKey, member)
    redis.call("HDEL", ticketsKey, member)
  end
elseif redis.call("ZSCORE", queueKey, member) then
  state = 2
  wanted = wanted - c
  redis.call("ZREM", queueKey, member)
  redis.call("ZREM", wleaseKey, member)
  redis.call("HDEL", ticketsKey, member)
end
-- a heavy head that left, or permits given back, may let the tickets behind in
grant()
finish()
return {state, used, permits}
`

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
 * ARGV: channel, permits, then (member, cost, ttl) triples: holders of this process that Redis may
 * not count (their lease ran through an outage, or they were admitted on the local fallback while
 * Redis was down). A member present in `held` is renewed; a missing one is claimed (a lease of its
 * cost) only if its permits are free after the grants: a claim counts a call already running, it
 * never takes permits the head of the queue could use, and never counts a member twice.
 *
 * Reply `{nextExpiry, status...}`, one status per member: "h" held (renewed), "c" claimed, "x" not
 * free (or still queued: a waiting ticket is never claimed).
 */
const claim = `${prelude}
expire()
grant()
local out = {0}
for i = 3, #ARGV, 3 do
  local m, c, l = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  if redis.call("ZSCORE", heldKey, m) then
    local _, tl = ticketOf(m)
    redis.call("ZADD", heldKey, "XX", clock() + (tl or l), m)
    out[#out + 1] = "h"
  elseif redis.call("ZSCORE", queueKey, m) then
    -- a waiting ticket holds nothing: counted now, its grant would count it a second time
    out[#out + 1] = "x"
  elseif used + c <= permits then
    redis.call("HSET", ticketsKey, m, c .. ":" .. l)
    redis.call("ZADD", heldKey, clock() + l, m)
    used = used + c
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

/** @internal */
export const scripts = { acquire, leave, renew, claim, stats, resize } as const

/** @internal */
export type ScriptName = keyof typeof scripts

/** Reply kinds of `acquire`. @internal */
export const ACQUIRE_QUEUED = 0
/** @internal */
export const ACQUIRE_GRANTED = 1
/** @internal */
export const ACQUIRE_FULL = 2
/** @internal */
export const ACQUIRE_REFUSED = 3

/** States in a `leave` reply. @internal */
export const LEFT_NOTHING = 0
/** @internal */
export const LEFT_HELD = 1
/** @internal */
export const LEFT_QUEUE = 2

/**
 * The keys of one bulkhead, in the order every script takes them, then the common name of its grant
 * channels (`<channel>:<mark>` for each process). All share the hash tag `{name}`.
 *
 * @internal
 */
export const keysOf = (prefix: string, name: string) => {
  const base = `${prefix}{${name}}`
  return {
    keys: [`${base}:seq`, `${base}:meta`, `${base}:queue`, `${base}:wlease`, `${base}:held`, `${base}:tickets`],
    channel: `${base}:grants`
  } as const
}
