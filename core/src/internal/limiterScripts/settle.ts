/**
 * Settling a reservation with the usage the upstream reported: the difference per limit, in one
 * step (`RateLimiterStore`'s `settle`).
 *
 * @internal
 */
import { clock, helpers, stateCode } from "./common.js"

/**
 * KEYS: the state, then one log key per limit. ARGV: now, ttlPad, reservation, n, the limits as
 * for `reserve`, what the reservation charged each limit, the actual usage on each limit, then the
 * reservation's restore values as `reserve` answered them (none when it answered none). With
 * `T = window / limit` and `d = actual − reserved`:
 *
 * - `d > 0`, a debt that later starts pay: GCRA `tat = max(tat, now) + d·T`; a fixed window counts
 *   `d` more units after everything reserved; a sliding window logs `d` units at `max(now, latest
 *   logged start)`. A debt seals the key's earlier reservations for `refund` (a window's roll back
 *   would erase it).
 * - `d < 0`, given back only where no extra start can follow: GCRA `tat = max(tat − |d|·T, latest
 *   + charged − chargedAfter)` (never above `tat`), `chargedAfter` from the restore values
 *   (without them, nothing); a fixed window while the reservation's window is the current
 *   one and nothing is reserved in a later one; a sliding window drops `|d|` units logged at the
 *   reservation's start, if still there. A reservation from an earlier life of the key (at or
 *   below `born`) gives nothing back.
 *
 * Answers 1.
 */
export const settle = `${clock}${helpers}
local reservation = tonumber(ARGV[3])
${stateCode(4)}
local tail = 4 + 5 * n
local restore = {}
for j = 1, #ARGV - (tail + 2 * n) do
  local v = tonumber(ARGV[tail + 2 * n + j])
  if v ~= v then v = nil end
  restore[j] = v
end
local start = restore[1]
local own_life = born ~= nil and reservation > born
local changed, debt = false, false

for i = 1, n do
  local spec, st = specs[i], states[i]
  local d = tonumber(ARGV[tail + n + i]) - tonumber(ARGV[tail + i])
  local interval = spec.window / spec.limit
  if d > 0 then
    debt, changed = true, true
    if spec.algo == "g" then
      st.tat = math.max(st.tat, now) + d * interval
      st.charged = st.charged + d * interval
      st.latest = math.max(st.latest, now)
    elseif spec.algo == "f" then
      normalize_fixed(spec, st, now)
      st.count = st.count + d
    else
      log_units(spec, st, last_logged(spec), d)
    end
  elseif d < 0 and own_life then
    if spec.algo == "g" then
      local after = restore[1 + n + i]
      if after ~= nil then
        local lowered = math.min(st.tat, math.max(st.tat + d * interval, st.latest + st.charged - after))
        if lowered < st.tat then
          st.tat = lowered
          changed = true
        end
      end
    elseif start ~= nil and spec.algo == "f" then
      normalize_fixed(spec, st, now)
      if math.floor(start / spec.window) == st.base and st.count <= spec.limit and st.count > 0 then
        st.count = math.max(0, st.count + d)
        changed = true
      end
    elseif start ~= nil and start > now - spec.window then
      -- the reservation's own units, where the log still has them (below a trimmed log's start
      -- they are gone: keep \`limit\` units then, the only ones ever read)
      local remove = -d
      if st.trimmed > now - spec.window then remove = math.min(remove, redis.call("LLEN", spec.log) - spec.limit) end
      if remove > 0 and redis.call("LREM", spec.log, -remove, string.format("%.17g", start)) > 0 then changed = true end
    end
  end
end
if not changed then return 1 end
fresh()
if debt then
  -- sealed: no roll back may erase the debt
  floor, latest = last_id, last_id
end
save()
return 1
`
