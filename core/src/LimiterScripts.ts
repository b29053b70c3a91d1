/**
 * The Lua scripts of the Redis store: one script per operation, each one round trip and atomic.
 *
 * They transcribe `Algorithm`, `Ledger` and `Settlement` (as `@sluice/rate-limiter`'s memory store runs them)
 * line for line, so a decision made in Redis is the decision the memory store would make on the
 * same clock (the contract suite checks it to the millisecond).
 *
 * Layout, for a limiter key `k` under the prefix `p` (all keys share the hash tag `{k}`, so they sit
 * in one Redis Cluster slot and one script may touch them all; `v2` names this layout, and a
 * release that changes it changes the name):
 *
 * - `p{k}:v2`: the limiter's state, one binary string written with the `struct` library built into
 *   Redis' Lua: a header of six little-endian doubles — the number of limits, the reservation
 *   counters (last id given, latest live id, floor), the pause (an instant of the deciding clock,
 *   `-inf` for none) and `born` (the ids of this life of the key start above it) —
 *   then per limit four doubles (GCRA's theoretical arrival time, the instant the key's TTL is
 *   known to cover (0 when unknown), the running total it was ever charged and the latest instant
 *   its schedule was decided from; a fixed window's base index and count; a sliding window's
 *   latest unit dropped from its log while still in a window), the limit's own pause (`tighten`'s)
 *   and its signature (`algorithm:limit:window:burst`, zero-terminated). Doubles round-trip
 *   exactly, and fixed-width fields decode into locals with one call and no table: one GET and one
 *   SET per decision, the fewest commands a script can run.
 * - `p{k}:v2:log:<i>`: limit `i`'s log of start times when it is a sliding window (a list, oldest
 *   first, written with `%.17g`): every unit still in a window, at most `limit + 4096` of them, so
 *   that a roll back finds the units below it.
 * - `p{k}:v2:cancelled`: the reservations cancelled below the latest one (`refund`'s).
 *
 * Every write sets a TTL: the time until the state can no longer change a decision (the bucket is
 * full again, the last window is over, the log has slid out, the pause is over), plus `ttlPad`.
 * `reserveGcra` keeps the TTL instead (`KEEPTTL`) when the one set before already covers the new
 * state: the setting of an expiry is the dearest part of a SET, and the takes that share a
 * millisecond on a busy key share one.
 *
 * Replies carry whole numbers as integers and others as exact decimal strings (Redis truncates a
 * Lua number to an integer).
 *
 * ARGV of every script starts with `now` (milliseconds; empty: read the server's `TIME`) and
 * `ttlPad` (milliseconds added to every TTL; 0 on the server's clock).
 *
 * One module per concept under `internal/limiterScripts/`, plain strings importing nothing.
 *
 * @since 0.1.0
 */
import { pause, readPause } from "./internal/limiterScripts/pause.js"
import { refund } from "./internal/limiterScripts/refund.js"
import { settle } from "./internal/limiterScripts/settle.js"
import { reserve, reserveGcra } from "./internal/limiterScripts/take.js"
import { tighten } from "./internal/limiterScripts/tighten.js"

/** @since 0.1.0 */
export const scripts = { reserveGcra, reserve, refund, settle, tighten, pause, readPause } as const

/** @since 0.1.0 */
export type ScriptName = keyof typeof scripts
