/**
 * What the Redis limiter store sends and reads back, on plain values: key names, each script's
 * arguments (encoded once per limiter) and the decoding of replies. The scripts themselves are
 * `LimiterScripts`; the binding runs them and reads the clock. `writeBatcher` groups the commands
 * of one tick into few socket writes.
 *
 * @since 0.1.0
 */
import type { LimitSpec } from "./Algorithm.js"
import type { Observation } from "./MemoryStore.js"

/**
 * A reserve as the scripts answer it. `restore` is absent from a script that could not record
 * one; `pausedMillis` from the fast answer, which is never paused.
 *
 * @since 0.1.0
 * @category replies
 */
export type ReserveReply =
  | {
    readonly _tag: "Reserved"
    readonly delayMillis: number
    readonly reservation: number
    readonly pausedMillis?: number | undefined
    readonly restore?: ReadonlyArray<number> | undefined
  }
  | {
    readonly _tag: "Refused"
    readonly delayMillis: number
    readonly retryAfterMillis: number
    readonly binding: number
  }

/**
 * The layout of the stored state (see `@sluice/core/LimiterScripts`), part of every key's name: a release that
 * stores another layout uses other keys, so no process ever reads state it would misread.
 *
 * @since 0.1.0
 */
export const STATE_FORMAT = "v2"

/**
 * The key of a limiter's state under `prefix`.
 *
 * @since 0.1.0
 */
export const stateKeyOf = (prefix: string, key: string): string => `${prefix}{${key}}:${STATE_FORMAT}`

/**
 * The key's cancelled runs (see `@sluice/core/Ledger`), read and written by `refund` only.
 *
 * @since 0.1.0
 */
export const runsKeyOf = (prefix: string, key: string): string => `${stateKeyOf(prefix, key)}:cancelled`

/**
 * The keys of one limiter: its state, then one log key per limit (used by sliding windows). They
 * share the hash tag `{key}`, so Redis Cluster puts them in one slot.
 *
 * @since 0.1.0
 */
export const keysOf = (prefix: string, key: string, limits: number): Array<string> => {
  const state = stateKeyOf(prefix, key)
  const keys = [state]
  for (let i = 1; i <= limits; i++) keys.push(`${state}:log:${i}`)
  return keys
}

/**
 * An algorithm as the scripts name it: one letter.
 *
 * @since 0.1.0
 */
export const algorithmCode = (algorithm: LimitSpec["algorithm"]): string =>
  algorithm === "gcra" ? "g" : algorithm === "fixed-window" ? "f" : "s"

/**
 * A limiter's limits as its commands carry them, encoded once per array: a limiter passes the same
 * array with every take, so a take re-encodes nothing.
 *
 * @since 0.1.0
 */
export interface Encoded {
  /** For every script but `reserveGcra`: n, then per limit algorithm, limit, window, burst and signature. */
  readonly limitArgs: ReadonlyArray<string>
  /** Set when the limits are a single GCRA limit: `reserveGcra` decides then. */
  readonly gcra: GcraArgs | undefined
  /** The Redis keys of the last key used with these limits (a limiter always uses one key). */
  keys: { readonly key: string; readonly state: string; readonly all: ReadonlyArray<string> } | undefined
}

/**
 * The arguments of `reserveGcra`, for a single GCRA limit.
 *
 * @since 0.1.0
 */
export interface GcraArgs {
  readonly spec: LimitSpec
  readonly signature: string
  /** The increments for `cost` (almost always 1, so computed once), as `reserveGcra` takes them. */
  cost: number
  slack: string
  advance: string
}

/**
 * A limit's fields as the scripts read them: algorithm, limit, window and burst.
 *
 * @since 0.1.0
 */
export const fieldsOf = (spec: LimitSpec): ReadonlyArray<string> => [
  algorithmCode(spec.algorithm),
  String(spec.limit),
  String(spec.windowMillis),
  String(spec.burst)
]

/**
 * A limit as the state records it: a limit whose signature changed starts afresh.
 *
 * @since 0.1.0
 */
export const signatureOf = (spec: LimitSpec): string => fieldsOf(spec).join(":")

/**
 * Encodes a limiter's limits once: its argument list, and the GCRA fast path when it has one.
 *
 * @since 0.1.0
 */
export const encode = (limits: ReadonlyArray<LimitSpec>): Encoded => {
  const limitArgs = [String(limits.length)]
  for (const spec of limits) limitArgs.push(...fieldsOf(spec), signatureOf(spec))
  const gcra: GcraArgs | undefined = limits.length === 1 && limits[0].algorithm === "gcra"
    ? { spec: limits[0], signature: signatureOf(limits[0]), cost: Number.NaN, slack: "", advance: "" }
    : undefined
  return { limitArgs, gcra, keys: undefined }
}

/**
 * GCRA's increments for `cost`, with `@sluice/core/Algorithm`'s own expressions, so that `reserveGcra` adds
 * the very doubles the memory store adds (`String` and Lua's `tonumber` round-trip a double
 * exactly).
 *
 * @since 0.1.0
 */
export const gcraIncrements = (gcra: GcraArgs, cost: number): GcraArgs => {
  if (gcra.cost !== cost) {
    const interval = gcra.spec.windowMillis / gcra.spec.limit
    gcra.slack = String((cost - gcra.spec.burst) * interval)
    gcra.advance = String(cost * interval)
    gcra.cost = cost
  }
  return gcra
}

/**
 * `tighten`'s observations as its ARGV tail: per observation the limit's index, `remaining` and
 * `resetAfter`.
 *
 * @since 0.1.0
 */
export const observationArgs = (observations: ReadonlyArray<Observation>): Array<string> => {
  const args: Array<string> = []
  for (const o of observations) args.push(String(o.limit), String(o.remaining), String(o.resetAfterMillis))
  return args
}

/**
 * Numbers as arguments (none for absent).
 *
 * @since 0.1.0
 */
export const numberArgs = (values: ReadonlyArray<number> | undefined): Array<string> =>
  values === undefined ? [] : values.map(String)

/**
 * A wait as scripts read it: `-1` for no bound.
 *
 * @since 0.1.0
 */
export const maxWaitArgument = (millis: number): string => millis === Number.POSITIVE_INFINITY ? "-1" : String(millis)

/**
 * Scales a quota to the share one process may use alone while Redis is down.
 *
 * @since 0.1.0
 */
export const scaleLimits = (
  limits: ReadonlyArray<LimitSpec>,
  share: number
): ReadonlyArray<LimitSpec> =>
  share === 1 ? limits : limits.map((spec) => {
    const limit = Math.max(1, Math.floor(spec.limit * share))
    const burst = spec.algorithm === "gcra" ? Math.min(limit, Math.max(1, Math.floor(spec.burst * share))) : limit
    return { ...spec, limit, burst }
  })

/**
 * The message of what a Redis call failed with.
 *
 * @since 0.1.0
 */
export const errorText = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/**
 * Whether Redis lost the script cache (`NOSCRIPT`), so the script must be loaded again.
 *
 * @since 0.1.0
 */
export const isNoScript = (cause: unknown): boolean => errorText(cause).startsWith("NOSCRIPT")

/**
 * The caller's clock reading (epoch milliseconds) as the scripts take it: the double, exactly.
 *
 * @since 0.1.0
 */
export const nowArgument = (nowMillis: number): string => String(nowMillis)

// -----------------------------------------------------------------------------
// writes
// -----------------------------------------------------------------------------

/**
 * The part of an ioredis `Redis` client (one server, not a Cluster) that `writeBatcher` uses.
 *
 * @since 0.1.0
 * @category writes
 */
export interface CorkableClient {
  readonly status: string
  readonly stream: { cork(): void; uncork(): void }
}

/**
 * Commands per socket write within a tick: the fastest group size with 64 takes in flight.
 *
 * @since 0.1.0
 * @category writes
 */
export const WRITE_GROUP = 16

/**
 * Batches the commands sent in one tick into a few socket writes: the first command of a tick
 * corks the socket, every `WRITE_GROUP` commands it is flushed and corked again, and the end of
 * the tick (`endOfTick`, the binding's `process.nextTick`) flushes the rest. Each is still one
 * command, one reply and one round trip. On loopback one write system call costs about as much as
 * the rest of a take's client side: batching saves it, and a read in Redis; flushing in groups
 * lets Redis start on the first commands while the client is still writing the next ones. A
 * Cluster (`client` absent) writes to one socket per node: ioredis' own pipelining is the
 * batching there. Call the function it returns before each command.
 *
 * @since 0.1.0
 * @category writes
 */
export const writeBatcher = (
  client: CorkableClient | undefined,
  endOfTick: (flush: () => void) => void
): () => void => {
  if (client === undefined) return () => {}
  let corked: CorkableClient["stream"] | undefined
  let written = 0
  const uncork = () => {
    const stream = corked
    corked = undefined
    written = 0
    stream?.uncork()
  }
  return () => {
    // not connected: the command fails at once anyway (no offline queue)
    if (client.status !== "ready") return
    if (corked !== undefined) {
      if (++written >= WRITE_GROUP) {
        corked.uncork()
        corked.cork()
        written = 0
      }
      return
    }
    corked = client.stream
    corked.cork()
    // after every fiber resumed in this tick has had its turn (Effect resumes fibers on microtasks)
    endOfTick(uncork)
  }
}

// -----------------------------------------------------------------------------
// replies
// -----------------------------------------------------------------------------

/**
 * What a decoder answers for a reply it does not recognise.
 *
 * @since 0.1.0
 */
export const invalid: unique symbol = Symbol("invalid reply")

/**
 * Reads a reply, or answers `invalid`.
 *
 * @since 0.1.0
 */
export type Decoder<A> = (reply: unknown) => A | typeof invalid

/**
 * A reserve's reply: the fast answer `[id, charged]`, `R` (reserved) or `X` (refused).
 *
 * @since 0.1.0
 */
export const decodeReserve: Decoder<ReserveReply> = (reply) => {
  if (Array.isArray(reply)) {
    // the common answer: a start that may happen at once (so not paused) on a single GCRA limit, as
    // its id and charged total (its start is the server's now, which no caller reads)
    if (typeof reply[0] === "number") {
      return { _tag: "Reserved", delayMillis: 0, reservation: reply[0], restore: [Number.NaN, 0, Number(reply[1])] }
    }
    if (reply[0] === "R") {
      return {
        _tag: "Reserved",
        delayMillis: Number(reply[1]),
        reservation: Number(reply[2]),
        pausedMillis: Number(reply[3]),
        // the start, each limit's restore point and charged total: what refund and settle read
        restore: reply.length > 4 ? reply.slice(4).map(Number) : undefined
      }
    }
    if (reply[0] === "X") {
      return {
        _tag: "Refused",
        delayMillis: Number(reply[1]),
        retryAfterMillis: Number(reply[2]),
        binding: Number(reply[3])
      }
    }
  }
  return invalid
}

/**
 * A refund's reply: 1 when something came back, 0 when not.
 *
 * @since 0.1.0
 */
export const decodeRefund: Decoder<boolean> = (reply) => reply === 1 ? true : reply === 0 ? false : invalid

/**
 * A reply nothing reads.
 *
 * @since 0.1.0
 */
export const decodeVoid: Decoder<void> = () => undefined

/**
 * A reply of milliseconds.
 *
 * @since 0.1.0
 */
export const decodePause: Decoder<number> = (reply) => {
  const millis = Number(reply)
  return Number.isFinite(millis) ? millis : invalid
}
