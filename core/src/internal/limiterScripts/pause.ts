/**
 * The key's pause: setting and reading it.
 *
 * @internal
 */
import { clock, helpers } from "./common.js"

/**
 * KEYS: the state. ARGV: now, ttlPad, millis. Extends the pause, never shortens it (a pause that
 * would not end later changes nothing). Reservations already made stand: their callers are held
 * until the pause ends. A GCRA limit with callers still waiting (its theoretical arrival time minus
 * `burst × T` is after now) moves its schedule past the pause by the extension, so that new
 * reservations queue after the held callers (`Algorithm`'s `postpone`); the limit's parameters
 * are read back from its signature.
 */
export const pause = `${clock}${helpers}
local state_key = KEYS[1]
local until_at = now + tonumber(ARGV[3])
local raw = redis.call("GET", state_key)
local expire = until_at
if raw then
  local n, id, latest, floor, pause, born, pos = struct.unpack(HEADER, raw)
  local extension = until_at - math.max(now, pause)
  if extension <= 0 then return 1 end
  local records = {}
  for i = 1, n do
    local a, b, c, d, p, sig
    a, b, c, d, p, sig, pos = struct.unpack(LIMIT, raw, pos)
    local limit, window, burst = string.match(sig, "^g:([^:]+):([^:]+):([^:]+)$")
    if limit and a - tonumber(burst) * (tonumber(window) / tonumber(limit)) > now then
      -- the schedule moves, and so does what the limit was charged (settle's bound reads it)
      a = a + extension
      c = c + extension
      d = math.max(d, now)
      if a > expire then expire = a end
    end
    records[i] = struct.pack(LIMIT, a, b, c, d, p, sig)
  end
  local packed = { struct.pack(HEADER, n, id, latest, floor, until_at, born), unpack(records) }
  raw = table.concat(packed)
else
  local id = first_id()
  raw = struct.pack(HEADER, 0, id, id, id, until_at, id)
end
-- the rest of the state may need longer than the pause (which is why the TTL only grows, and a
-- TTL a GCRA record says covers it still does)
local ttl = math.max(redis.call("PTTL", state_key), ttl_until(expire))
redis.call("SET", state_key, raw, "PX", ttl)
return 1
`

/** KEYS: the state. ARGV: now, ttlPad. Answers the milliseconds left of the pause. */
export const readPause = `${clock}${helpers}
local raw = redis.call("GET", KEYS[1])
if not raw then return 0 end
local _, _, _, _, pause = struct.unpack(HEADER, raw)
return out(math.max(0, pause - now))
`
