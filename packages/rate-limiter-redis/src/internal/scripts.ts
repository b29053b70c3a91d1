/**
 * The Lua scripts of the Redis store: one script per operation, each one round trip and atomic.
 *
 * They transcribe `@sluice/rate-limiter`'s `internal/algorithm.ts` and `internal/memoryStore.ts`
 * line for line, so a decision made in Redis is the decision the memory store would make on the
 * same clock (the contract suite checks it to the millisecond).
 *
 * Layout, for a limiter key `k` under the prefix `p` (all keys share the hash tag `{k}`, so they sit
 * in one Redis Cluster slot and one script may touch them all):
 *
 * - `p{k}`: the limiter's state, one MessagePack array (`cmsgpack`, built into Redis' Lua): the
 *   number of limits, the reservation counters (last id given, latest live id, floor), the pause
 *   (an instant of the deciding clock), then per limit its signature (`algorithm:limit:window:burst`)
 *   and its state (GCRA's theoretical arrival time, or a fixed window's base index and count).
 *   One GET and one SET with PX per decision: the fewest commands a script can run (doubles are
 *   stored exactly, `-inf` included).
 * - `p{k}:log:<i>`: limit `i`'s log of start times when it is a sliding window (a list, oldest
 *   first, trimmed to `2 × limit` entries, written with `%.17g`).
 *
 * Every write sets a TTL: the time until the state can no longer change a decision (the bucket is
 * full again, the last window is over, the log has slid out, the pause is over), plus `ttlPad`.
 *
 * Replies carry whole numbers as integers and others as exact decimal strings (Redis truncates a
 * Lua number to an integer).
 *
 * ARGV of every script starts with `now` (milliseconds; empty: read the server's `TIME`) and
 * `ttlPad` (milliseconds added to every TTL; 0 on the server's clock).
 *
 * @internal
 */

const prelude = `
local EPS = 0.001
local NEG = -math.huge
local state_key = KEYS[1]
local now
if ARGV[1] == "" then
  local t = redis.call("TIME")
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
else
  now = tonumber(ARGV[1])
end
local pad = tonumber(ARGV[2])
local function fmt(x) return string.format("%.17g", x) end
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
local raw = redis.call("GET", state_key)
local state = nil
if raw then state = cmsgpack.unpack(raw) end
`

/**
 * Reads the specs (`n` at ARGV[first]) and their states, resetting a limit whose spec changed.
 * State layout: `{ n, id, latest, floor, pause, then per limit: signature, a, b }` where `a`/`b`
 * are GCRA's theoretical arrival time (and 0), or a fixed window's base index and count.
 */
const stateCode = (first: number): string => `
local FIRST = ${first}
local n = tonumber(ARGV[FIRST])
local stored_n = 0
local pause = NEG
if state then
  stored_n = state[1]
  pause = state[5]
end
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
  local o = 5 + (i - 1) * 3
  local same = i <= stored_n and state[o + 1] == spec.sig
  local st = {}
  if spec.algo == "g" then
    st.tat = NEG
    if same then st.tat = state[o + 2] end
  elseif spec.algo == "f" then
    st.base = NEG
    st.count = 0
    if same then
      st.base = state[o + 2]
      st.count = state[o + 3]
    end
  elseif not same then
    redis.call("DEL", spec.log)
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

-- Writes the state with a TTL: until no part of it can change a decision any more.
local function save(id, latest, floor)
  local packed = { n, id, latest, floor, pause }
  local expire = pause
  for i = 1, n do
    local spec, st = specs[i], states[i]
    local o = 5 + (i - 1) * 3
    packed[o + 1] = spec.sig
    local at
    if spec.algo == "g" then
      packed[o + 2] = st.tat
      packed[o + 3] = 0
      at = st.tat
    elseif spec.algo == "f" then
      packed[o + 2] = st.base
      packed[o + 3] = st.count
      at = NEG
      if st.base ~= NEG then at = (st.base + math.ceil(st.count / spec.limit)) * spec.window end
    else
      packed[o + 2] = 0
      packed[o + 3] = 0
      at = NEG
      local last = redis.call("LINDEX", spec.log, -1)
      if last then
        at = tonumber(last) + spec.window
        redis.call("PEXPIRE", spec.log, math.max(1, math.ceil(at - now)) + pad)
      end
    end
    if at > expire then expire = at end
  end
  redis.call("SET", state_key, cmsgpack.pack(packed), "PX", math.max(1, math.ceil(expire - now)) + pad)
end
`

const fixedSlot = `
local function fixed_slot(limit, count, cost)
  if (count % limit) + cost > limit then return (math.floor(count / limit) + 1) * limit end
  return count
end
`

/**
 * KEYS: the state, then one log key per limit. ARGV: now, ttlPad, cost, maxWait (-1: none), n, then
 * per limit algorithm (`g`, `f`, `s`), limit, window (ms), burst and its signature (the four
 * joined with `:`, built once by the caller).
 *
 * Answers `{"R", delay, id}` or `{"X", delay, retryAfter, binding}` (binding from 0, -1: the pause).
 */
const reserve = `${prelude}
local cost = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
${stateCode(5)}
${fixedSlot}
local function earliest(spec, st, at)
  if spec.algo == "g" then
    return math.max(at, st.tat + (cost - spec.burst) * (spec.window / spec.limit))
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, at)
    local slot = fixed_slot(spec.limit, st.count, cost)
    return math.max(at, (st.base + math.floor(slot / spec.limit)) * spec.window)
  end
  local len = redis.call("LLEN", spec.log)
  if len == 0 then return at end
  local last = tonumber(redis.call("LINDEX", spec.log, -1))
  local k = spec.limit - cost + 1
  local bound = at
  if k <= len then bound = tonumber(redis.call("LINDEX", spec.log, -k)) + spec.window end
  return math.max(at, last, bound)
end

local from = math.max(now, pause)
local start = from
local binding = -1
for i = 1, n do
  local e = earliest(specs[i], states[i], from)
  if e > start + EPS then
    start = e
    binding = i - 1
  end
end
local delay = math.max(0, start - now)
if max_wait >= 0 and delay > max_wait + EPS then
  return { "X", out(delay), out(delay - max_wait), binding }
end

for i = 1, n do
  local spec, st = specs[i], states[i]
  if spec.algo == "g" then
    st.tat = math.max(st.tat, start) + cost * (spec.window / spec.limit)
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, now)
    local first = (math.floor(start / spec.window) - st.base) * spec.limit
    if st.count < first then
      st.count = first + cost
    else
      st.count = fixed_slot(spec.limit, st.count, cost) + cost
    end
  else
    local times = {}
    for j = 1, cost do times[j] = fmt(start) end
    redis.call("RPUSH", spec.log, unpack(times))
    redis.call("LTRIM", spec.log, -2 * spec.limit, -1)
  end
end

local last_id, latest, floor
if state then
  last_id, latest, floor = state[2], state[3], state[4]
else
  last_id = first_id()
  latest, floor = last_id, last_id
end
if latest ~= last_id then floor = last_id end
last_id = last_id + 1
save(last_id, last_id, floor)
return { "R", out(delay), last_id }
`

/**
 * KEYS: the state, then one log key per limit. ARGV: now, ttlPad, cost, reservation, n, then the
 * limits as for `reserve`. Answers 1 when refunded, 0 when not.
 */
const refund = `${prelude}
local cost = tonumber(ARGV[3])
local reservation = tonumber(ARGV[4])
${stateCode(5)}
if not state then return 0 end
local last_id, latest, floor = state[2], state[3], state[4]
if reservation ~= latest or reservation <= floor then return 0 end
for i = 1, n do
  local spec, st = specs[i], states[i]
  if spec.algo == "g" then
    st.tat = st.tat - cost * (spec.window / spec.limit)
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, now)
    st.count = math.max(0, st.count - cost)
  else
    local len = redis.call("LLEN", spec.log)
    local remove = math.min(cost, len)
    if remove > 0 then redis.call("LTRIM", spec.log, 0, -(remove + 1)) end
  end
end
save(last_id, latest - 1, floor)
return 1
`

/** KEYS: the state. ARGV: now, ttlPad, millis. Extends the pause, never shortens it. */
const pause = `${prelude}
local millis = tonumber(ARGV[3])
if not state then
  local id = first_id()
  state = { 0, id, id, id, NEG }
end
state[5] = math.max(state[5], now + millis)
-- the rest of the state may need longer than the pause
local ttl = math.max(redis.call("PTTL", state_key), math.max(1, math.ceil(state[5] - now)) + pad)
redis.call("SET", state_key, cmsgpack.pack(state), "PX", ttl)
return 1
`

/** KEYS: the state. ARGV: now, ttlPad. Answers the milliseconds left of the pause. */
const readPause = `${prelude}
if not state then return 0 end
return out(math.max(0, state[5] - now))
`

/** @internal */
export const scripts = { reserve, refund, pause, readPause } as const

/** @internal */
export type ScriptName = keyof typeof scripts
