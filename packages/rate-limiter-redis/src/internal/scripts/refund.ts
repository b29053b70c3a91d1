/**
 * Taking a reservation back (`ledger.ts` and `algorithm.ts`' `rollback`).
 *
 * @internal
 */
import { clock, helpers, stateCode } from "./common.js"

/**
 * `ledger.ts`' `cancel` and `algorithm.ts`' `rollback`. KEYS: the state, one log key per limit,
 * then the cancelled runs. ARGV: now, ttlPad, cost, reservation, n, the limits as for `reserve`,
 * then the reservation's restore values as `reserve` answered them (none when it answered none).
 * Answers 1 when something went back now, 0 when not (the reservation may be remembered).
 *
 * The cancelled runs are one binary string: their count and `n`, then per run `lo`, `hi`, `cost`,
 * `at` and `n` restore points, as doubles.
 */
export const refund = `${clock}${helpers}
local cost = tonumber(ARGV[3])
local reservation = tonumber(ARGV[4])
${stateCode(5)}
if not raw then return 0 end
local runs_key = KEYS[n + 2]
local restore = {}
local restore_n = #ARGV - (5 + 5 * n)
for j = 1, restore_n do
  local v = tonumber(ARGV[5 + 5 * n + j])
  -- a point a double could not hold ("none", NaN) is unknown
  if v ~= v then v = nil end
  restore[j] = v
end
local RUN = "<" .. string.rep("d", 4 + n)

-- the runs still worth keeping: below the top, above the floor, not yet past
local runs = {}
local runs_raw = redis.call("GET", runs_key)
local changed = false
if runs_raw then
  local count, width, pos = struct.unpack("<dd", runs_raw)
  if width == n then
    for _ = 1, count do
      local v = { struct.unpack(RUN, runs_raw, pos) }
      pos = v[#v]
      local run = { lo = v[1], hi = v[2], cost = v[3], at = v[4], points = {} }
      for i = 1, n do run.points[i] = v[4 + i] end
      if run.hi < latest and run.lo > floor and run.at > now then runs[#runs + 1] = run else changed = true end
    end
  else
    changed = true
  end
end

local function save_runs()
  if #runs == 0 then
    redis.call("DEL", runs_key)
    return
  end
  local packed = { struct.pack("<dd", #runs, n) }
  local last_at = now
  for j, run in ipairs(runs) do
    packed[j + 1] = struct.pack(RUN, run.lo, run.hi, run.cost, run.at, unpack(run.points))
    if run.at > last_at then last_at = run.at end
  end
  redis.call("SET", runs_key, table.concat(packed), "PX", ttl_until(last_at))
end

local function finish(answer)
  if changed then save_runs() end
  return answer
end

if reservation <= floor or reservation > latest then return finish(0) end
local at = 1
while at <= #runs and runs[at].hi < reservation do at = at + 1 end
if at <= #runs and runs[at].lo <= reservation then return finish(0) end

local function rollback(c, points)
  for i = 1, n do
    local spec, st = specs[i], states[i]
    if spec.algo == "g" then
      st.tat = st.tat - c * (spec.window / spec.limit)
    elseif spec.algo == "f" then
      normalize_fixed(spec, st, now)
      local restored = st.count - c
      if points and points[i] then restored = points[i] - st.base * spec.limit end
      st.count = math.min(st.count, math.max(0, restored))
    else
      local len = redis.call("LLEN", spec.log)
      local remove = math.min(c, len)
      if st.trimmed > now - spec.window then remove = math.min(remove, len - spec.limit) end
      if remove > 0 then redis.call("LTRIM", spec.log, 0, -(remove + 1)) end
    end
  end
end

if reservation == latest then
  local own = nil
  if restore_n > 1 then
    own = {}
    for i = 1, n do own[i] = restore[1 + i] end
  end
  rollback(cost, own)
  latest = reservation - 1
  local below = runs[#runs]
  if below and below.hi == latest then
    runs[#runs] = nil
    changed = true
    rollback(below.cost, below.points)
    latest = below.lo - 1
  end
  save(last_id, latest, floor)
  return finish(1)
end

-- below the top: remember it, merged with the runs next to it (a fixed window needs its points)
if restore_n == 0 or restore[1] == nil or restore[1] <= now then return finish(0) end
for i = 1, n do
  if specs[i].algo == "f" and restore[1 + i] == nil then return finish(0) end
end
local prev, next_run = runs[at - 1], runs[at]
local joins_prev = prev ~= nil and prev.hi == reservation - 1
local joins_next = next_run ~= nil and next_run.lo == reservation + 1
local points = {}
for i = 1, n do points[i] = restore[1 + i] or 0 end
local run = { lo = reservation, hi = reservation, cost = cost, at = restore[1], points = points }
local before, after = at - 1, at
if joins_prev then
  run.lo, run.points, run.cost = prev.lo, prev.points, run.cost + prev.cost
  before = at - 2
end
if joins_next then
  run.hi, run.at, run.cost = next_run.hi, next_run.at, run.cost + next_run.cost
  after = at + 1
end
local merged = {}
for j = 1, before do merged[#merged + 1] = runs[j] end
merged[#merged + 1] = run
for j = after, #runs do merged[#merged + 1] = runs[j] end
runs = merged
if #runs > MAX_CANCELLED_RUNS then table.remove(runs, 1) end
changed = true
return finish(0)
`
