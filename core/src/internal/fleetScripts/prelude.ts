/**
 * The Lua every script of the distributed bulkhead starts with (`FleetScripts.ts` describes the keys and
 * the rules): the counters read once, the expiry of dead leases, strict-FIFO grants, the head run,
 * and the write-back that publishes the grants. Imports nothing from Effect.
 *
 * @internal
 */

import * as Lanes from "./lanes.js"

const fifoGrant = `-- strict FIFO: the head is granted when its cost fits, and nothing behind it overtakes it
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

`

const fifoHeadRun = `-- The queue's head run: the instance of the oldest waiting ticket, and a ticket number below which
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

`

/**
 * The prelude of the scripts without lanes (`lanes` false: the text they had before lanes) or of
 * the scripts of a lane policy (`lanes.ts`: the policy's state, its grant, hand-overs off).
 *
 * @internal
 */
export const preludeOf = (lanes: boolean): string => `
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
${lanes ? Lanes.state : ""}
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
    redis.call("ZREM", wleaseKey, m)${lanes ? "\n    dequeued(m)" : ""}
  end
end

${
  lanes
    ? Lanes.grant
    : fifoGrant
}-- counts a ticket whose call runs already (a claim, a hand-over) when its cost fits K: true if counted
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

${
  lanes
    ? Lanes.headRun
    : fifoHeadRun
}-- writes the counters back and tells the waiters; a name with no ticket left expires in an hour.
-- The grants of the nonce prefix mine (nil: none) are not published: they are returned, for the
-- reply, with the limit of mine's head run (0 when the head is not mine). A message starts with the
-- limit of its instance's head run (0 when the head is not that instance's), then the members.
local function finish(mine)
  redis.call("HSET", metaKey, "permits", permits, "used", used, "wanted", wanted)${lanes ? "\n  finishLanes()" : ""}
  local busy = used > 0 or wanted > 0
  if not busy and (wasBusy or unknown) then
    redis.call("PEXPIRE", metaKey, 3600000)
    redis.call("PEXPIRE", seqKey, 3600000)${lanes ? "\n    redis.call(\"PEXPIRE\", lanesKey, 3600000)" : ""}
  elseif busy and not wasBusy then
    redis.call("PERSIST", metaKey)
    redis.call("PERSIST", seqKey)${lanes ? "\n    redis.call(\"PERSIST\", lanesKey)" : ""}
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

/** @internal */
export const prelude = preludeOf(false)
