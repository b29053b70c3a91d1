/**
 * What an upstream's response headers said about its limits: the state moves down to it, never up
 * (`RateLimiterStore`'s `tighten`).
 *
 * @internal
 */
import { clock, helpers, stateCode } from "./common.js"

/**
 * KEYS: the state, then one log key per limit. ARGV: now, ttlPad, n, the limits as for `reserve`,
 * then per observation the limit's index (from 0), `remaining` and `resetAfter` (milliseconds).
 * Each step only delays future starts; with `r = remaining` and `T = window / limit`:
 *
 * - GCRA: at most `r` units may start now, `tat = max(tat, now + (burst − r)·T)`, and the limit's
 *   `latest` moves up to that `tat` (what a settle may give back never undoes it).
 * - fixed window: at most `r` more units in the current window, `count = max(count, limit − r)`.
 * - sliding window: as many units as leave at most `r` in the window ending now are logged at
 *   `max(now, latest logged start)`.
 * - `r = 0` with a reset: no start charging that limit before `now + resetAfter` (the limit's own
 *   pause; extends, never shortens).
 *
 * Answers 1.
 */
export const tighten = `${clock}${helpers}
${stateCode(3)}
local tail = 3 + 5 * n
local changed = false
for j = 0, (#ARGV - tail) / 3 - 1 do
  local i = tonumber(ARGV[tail + 3 * j + 1]) + 1
  local spec, st = specs[i], states[i]
  local r = math.max(0, math.min(tonumber(ARGV[tail + 3 * j + 2]), spec.limit))
  local reset_after = tonumber(ARGV[tail + 3 * j + 3])
  if spec.algo == "g" then
    local target = now + (spec.burst - math.min(r, spec.burst)) * (spec.window / spec.limit)
    if target > st.tat then st.tat = target end
    st.latest = math.max(st.latest, target)
    changed = true
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, now)
    if spec.limit - r > st.count then
      st.count = spec.limit - r
      changed = true
    end
  else
    -- the units logged in (now − window, now], from the newest down
    local log = redis.call("LRANGE", spec.log, 0, -1)
    local in_window = 0
    for k = #log, 1, -1 do
      local t = tonumber(log[k])
      if t <= now - spec.window then break end
      if t <= now then in_window = in_window + 1 end
    end
    local missing = spec.limit - r - in_window
    if missing > 0 then
      log_units(spec, st, last_logged(spec), missing)
      changed = true
    end
  end
  if r == 0 and reset_after > 0 and now + reset_after > st.paused then
    st.paused = now + reset_after
    changed = true
  end
end
if changed then save() end
return 1
`
