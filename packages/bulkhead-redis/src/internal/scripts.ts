/**
 * The Lua scripts of the distributed bulkhead, each one round trip and atomic: `batch` for the
 * acquires and releases of one event-loop turn, and one script per other operation. This module imports nothing from Effect, so that a build for another Effect major
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
 * @internal
 */

const prelude = `
local seqKey, metaKey, queueKey, wleaseKey, heldKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
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

-- a member carries its ticket's cost and lease TTL: <ticket>:<cost>:<ttl>:<nonce>
local function ticketOf(member)
  local c, l = string.match(member, "^[^:]*:(%d+):(%d+):")
  return tonumber(c), tonumber(l)
end

-- leases past their deadline: a dead holder's permits come back, a dead waiter leaves the queue;
-- once per script (every deadline set since is later than its clock)
local expired = false
local function expire()
  if expired then return end
  expired = true
  local dead = redis.call("ZRANGEBYSCORE", heldKey, "-inf", clock())
  for _, m in ipairs(dead) do
    used = used - (ticketOf(m) or 0)
    redis.call("ZREM", heldKey, m)
  end
  -- nothing wanted means an empty queue (wanted is the sum of its costs, each at least 1)
  if wanted <= 0 and not unknown then return end
  local gone = redis.call("ZRANGEBYSCORE", wleaseKey, "-inf", clock())
  for _, m in ipairs(gone) do
    wanted = wanted - (ticketOf(m) or 0)
    redis.call("ZREM", queueKey, m)
    redis.call("ZREM", wleaseKey, m)
  end
end

-- strict FIFO: the head is granted when its cost fits, and nothing behind it overtakes it
local function grant()
  -- every cost is at least 1: with every permit used nothing fits, whoever the head is
  while (wanted > 0 or unknown) and used < permits do
    local popped = redis.call("ZPOPMIN", queueKey)
    local head = popped[1]
    if not head then return end
    local c, l = ticketOf(head)
    if not c then
      -- not a member these scripts wrote: dropped, rather than blocking the queue or failing mid-script
      redis.call("ZREM", wleaseKey, head)
    elseif used + c > permits then
      -- it waits at the head, in its place
      redis.call("ZADD", queueKey, popped[2], head)
      return
    else
      -- its lease ends when its waiting lease would have: a dead waiter's permits come back within its TTL
      local deadline = tonumber(redis.call("ZSCORE", wleaseKey, head)) or (clock() + l)
      redis.call("ZREM", wleaseKey, head)
      redis.call("ZADD", heldKey, deadline, head)
      used = used + c
      wanted = wanted - c
      granted[#granted + 1] = head
    end
  end
end

-- counts a ticket whose call runs already (a claim, a hand-over) when its cost fits K: true if counted
local function countIfFits(member, cost, ttl)
  if used + cost > permits then return false end
  redis.call("ZADD", heldKey, clock() + ttl, member)
  used = used + cost
  return true
end

-- the bulkhead instance whose nonces start with the member's mark ("": a member without one)
local function ownerOf(member)
  return string.match(member, "^%d+:%d+:%d+:(%x+)%.") or ""
end

-- The queue's head run: the instance of the oldest waiting ticket, and a ticket number below which
-- every waiting ticket is that instance's (tickets queued later are numbered higher). An instance
-- whose oldest waiter is numbered below it may hand a released permit to that waiter itself: no
-- ticket of the fleet is older. A look at the first RUN_WINDOW tickets, when the head is one of the
-- instances this script tells (wants); nil with an empty queue.
local RUN_WINDOW = 32
local function headRun(wants)
  if wanted <= 0 and not unknown then return nil, 0 end
  local head = redis.call("ZRANGE", queueKey, 0, 0)[1]
  if not head then return nil, 0 end
  local owner = ownerOf(head)
  -- nobody this script talks to owns the head: no run to look at
  if not wants[owner] then return owner, 0 end
  local run = redis.call("ZRANGE", queueKey, 0, RUN_WINDOW - 1)
  for i = 2, #run do
    if ownerOf(run[i]) ~= owner then return owner, tonumber(string.match(run[i], "^%d+")) end
  end
  if #run == RUN_WINDOW then return owner, tonumber(string.match(run[#run], "^%d+")) + 1 end
  return owner, (tonumber(redis.call("GET", seqKey)) or 0) + 1
end

-- writes the counters back and tells the waiters; a name with no ticket left expires in an hour.
-- The grants of the nonce prefix mine (nil: none) are not published: they are returned, for the
-- reply, with the limit of mine's head run (0 when the head is not mine). A message starts with the
-- limit of its instance's head run (0 when the head is not that instance's), then the members.
local function finish(mine)
  redis.call("HSET", metaKey, "permits", permits, "used", used, "wanted", wanted)
  local busy = used > 0 or wanted > 0
  if not busy and (wasBusy or unknown) then
    redis.call("PEXPIRE", metaKey, 3600000)
    redis.call("PEXPIRE", seqKey, 3600000)
  elseif busy and not wasBusy then
    redis.call("PERSIST", metaKey)
    redis.call("PERSIST", seqKey)
  end
  -- one message per bulkhead instance granted to, on that instance's channel
  local owners, byOwner = {}, {}
  for _, m in ipairs(granted) do
    local owner = ownerOf(m)
    local members = byOwner[owner]
    if not members then
      members = {}
      byOwner[owner] = members
      owners[#owners + 1] = owner
    end
    members[#members + 1] = m
  end
  local runOwner, runLimit
  if mine or owners[1] then
    local wants = {}
    if mine then wants[mine] = true end
    for _, owner in ipairs(owners) do wants[owner] = true end
    runOwner, runLimit = headRun(wants)
  end
  for _, owner in ipairs(owners) do
    if owner ~= mine then
      local to = channel
      if owner ~= "" then to = channel .. ":" .. owner end
      local limit = 0
      if owner == runOwner then limit = runLimit end
      redis.call("SPUBLISH", to, limit .. " " .. table.concat(byOwner[owner], " "))
    end
  end
  if mine ~= nil and runOwner == mine then return byOwner[mine] or {}, runLimit end
  return byOwner[mine] or {}, 0
end

-- the earliest held deadline, in milliseconds from now (-1 when nothing is held)
local function nextExpiry()
  local first = redis.call("ZRANGE", heldKey, 0, 0, "WITHSCORES")
  if first[2] == nil then return -1 end
  return math.max(0, tonumber(first[2]) - clock())
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
 *   meanwhile), 0 it holds none (or had left the queue: nothing is counted for it).
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
 */
const batch = `${prelude}
local mark, ttl, maxWaiting = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])

local function acquire(nonce, cost, mayQueue)
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

local function leave(member, keep)
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
    redis.call("ZREM", wleaseKey, member)
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
    redis.call("ZREM", wleaseKey, to)
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
  elseif redis.call("ZSCORE", heldKey, to) then
    -- granted meanwhile by a release elsewhere: counted once
    state = 1
  elseif c and not had then
    -- neither is here any more (a Redis that restarted empty, and the hand-over sent again): the
    -- waiter is claimed as a holder through an outage is. (Had the holder been here, the waiter would
    -- have left the queue itself: nothing is counted for it.)
    expire()
    grant()
    if countIfFits(to, c, l) then state = 1 end
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
          redis.call("ZREM", wleaseKey, m)
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
for i = 6, #ARGV, 3 do
  if ARGV[i] == "a" then
    abandoned[ARGV[i + 1]] = true
    anyAbandoned = true
  end
end
local abandonStates = {}
if anyAbandoned then abandonStates = abandon(abandoned) end

local out = {false, 0}
for i = 6, #ARGV, 3 do
  local op, id = ARGV[i], ARGV[i + 1]
  if op == "a" then
    out[#out + 1] = {abandonStates[id] or 0, used, permits}
  elseif op == "q" or op == "t" then
    out[#out + 1] = acquire(id, tonumber(ARGV[i + 2]), op == "q")
  elseif op == "h" then
    out[#out + 1] = handOver(id, ARGV[i + 2])
  else
    out[#out + 1] = leave(id, op == "k")
  end
end
out[1], out[2] = finish(mark)
return out
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

/** @internal */
export const scripts = { batch, renew, claim, stats, resize } as const

/** @internal */
export type ScriptName = keyof typeof scripts

/** The operations of a `batch` script. @internal */
export const ACQUIRE = "q"
/** @internal */
export const TRY_ACQUIRE = "t"
/** @internal */
export const RELEASE = "r"
/** @internal */
export const LEAVE_KEEPING = "k"
/** @internal */
export const HAND_OVER = "h"
/** @internal */
export const ABANDON = "a"
/** @internal */
export type OperationCode =
  | typeof ABANDON
  | typeof ACQUIRE
  | typeof TRY_ACQUIRE
  | typeof RELEASE
  | typeof LEAVE_KEEPING
  | typeof HAND_OVER

/** Reply kinds of an acquire. @internal */
export const ACQUIRE_QUEUED = 0
/** @internal */
export const ACQUIRE_GRANTED = 1
/** @internal */
export const ACQUIRE_FULL = 2
/** @internal */
export const ACQUIRE_REFUSED = 3

/** States in a release's reply. @internal */
export const LEFT_NOTHING = 0
/** @internal */
export const LEFT_HELD = 1
/** @internal */
export const LEFT_QUEUE = 2

/**
 * The keys of one bulkhead, in the order every script takes them, then the common name of its grant
 * channels (`<channel>:<mark>` for each bulkhead instance). All share the hash tag `{name}`.
 *
 * @internal
 */
export const keysOf = (prefix: string, name: string) => {
  const base = `${prefix}{${name}}`
  return {
    keys: [`${base}:seq`, `${base}:meta`, `${base}:queue`, `${base}:wlease`, `${base}:held`],
    channel: `${base}:grants`
  } as const
}
