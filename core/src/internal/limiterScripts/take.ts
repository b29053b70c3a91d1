/**
 * The decision of a start: `reserveGcra` (a single GCRA limit) and `reserve` (any limits).
 *
 * @internal
 */
import { clock, fixedSlot, helpers, stateCode } from "./common.js"

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
 * increments, computed by the caller with `Algorithm`'s own expressions (so they are the same
 * doubles): `(cost - burst) × T`, which the earliest start adds to the theoretical arrival time,
 * and `cost × T`, which the start adds to it (`T` = window / limit).
 *
 * Answers like `reserve`, but a start that may happen at once as `{id, charged}` (the charged
 * total after it, which a settle's give back reads), the cheapest reply that carries it.
 */
export const reserveGcra = `${clock}
local key, sig = KEYS[1], ARGV[4]
local raw = redis.call("GET", key)
local id, latest, floor, pause, born
local tat, charged, last_start, paused = -math.huge, 0, -math.huge, -math.huge
-- the instant until which the key's current TTL keeps it (0: unknown, as the other scripts write)
local covered = 0
if raw then
  local n, stored_sig
  -- the header (48 bytes), then the first limit's record: none when only a pause was written
  if #raw > 48 then
    n, id, latest, floor, pause, born, tat, covered, charged, last_start, paused, stored_sig =
      struct.unpack("<ddddddddddds", raw)
    -- a limit whose parameters changed starts afresh: its old state measures something else
    if stored_sig ~= sig then tat, covered, charged, last_start, paused = -math.huge, 0, 0, -math.huge, -math.huge end
  else
    n, id, latest, floor, pause, born = struct.unpack("<dddddd", raw)
  end
else
  -- fresh()
  id = math.max(0, math.floor(now)) * 1000
  latest, floor, pause, born = id, id, -math.huge, id
end

-- from = max(now, pause); earliest() for GCRA and the limit's own pause; the binding limit
local start = now
if pause > start then start = pause end
local binding = -1
local earliest = tat + tonumber(ARGV[5])
if paused > earliest then earliest = paused end
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
local advance = tonumber(ARGV[6])
if start > tat then tat = start end
tat = tat + advance
charged = charged + advance
if start > last_start then last_start = start end
if latest ~= id then floor = id end
id = id + 1
local expire = tat
if pause > expire then expire = pause end
if paused > expire then expire = paused end
-- Redis keeps a key through the whole millisecond of its expiry, so a TTL of ceil(expire - now)
-- covers until now + ttl: takes whose state expires before that keep it. (On the client clock the
-- TTL is padded and runs on another clock than the decisions: always set then.)
if expire <= covered and pad == 0 then
  redis.call("SET", key,
    struct.pack("<ddddddddddds", 1, id, id, floor, pause, born, tat, covered, charged, last_start, paused, sig),
    "KEEPTTL")
else
  -- (at most 10^14 - 1 in all: Redis' Lua writes larger numbers in exponent notation, no expiry)
  local ttl = math.min(math.max(1, math.ceil(expire - now)), 99999999999999 - pad)
  redis.call("SET", key,
    struct.pack("<ddddddddddds", 1, id, id, floor, pause, born, tat, now + ttl, charged, last_start, paused, sig),
    "PX", ttl + pad)
end
-- at once: the id and the charged total after it (what a settle gives back by), the cheapest array
if delay == 0 then return { id, string.format("%.17g", charged) } end
local left = pause - now
if left < 0 then left = 0 end
return {
  "R", string.format("%.17g", delay), id, string.format("%.17g", left), string.format("%.17g", start), 0,
  string.format("%.17g", charged)
}
`

/**
 * KEYS: the state, then one log key per limit. ARGV: now, ttlPad, maxWait (-1: none), n, then per
 * limit algorithm (`g`, `f`, `s`), limit, window (ms), burst and its signature (the four joined
 * with `:`, built once by the caller), then the cost on each limit. A limit charged 0 neither
 * delays the start nor is charged; a limit paused by `tighten` holds every start it charges.
 *
 * Answers `{"R", delay, id, paused, start, points..., charged...}` when reserved (`paused`: what is
 * left of the key's pause, which the limiter holds its earlier callers for; then the restore
 * values `refund` and `settle` read: the start on the deciding clock, each limit's restore point,
 * each GCRA limit's charged total after this reservation), or `{"X", delay, retryAfter, binding}`
 * when it is refused (binding from 0, -1: the pause).
 */
export const reserve = `${clock}${helpers}
local max_wait = tonumber(ARGV[3])
${stateCode(4)}
${fixedSlot}
local costs = {}
for i = 1, n do costs[i] = tonumber(ARGV[4 + 5 * n + i]) end
local function earliest(spec, st, at, cost)
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
  local e = NEG
  -- a limit charged 0 is skipped; one paused by tighten holds the starts it charges
  if costs[i] > 0 then e = math.max(earliest(specs[i], states[i], from, costs[i]), states[i].paused) end
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
  local spec, st, cost = specs[i], states[i], costs[i]
  if cost == 0 then
    -- charged nothing: the state stays as it was
  elseif spec.algo == "g" then
    local advance = cost * (spec.window / spec.limit)
    st.tat = math.max(st.tat, start) + advance
    st.charged = st.charged + advance
    st.latest = math.max(st.latest, start)
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, now)
    local first = (math.floor(start / spec.window) - st.base) * spec.limit
    if st.count < first then
      st.count = first + cost
    else
      st.count = fixed_slot(spec.limit, st.count, cost) + cost
    end
  else
    log_units(spec, st, start, cost)
  end
end

fresh()
if latest ~= last_id then floor = last_id end
last_id = last_id + 1
latest = last_id
save()
-- after the points, what settle needs to give back on GCRA: each limit's charged total after this
for i = 1, n do
  local st = states[i]
  if specs[i].algo == "g" then points[n + i] = out(st.charged) else points[n + i] = 0 end
end
return { "R", out(delay), last_id, out(math.max(0, pause - now)), out(start), unpack(points) }
`
