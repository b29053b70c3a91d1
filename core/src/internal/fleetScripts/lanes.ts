/**
 * The Lua of a lane policy (RFC 0004, the fleet), spliced into the prelude of the lane scripts
 * (`prelude.ts`, `preludeOf(true)`): the same rules as `LaneQueue`, on the name's state in Redis.
 * Imports nothing from Effect.
 *
 * Keys after the five of every script, all under the name's hash tag: `p{n}:lanes` (a hash: the
 * policy, `started` whether the turn's lane has had its weight for this turn, `c:<lane>` a busy
 * lane's credit, `g:<lane>` the permits granted to a lane), `p{n}:tickets` (a hash: each waiting
 * member's due time and lane, `<due> <lane>`), `p{n}:round` (a list: the busy lanes of a fair
 * share, the turn's first); and one sorted set per lane, `p{n}:lanes:<lane>`, its waiting members
 * scored by ticket. The global queue stays: every waiting member, for the operations that look a
 * member up whatever its lane (renew, claim, leave, abandon).
 *
 * ARGV[3] of every lane script is the policy (`FleetScripts.policyText`), compared with the one the
 * name holds: a script of a process that disagrees changes nothing and answers `{"policy", held}`.
 * While the name is busy, `p{n}:meta` holds the policy in its field `lanes`: a busy name without
 * it is used by processes without lanes (whose scripts never read the lane keys), and a lane script
 * answers `{"policy", ""}`; a process without lanes reads the field at its start.
 *
 * @internal
 */

/** @internal */
export const state = `
local lanesKey, ticketsKey, roundKey = KEYS[6], KEYS[7], KEYS[8]
local policyText = ARGV[3]
-- ["fairShare", defaultWeight, [[lane, weight]...]] or ["priority", [[lane, yieldForMillis]...]]
local fair = string.sub(policyText, 3, 3) == "f"
local storedPolicy = redis.call("HGET", lanesKey, "policy")
-- meta's "lanes": the policy, set while lane scripts keep the name busy (a process without lanes
-- reads it at its start); a busy name without it is used by processes without lanes
local laneMark = redis.call("HGET", metaKey, "lanes")
-- the policy the name holds when it is not this one ("": no lanes), else nil
local function policyRefused()
  if wasBusy and not laneMark then return "" end
  if storedPolicy and storedPolicy ~= policyText then return storedPolicy end
  return nil
end
local lanePolicy
local function policyOf()
  if lanePolicy then return lanePolicy end
  local p = cjson.decode(policyText)
  lanePolicy = {names = {}, value = {}, default = 0}
  local list = p[2]
  if fair then
    lanePolicy.default = p[2]
    list = p[3]
  end
  for i, l in ipairs(list) do
    lanePolicy.names[i] = l[1]
    lanePolicy.value[l[1]] = l[2]
  end
  return lanePolicy
end
local function laneKey(lane)
  return lanesKey .. ":" .. lane
end
local function weightOf(lane)
  return policyOf().value[lane] or policyOf().default
end

-- the permits granted per lane by this script (a lane a ticket queued in is there, at zero: seen)
local grantedTo = {}
-- fair share: the busy lanes in round order, read on first need (the turn's first) and written at
-- the end from the turn's; round[turnAt] is the lane whose turn it is
local round
local turnAt = 1
local turnStarted = false
local roundDirty = false
local credits, creditDirty = {}, {}
local function loadRound()
  if round then return end
  round = redis.call("LRANGE", roundKey, 0, -1)
  turnAt = 1
  turnStarted = redis.call("HGET", lanesKey, "started") == "1"
end
local function creditOf(lane)
  local c = credits[lane]
  if c == nil then
    c = tonumber(redis.call("HGET", lanesKey, "c:" .. lane)) or 0
    credits[lane] = c
  end
  return c
end
local function setCredit(lane, c)
  credits[lane] = c
  creditDirty[lane] = true
end
-- a lane that turns busy joins last in the round (just before the turn's lane), at no credit
local function joinRound(lane)
  loadRound()
  if #round == 0 then
    round[1] = lane
    turnAt = 1
    turnStarted = false
  else
    table.insert(round, turnAt, lane)
    turnAt = turnAt + 1
  end
  setCredit(lane, 0)
  roundDirty = true
end
-- a lane whose queue empties leaves the round and loses its credit; the turn's passes the turn on
local function leaveRound(lane)
  loadRound()
  for i, l in ipairs(round) do
    if l == lane then
      table.remove(round, i)
      if i < turnAt then
        turnAt = turnAt - 1
      elseif i == turnAt then
        turnStarted = false
        if turnAt > #round then turnAt = 1 end
      end
      break
    end
  end
  setCredit(lane, 0)
  roundDirty = true
end

-- a waiting member joins its lane: due now + its lane's yieldFor (priority), scored by ticket
local function enqueue(member, ticket, cost, ttl, lane)
  local key = laneKey(lane)
  local due = clock()
  if not fair then due = due + (policyOf().value[lane] or 0) end
  redis.call("ZADD", queueKey, ticket, member)
  redis.call("ZADD", wleaseKey, clock() + ttl, member)
  redis.call("ZADD", key, ticket, member)
  redis.call("HSET", ticketsKey, member, due .. " " .. lane)
  wanted = wanted + cost
  if fair and redis.call("ZCARD", key) == 1 then joinRound(lane) end
end

-- a member that left the global queue without a grant leaves its lane too
local function dequeued(member)
  local record = redis.call("HGET", ticketsKey, member)
  if not record then return end
  redis.call("HDEL", ticketsKey, member)
  local lane = string.match(record, "^%S+ (.*)$")
  local key = laneKey(lane)
  redis.call("ZREM", key, member)
  if fair and redis.call("ZCARD", key) == 0 then leaveRound(lane) end
end

-- priority: the lane of the earliest due head, ties to the higher lane (one look at each head)
local function nextDue()
  local best, bestHead, bestDue
  for _, lane in ipairs(policyOf().names) do
    local head = redis.call("ZRANGE", laneKey(lane), 0, 0)[1]
    if head then
      -- a member without a record (not these scripts') comes first, to be dropped
      local due = tonumber(string.match(redis.call("HGET", ticketsKey, head) or "", "^(%S+) ")) or -math.huge
      if not best or due < bestDue then best, bestHead, bestDue = lane, head, due end
    end
  end
  return best, bestHead
end

-- fair share: a whole round passed without a grant (each lane's head cost in costs): the rounds
-- after it in which no lane's credit would cover its head are added to every credit at once, as
-- LaneQueue does, so that a grant costs a round or two of turns however small the weights
local function skipRounds(costs)
  local rounds = math.huge
  for _, lane in ipairs(round) do
    local c = costs[lane]
    if not c then return end
    rounds = math.min(rounds, math.ceil((c - creditOf(lane)) / weightOf(lane)) - 1)
  end
  if rounds <= 0 then return end
  for _, lane in ipairs(round) do setCredit(lane, creditOf(lane) + rounds * weightOf(lane)) end
end

-- fair share: the head of the lane whose turn it is, once its credit covers the head; a lane whose
-- credit does not passes the turn on, keeping it
local function nextFair()
  loadRound()
  local passed, costs = 0, {}
  while true do
    local lane = round[turnAt]
    if not lane then return nil end
    if not turnStarted then
      setCredit(lane, creditOf(lane) + weightOf(lane))
      turnStarted = true
      roundDirty = true
    end
    local head = redis.call("ZRANGE", laneKey(lane), 0, 0)[1]
    if not head then
      -- in the round with nothing queued (its state was lost): it leaves
      leaveRound(lane)
    else
      local c = ticketOf(head)
      if not c or c <= creditOf(lane) then return lane, head end
      costs[lane] = c
      turnAt = turnAt % #round + 1
      turnStarted = false
      roundDirty = true
      passed = passed + 1
      if passed >= #round then
        skipRounds(costs)
        passed = 0
      end
    end
  end
end

-- the counts of at most LANE_COUNTS lanes outside the round: past that, the counts of every lane
-- neither busy nor granted to by this script go (a name kept busy by ever new tenants stays
-- bounded). A look at HLEN per script that counts; the drop, at most once per LANE_COUNTS lanes
local LANE_COUNTS = 1000
local function trimCounts()
  -- besides the counts: the policy, "started", a credit per busy lane
  local busy = redis.call("LLEN", roundKey)
  if redis.call("HLEN", lanesKey) <= LANE_COUNTS + 2 + 2 * busy then return end
  loadRound()
  local keep = {}
  for _, lane in ipairs(round) do keep[lane] = true end
  for lane in pairs(grantedTo) do keep[lane] = true end
  local drop = {}
  for _, f in ipairs(redis.call("HKEYS", lanesKey)) do
    if string.sub(f, 1, 2) == "g:" and not keep[string.sub(f, 3)] then drop[#drop + 1] = f end
  end
  for from = 1, #drop, 1000 do
    redis.call("HDEL", lanesKey, unpack(drop, from, math.min(from + 999, #drop)))
  end
end

-- the policy's state back in the name's hash and list
local function finishLanes()
  if roundDirty then
    redis.call("DEL", roundKey)
    -- the turn's lane first; RPUSH in slices, within Lua's stack for unpack
    local ordered = {}
    for i = turnAt, #round do ordered[#ordered + 1] = round[i] end
    for i = 1, turnAt - 1 do ordered[#ordered + 1] = round[i] end
    for from = 1, #ordered, 1000 do
      redis.call("RPUSH", roundKey, unpack(ordered, from, math.min(from + 999, #ordered)))
    end
    redis.call("HSET", lanesKey, "started", turnStarted and "1" or "0")
  end
  for lane in pairs(creditDirty) do
    local c = credits[lane]
    -- %.17g: a credit read back is the same double (Lua's tostring keeps 14 digits)
    if c == 0 then redis.call("HDEL", lanesKey, "c:" .. lane)
    else redis.call("HSET", lanesKey, "c:" .. lane, string.format("%.17g", c)) end
  end
  for lane, n in pairs(grantedTo) do redis.call("HINCRBY", lanesKey, "g:" .. lane, n) end
  if next(grantedTo) then trimCounts() end
  if used > 0 or wanted > 0 then
    if laneMark ~= policyText then redis.call("HSET", metaKey, "lanes", policyText) end
  elseif laneMark then
    redis.call("HDEL", metaKey, "lanes")
  end
  if not storedPolicy then
    redis.call("HSET", lanesKey, "policy", policyText)
    -- written anew (a policy change, or state lost) on a name that stays idle: it expires with the
    -- name, as finish() gives the others only when the name turns idle
    if used <= 0 and wanted <= 0 then redis.call("PEXPIRE", lanesKey, 3600000) end
  end
end
`

/** @internal */
export const grant =
  `-- the policy's next ticket is granted when its cost fits, and nothing overtakes it: a chosen ticket
-- that does not fit stops every grant
local function grant()
  while (wanted > 0 or unknown) and used < permits do
    local lane, head
    if fair then lane, head = nextFair() else lane, head = nextDue() end
    if not lane then return end
    local c, l = ticketOf(head)
    local key = laneKey(lane)
    if not c then
      -- not a member these scripts wrote: dropped, rather than blocking the queue or failing mid-script
      redis.call("ZREM", key, head)
      redis.call("ZREM", queueKey, head)
      redis.call("ZREM", wleaseKey, head)
      redis.call("HDEL", ticketsKey, head)
      if fair and redis.call("ZCARD", key) == 0 then leaveRound(lane) end
    elseif used + c > permits then
      return
    else
      if fair then setCredit(lane, creditOf(lane) - c) end
      redis.call("ZREM", key, head)
      redis.call("ZREM", queueKey, head)
      redis.call("HDEL", ticketsKey, head)
      if fair and redis.call("ZCARD", key) == 0 then leaveRound(lane) end
      -- its lease ends when its waiting lease would have: a dead waiter's permits come back within its TTL
      local deadline = tonumber(redis.call("ZSCORE", wleaseKey, head)) or (clock() + l)
      redis.call("ZREM", wleaseKey, head)
      redis.call("ZADD", heldKey, deadline, head)
      used = used + c
      wanted = wanted - c
      grantedTo[lane] = (grantedTo[lane] or 0) + c
      granted[#granted + 1] = head
    end
  end
end

`

/** @internal */
export const headRun =
  `-- no head run under a lane policy: an instance cannot know which lane the fleet serves next, so it
-- hands nothing over
local function headRun()
  return nil, 0
end

`
