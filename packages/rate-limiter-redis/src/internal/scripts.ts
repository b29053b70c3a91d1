/**
 * The Lua scripts of the Redis store: one script per operation, each one round trip and atomic.
 *
 * They transcribe `@sluice/rate-limiter`'s `internal/algorithm.ts` and `internal/memoryStore.ts`
 * line for line, so a decision made in Redis is the decision the memory store would make on the
 * same clock (the contract suite checks it to the millisecond).
 *
 * Layout, for a limiter key `k` under the prefix `p` (all keys share the hash tag `{k}`, so they sit
 * in one Redis Cluster slot and one script may touch them all; `v1` names this layout, and a
 * release that changes it changes the name):
 *
 * - `p{k}:v1`: the limiter's state, one binary string written with the `struct` library built into
 *   Redis' Lua: a header of five little-endian doubles — the number of limits, the reservation
 *   counters (last id given, latest live id, floor) and the pause (an instant of the deciding
 *   clock, `-inf` for none) — then per limit two doubles (GCRA's theoretical arrival time and the
 *   instant the key's TTL is known to cover, 0 when unknown; a fixed window's base index and count;
 *   a sliding window's latest unit dropped from its log while still in a window) and its signature (`algorithm:limit:window:burst`, zero-terminated). Doubles
 *   round-trip exactly, and fixed-width fields decode into locals with one call and no table: one
 *   GET and one SET per decision, the fewest commands a script can run.
 * - `p{k}:v1:log:<i>`: limit `i`'s log of start times when it is a sliding window (a list, oldest
 *   first, written with `%.17g`): every unit still in a window, at most `limit + 4096` of them, so
 *   that a roll back finds the units below it.
 * - `p{k}:v1:cancelled`: the reservations cancelled below the latest one (`refund`'s).
 *
 * Every write sets a TTL: the time until the state can no longer change a decision (the bucket is
 * full again, the last window is over, the log has slid out, the pause is over), plus `ttlPad`.
 * `reserveGcra` keeps the TTL instead (`KEEPTTL`) when the one set before already covers the new
 * state: the setting of an expiry is the dearest part of a SET, and the takes that share a
 * millisecond on a busy key share one.
 *
 * Replies carry whole numbers as integers and others as exact decimal strings (Redis truncates a
 * Lua number to an integer). `reserve` answers a start that may happen at once with the bare
 * reservation id: the most common answer costs neither Redis nor the client an array.
 *
 * ARGV of every script starts with `now` (milliseconds; empty: read the server's `TIME`) and
 * `ttlPad` (milliseconds added to every TTL; 0 on the server's clock).
 *
 * @internal
 */

/** The deciding instant (the server's `TIME`, or the caller's clock for the contract suite). */
const clock = `
local now = ARGV[1]
if now == "" then
  local t = redis.call("TIME")
  now = t[1] * 1000 + t[2] / 1000
else
  now = tonumber(now)
end
local pad = tonumber(ARGV[2])
`

const helpers = `
local EPS = 0.001
local NEG = -math.huge
-- algorithm.ts' MAX_ROLLBACK_UNITS and ledger.ts' MAX_CANCELLED_RUNS
local MAX_ROLLBACK_UNITS = 4096
local MAX_CANCELLED_RUNS = 1024
-- the state's header (limits, last id, latest live id, floor, pause) and one limit's record
local HEADER = "<ddddd"
local HEADER_BYTES = 40
local LIMIT = "<dds"
-- the header, then the first limit's record
local HEADER_AND_LIMIT = "<ddddddds"
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
local function ttl_until(at)
  return math.max(1, math.ceil(at - now)) + pad
end
`

/**
 * The common decision on its own: a limiter with a single GCRA limit, whatever the cost, the wait
 * budget or the pause. It reads and writes the state `reserve` does and decides exactly as
 * `reserve` would, with the three commands every decision needs (TIME, GET, SET) and nothing else
 * that costs: the header and the limit's record are unpacked straight into locals, and the script
 * creates no table, no closure and no string but the state it writes. Every take of such a
 * limiter runs it, so it is written for Redis' time rather than to share code (the helpers the
 * other scripts share cost it a sixth of its time); its comments map it to `reserve`.
 *
 * KEYS: the state. ARGV: now, ttlPad, maxWait (-1: none), the limit's signature, then GCRA's two
 * increments, computed by the caller with `algorithm.ts`' own expressions (so they are the same
 * doubles): `(cost - burst) × T`, which the earliest start adds to the theoretical arrival time,
 * and `cost × T`, which the start adds to it (`T` = window / limit).
 *
 * Answers like `reserve`.
 */
const reserveGcra = `${clock}
local key, sig = KEYS[1], ARGV[4]
local raw = redis.call("GET", key)
local id, latest, floor, pause
local tat = -math.huge
-- the instant until which the key's current TTL keeps it (0: unknown, as the other scripts write)
local covered = 0
if raw then
  local n, stored_sig
  -- the header (40 bytes), then the first limit's record: none when only a pause was written
  if #raw > 40 then
    n, id, latest, floor, pause, tat, covered, stored_sig = struct.unpack("<ddddddds", raw)
    -- a limit whose parameters changed starts afresh: its old state measures something else
    if stored_sig ~= sig then tat, covered = -math.huge, 0 end
  else
    n, id, latest, floor, pause = struct.unpack("<ddddd", raw)
  end
else
  -- first_id()
  id = math.max(0, math.floor(now)) * 1000
  latest, floor, pause = id, id, -math.huge
end

-- from = max(now, pause); earliest() for GCRA; the binding limit
local start = now
if pause > start then start = pause end
local binding = -1
local earliest = tat + tonumber(ARGV[5])
if earliest > start + 0.001 then
  start = earliest
  binding = 0
end
local delay = start - now
-- (no budget is exceeded by a start within a microsecond: the budget is read only when it may be)
if delay > 0.001 then
  local max_wait = tonumber(ARGV[3])
  if max_wait >= 0 and delay > max_wait + 0.001 then
    -- a delay goes back as an exact decimal string, whole or not: the client reads both alike
    return { "X", string.format("%.17g", delay), string.format("%.17g", delay - max_wait), binding }
  end
end

-- commit, the reservation counters, then save() with the TTL until the bucket is full again
if start > tat then tat = start end
tat = tat + tonumber(ARGV[6])
if latest ~= id then floor = id end
id = id + 1
local expire = tat
if pause > expire then expire = pause end
-- Redis keeps a key through the whole millisecond of its expiry, so a TTL of ceil(expire - now)
-- covers until now + ttl: takes whose state expires before that keep it. (On the client clock the
-- TTL is padded and runs on another clock than the decisions: always set then.)
if expire <= covered and pad == 0 then
  redis.call("SET", key, struct.pack("<ddddddds", 1, id, id, floor, pause, tat, covered, sig), "KEEPTTL")
else
  local ttl = math.ceil(expire - now)
  if ttl < 1 then ttl = 1 end
  redis.call("SET", key, struct.pack("<ddddddds", 1, id, id, floor, pause, tat, now + ttl, sig), "PX", ttl + pad)
end
if delay == 0 then return id end
local paused = pause - now
if paused < 0 then paused = 0 end
return { "R", string.format("%.17g", delay), id, string.format("%.17g", paused), string.format("%.17g", start) }
`

/**
 * Reads the state and the specs (`n` at ARGV[first]), resetting a limit whose spec changed.
 * `last_id`, `latest`, `floor` and `pause` come from the header; `states[i]` holds GCRA's `tat`,
 * or a fixed window's `base` and `count`.
 */
const stateCode = (first: number): string => `
local state_key = KEYS[1]
local raw = redis.call("GET", state_key)
local stored_n, last_id, latest, floor, pause, pos = 0, nil, nil, nil, NEG, 1
if raw then stored_n, last_id, latest, floor, pause, pos = struct.unpack(HEADER, raw) end
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
  local x, y, sig = 0, 0, nil
  if i <= stored_n then x, y, sig, pos = struct.unpack(LIMIT, raw, pos) end
  local same = sig == spec.sig
  local st = {}
  if spec.algo == "g" then
    st.tat = NEG
    if same then st.tat = x end
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

-- Writes the state with a TTL: until no part of it can change a decision any more.
local function save(id, latest, floor)
  local packed = { struct.pack(HEADER, n, id, latest, floor, pause) }
  local expire = pause
  for i = 1, n do
    local spec, st = specs[i], states[i]
    local at
    if spec.algo == "g" then
      packed[i + 1] = struct.pack(LIMIT, st.tat, 0, spec.sig)
      at = st.tat
    elseif spec.algo == "f" then
      packed[i + 1] = struct.pack(LIMIT, st.base, st.count, spec.sig)
      at = NEG
      if st.base ~= NEG then at = (st.base + math.ceil(st.count / spec.limit)) * spec.window end
    else
      packed[i + 1] = struct.pack(LIMIT, st.trimmed, 0, spec.sig)
      at = NEG
      local last = redis.call("LINDEX", spec.log, -1)
      if last then
        at = tonumber(last) + spec.window
        redis.call("PEXPIRE", spec.log, ttl_until(at))
      end
    end
    if at > expire then expire = at end
  end
  redis.call("SET", state_key, table.concat(packed), "PX", ttl_until(expire))
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
 * Answers the reservation id when the start may happen at once, `{"R", delay, id, paused}` when
 * it is later (`paused`: what is left of the key's pause, which the limiter holds its earlier
 * callers for), or `{"X", delay, retryAfter, binding}` when it is refused (binding from 0, -1: the
 * pause).
 */
const reserve = `${clock}${helpers}
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

-- restorePoint(): what a refund needs to restore a fixed window exactly
local points = {}
for i = 1, n do
  local spec, st = specs[i], states[i]
  points[i] = 0
  if spec.algo == "f" then
    normalize_fixed(spec, st, now)
    local point = st.base * spec.limit + st.count
    -- beyond 2^53 a double is not exact: no point (the client reads "none" as NaN), cost only
    if math.abs(point) < 9007199254740992 then points[i] = out(point) else points[i] = "none" end
  end
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
    for j = 1, cost do times[j] = string.format("%.17g", start) end
    redis.call("RPUSH", spec.log, unpack(times))
    -- a unit that left the window can never count again, whatever is rolled back above it
    local horizon = now - spec.window
    while true do
      local head = redis.call("LINDEX", spec.log, 0)
      if not head or tonumber(head) > horizon then break end
      redis.call("LPOP", spec.log)
    end
    local capacity = spec.limit + MAX_ROLLBACK_UNITS
    local len = redis.call("LLEN", spec.log)
    if len > capacity then
      st.trimmed = tonumber(redis.call("LINDEX", spec.log, len - capacity - 1))
      redis.call("LTRIM", spec.log, -capacity, -1)
    end
  end
end

if not raw then
  last_id = first_id()
  latest, floor = last_id, last_id
end
if latest ~= last_id then floor = last_id end
last_id = last_id + 1
save(last_id, last_id, floor)
if delay == 0 then return last_id end
return { "R", out(delay), last_id, out(math.max(0, pause - now)), out(start), unpack(points) }
`

/**
 * `ledger.ts`' `cancel` and `algorithm.ts`' `rollback`. KEYS: the state, one log key per limit,
 * then the cancelled runs. ARGV: now, ttlPad, cost, reservation, n, the limits as for `reserve`,
 * then the reservation's restore values as `reserve` answered them (none when it answered none).
 * Answers 1 when something went back now, 0 when not (the reservation may be remembered).
 *
 * The cancelled runs are one binary string: their count and `n`, then per run `lo`, `hi`, `cost`,
 * `at` and `n` restore points, as doubles.
 */
const refund = `${clock}${helpers}
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

/**
 * KEYS: the state. ARGV: now, ttlPad, millis. Extends the pause, never shortens it (a pause that
 * would not end later changes nothing). Reservations already made stand: their callers are held
 * until the pause ends. A GCRA limit with callers still waiting (its theoretical arrival time minus
 * `burst × T` is after now) moves its schedule past the pause by the extension, so that new
 * reservations queue after the held callers (`algorithm.ts`' `postpone`); the limit's parameters
 * are read back from its signature.
 */
const pause = `${clock}${helpers}
local state_key = KEYS[1]
local until_at = now + tonumber(ARGV[3])
local raw = redis.call("GET", state_key)
local expire = until_at
if raw then
  local n, id, latest, floor, pause, pos = struct.unpack(HEADER, raw)
  local extension = until_at - math.max(now, pause)
  if extension <= 0 then return 1 end
  local packed = { struct.pack(HEADER, n, id, latest, floor, until_at) }
  for i = 1, n do
    local a, b, sig
    a, b, sig, pos = struct.unpack(LIMIT, raw, pos)
    local limit, window, burst = string.match(sig, "^g:([^:]+):([^:]+):([^:]+)$")
    if limit and a - tonumber(burst) * (tonumber(window) / tonumber(limit)) > now then
      a = a + extension
      if a > expire then expire = a end
    end
    packed[i + 1] = struct.pack(LIMIT, a, b, sig)
  end
  raw = table.concat(packed)
else
  local id = first_id()
  raw = struct.pack(HEADER, 0, id, id, id, until_at)
end
-- the rest of the state may need longer than the pause (which is why the TTL only grows, and a
-- TTL a GCRA record says covers it still does)
local ttl = math.max(redis.call("PTTL", state_key), ttl_until(expire))
redis.call("SET", state_key, raw, "PX", ttl)
return 1
`

/** KEYS: the state. ARGV: now, ttlPad. Answers the milliseconds left of the pause. */
const readPause = `${clock}${helpers}
local raw = redis.call("GET", KEYS[1])
if not raw then return 0 end
local _, _, _, _, pause = struct.unpack(HEADER, raw)
return out(math.max(0, pause - now))
`

/** @internal */
export const scripts = { reserveGcra, reserve, refund, pause, readPause } as const

/** @internal */
export type ScriptName = keyof typeof scripts
