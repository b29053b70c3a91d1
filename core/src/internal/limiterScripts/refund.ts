/**
 * Taking a reservation back (`Ledger` and `Algorithm`'s `rollback`).
 *
 * @internal
 */
import { clock, helpers, stateCode } from "./common.js"

/**
 * `Ledger`'s `cancel` and `Algorithm`'s `rollback`. KEYS: the state, one log key per limit,
 * then the cancelled runs. ARGV: now, ttlPad, reservation, n, the limits as for `reserve`, the
 * reservation's cost on each limit, then its restore values as `reserve` answered them (none when
 * it answered none).
 * Answers 1 when something went back now, 0 when not (the reservation may be remembered).
 *
 * The cancelled runs are one binary string: their count and `n`, then per run `lo`, `hi`, `at`,
 * `n` costs and `n` restore points, as doubles.
 */
export const refund = `${clock}${helpers}
local reservation = tonumber(ARGV[3])
${stateCode(4)}
if not raw then return 0 end
local runs_key = KEYS[n + 2]
local costs = {}
for i = 1, n do costs[i] = tonumber(ARGV[4 + 5 * n + i]) end
local restore = {}
local restore_n = #ARGV - (4 + 6 * n)
for j = 1, restore_n do
  local v = tonumber(ARGV[4 + 6 * n + j])
  -- a point a double could not hold ("none", NaN) is unknown
  if v ~= v then v = nil end
  restore[j] = v
end
local RUN = "<" .. string.rep("d", 3 + 2 * n)

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
      local run = { lo = v[1], hi = v[2], at = v[3], costs = {}, points = {} }
      for i = 1, n do
        run.costs[i] = v[3 + i]
        run.points[i] = v[3 + n + i]
      end
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
    local fields = { run.lo, run.hi, run.at }
    for i = 1, n do
      fields[3 + i] = run.costs[i]
      fields[3 + n + i] = run.points[i]
    end
    packed[j + 1] = struct.pack(RUN, unpack(fields))
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

local function rollback(cs, points)
  for i = 1, n do
    local spec, st, c = specs[i], states[i], cs[i]
    if c <= 0 then
      -- charged nothing: nothing to take back
    elseif spec.algo == "g" then
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
  rollback(costs, own)
  latest = reservation - 1
  local below = runs[#runs]
  if below and below.hi == latest then
    runs[#runs] = nil
    changed = true
    rollback(below.costs, below.points)
    latest = below.lo - 1
  end
  save()
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
local run = { lo = reservation, hi = reservation, at = restore[1], costs = costs, points = points }
local before, after = at - 1, at
local function add(a, b)
  local sum = {}
  for i = 1, n do sum[i] = a[i] + b[i] end
  return sum
end
if joins_prev then
  run.lo, run.points, run.costs = prev.lo, prev.points, add(run.costs, prev.costs)
  before = at - 2
end
if joins_next then
  run.hi, run.at, run.costs = next_run.hi, next_run.at, add(run.costs, next_run.costs)
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
