/**
 * What every script shares: the deciding instant, the helpers, reading and writing the state.
 * Plain strings, importing nothing (see `LimiterScripts.ts` for the layout).
 *
 * @internal
 */

/** The deciding instant (the server's `TIME`, or the caller's clock for the contract suite). */
export const clock = `
local now = ARGV[1]
if now == "" then
  local t = redis.call("TIME")
  now = t[1] * 1000 + t[2] / 1000
else
  now = tonumber(now)
end
local pad = tonumber(ARGV[2])
`

/** @internal */
export const helpers = `
local EPS = 0.001
local NEG = -math.huge
-- Algorithm.MAX_ROLLBACK_UNITS and Ledger.MAX_CANCELLED_RUNS
local MAX_ROLLBACK_UNITS = 4096
local MAX_CANCELLED_RUNS = 1024
-- the state's header (limits, last id, latest live id, floor, pause, born) and one
-- limit's record (four doubles of state, the limit's own pause, its signature)
local HEADER = "<dddddd"
local LIMIT = "<ddddds"
-- A whole number goes back as an integer reply; anything else as an exact decimal string.
local function out(x)
  if x == math.floor(x) and x > -9e15 and x < 9e15 then return x end
  return string.format("%.17g", x)
end
-- Ids restart above every id given before the state expired: a reservation from an earlier life
-- of the key can never match a new one.
local function first_id()
  return math.max(0, math.floor(now)) * 1000
end
-- Redis' Lua writes a number of 10^14 or more in exponent notation, which no expiry accepts
-- ("not an integer or out of range"): a state that must last longer (a reset of millennia, given
-- to the store directly) is kept MAX_TTL, some 3,000 years
local MAX_TTL = 99999999999999
local function ttl_until(at)
  return math.min(MAX_TTL, math.max(1, math.ceil(at - now)) + pad)
end
`

/**
 * Reads the state and the specs (`n` at ARGV[first]), resetting a limit whose spec changed.
 * `last_id`, `latest`, `floor`, `pause` and `born` come from the header (ids start at
 * `born + 1` when the state is written first: `fresh()` sets them); `states[i]` holds GCRA's
 * `tat`, `charged` and `latest`, a fixed window's `base` and `count`, a sliding window's `trimmed`,
 * and every limit's own pause `paused`.
 */
export const stateCode = (first: number): string => `
local state_key = KEYS[1]
local raw = redis.call("GET", state_key)
local stored_n, last_id, latest, floor, pause, born, pos = 0, nil, nil, nil, NEG, nil, 1
if raw then stored_n, last_id, latest, floor, pause, born, pos = struct.unpack(HEADER, raw) end
-- a state written for the first time: its ids start above every id given before
local function fresh()
  if not last_id then
    last_id = first_id()
    latest, floor, born = last_id, last_id, last_id
  end
end
local FIRST = ${first}
local n = tonumber(ARGV[FIRST])
local specs = {}
local states = {}
for i = 1, n do
  local a = FIRST + 1 + (i - 1) * 5
  local spec = {
    algo = ARGV[a],
    limit = tonumber(ARGV[a + 1]),
    window = tonumber(ARGV[a + 2]),
    burst = tonumber(ARGV[a + 3]),
    sig = ARGV[a + 4],
    log = KEYS[1 + i]
  }
  local x, y, z, w, p, sig = 0, 0, 0, 0, NEG, nil
  if i <= stored_n then x, y, z, w, p, sig, pos = struct.unpack(LIMIT, raw, pos) end
  local same = sig == spec.sig
  local st = { paused = NEG }
  if same then st.paused = p end
  if spec.algo == "g" then
    st.tat, st.charged, st.latest = NEG, 0, NEG
    if same then st.tat, st.charged, st.latest = x, z, w end
  elseif spec.algo == "f" then
    st.base = NEG
    st.count = 0
    if same then
      st.base = x
      st.count = y
    end
  else
    -- the latest unit dropped from the log while still in a window (see MAX_ROLLBACK_UNITS)
    st.trimmed = NEG
    if same then st.trimmed = x else redis.call("DEL", spec.log) end
  end
  specs[i] = spec
  states[i] = st
end

local function normalize_fixed(spec, st, at)
  local w = math.floor(at / spec.window)
  if w > st.base then
    if st.base == NEG then
      st.count = 0
    else
      st.count = math.max(0, st.count - (w - st.base) * spec.limit)
    end
    st.base = w
  end
end

-- commit() of a sliding window: \`units\` more logged at \`at\`. A unit that left the window can
-- never count again, whatever is rolled back above it; the log keeps its newest
-- limit + MAX_ROLLBACK_UNITS units, room is made before logging, and of a charge larger than that
-- (a debt is unbounded) only the units kept are written (in chunks: Lua's unpack takes a few
-- thousand values at most)
local function log_units(spec, st, at, units)
  local horizon = now - spec.window
  while true do
    local head = redis.call("LINDEX", spec.log, 0)
    if not head or tonumber(head) > horizon then break end
    redis.call("LPOP", spec.log)
  end
  if at <= horizon then return end
  local capacity = spec.limit + MAX_ROLLBACK_UNITS
  local kept = math.min(units, capacity)
  local excess = redis.call("LLEN", spec.log) + kept - capacity
  if excess > 0 then
    st.trimmed = tonumber(redis.call("LINDEX", spec.log, excess - 1))
    redis.call("LTRIM", spec.log, excess, -1)
  end
  if kept < units then st.trimmed = at end
  local text = string.format("%.17g", at)
  local left = kept
  while left > 0 do
    local times = {}
    for j = 1, math.min(left, 1000) do times[j] = text end
    redis.call("RPUSH", spec.log, unpack(times))
    left = left - #times
  end
end

-- the latest unit a sliding window logged, or \`now\` when none
local function last_logged(spec)
  local last = redis.call("LINDEX", spec.log, -1)
  if last then return math.max(now, tonumber(last)) end
  return now
end

-- Writes the state (the header from last_id, latest, floor, pause and born) with a TTL:
-- until no part of it can change a decision any more.
local function save()
  fresh()
  local packed = { struct.pack(HEADER, n, last_id, latest, floor, pause, born) }
  local expire = pause
  for i = 1, n do
    local spec, st = specs[i], states[i]
    local at
    if spec.algo == "g" then
      packed[i + 1] = struct.pack(LIMIT, st.tat, 0, st.charged, st.latest, st.paused, spec.sig)
      at = st.tat
    elseif spec.algo == "f" then
      packed[i + 1] = struct.pack(LIMIT, st.base, st.count, 0, 0, st.paused, spec.sig)
      at = NEG
      if st.base ~= NEG then at = (st.base + math.ceil(st.count / spec.limit)) * spec.window end
    else
      packed[i + 1] = struct.pack(LIMIT, st.trimmed, 0, 0, 0, st.paused, spec.sig)
      at = NEG
      local last = redis.call("LINDEX", spec.log, -1)
      if last then
        at = tonumber(last) + spec.window
        redis.call("PEXPIRE", spec.log, ttl_until(at))
      end
    end
    if st.paused > at then at = st.paused end
    if at > expire then expire = at end
  end
  redis.call("SET", state_key, table.concat(packed), "PX", ttl_until(expire))
end
`

/** @internal */
export const fixedSlot = `
local function fixed_slot(limit, count, cost)
  if (count % limit) + cost > limit then return (math.floor(count / limit) + 1) * limit end
  return count
end
`
