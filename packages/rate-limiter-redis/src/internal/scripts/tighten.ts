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
  local r = tonumber(ARGV[tail + 3 * j + 2])
  local reset_after = tonumber(ARGV[tail + 3 * j + 3])
  local spec, st = specs[i], states[i]
  if spec.algo == "g" then
    local target = now + (spec.burst - r) * (spec.window / spec.limit)
    if target > st.tat then
      st.tat = target
      st.latest = math.max(st.latest, target)
      changed = true
    end
  elseif spec.algo == "f" then
    normalize_fixed(spec, st, now)
    if spec.limit - r > st.count then
      st.count = spec.limit - r
      changed = true
    end
  else
    local len = redis.call("LLEN", spec.log)
    local gone = 0
    while gone < len and tonumber(redis.call("LINDEX", spec.log, gone)) <= now - spec.window do gone = gone + 1 end
    local missing = spec.limit - r - (len - gone)
    if missing > 0 then
      local at = now
      if len > 0 then at = math.max(at, tonumber(redis.call("LINDEX", spec.log, -1))) end
      local text = string.format("%.17g", at)
      while missing > 0 do
        local times = {}
        for k = 1, math.min(missing, 1000) do times[k] = text end
        redis.call("RPUSH", spec.log, unpack(times))
        missing = missing - #times
      end
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
