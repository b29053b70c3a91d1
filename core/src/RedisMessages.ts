/**
 * A Redis connection's checks and sentences on plain values: which options it refuses and why (the
 * URL, the Cluster nodes, the client, the timeouts), how a failed command reads, and the timings
 * every connection it opens uses. Both Effect lines' `RedisConnection` take them from here, so that
 * the same mistake prints the same bytes on Effect 3 and Effect 4; each binding unwraps its own
 * `Redacted` and decodes its own `Duration`. `NOSCRIPT` is read by `LimiterCommands.isNoScript`.
 *
 * @since 0.1.0
 */
import { errorText } from "./LimiterCommands.js"
import { isNegativeInput } from "./OptionMessages.js"

/**
 * The WHATWG `URL` class, global in Node and in browsers: the core's `lib` declares neither, so
 * the part read here is declared here.
 */
declare const URL: new(input: string) => {
  readonly protocol: string
  readonly hostname: string
  readonly port: string
  readonly href: string
  password: string
}

/**
 * A value read from an option, or the reason it is refused (naming the option and the value).
 *
 * @since 0.1.0
 * @category models
 */
export type Reading<A> =
  | { readonly _tag: "Read"; readonly value: A }
  | { readonly _tag: "Refused"; readonly reason: string }

const read = <A>(value: A): Reading<A> => ({ _tag: "Read", value })
const refused = <A = never>(reason: string): Reading<A> => ({ _tag: "Refused", reason })

/**
 * A command waits at most this long (ms) before the caller's store-down policy answers instead.
 *
 * @since 0.1.0
 * @category timings
 */
export const defaultCommandTimeoutMillis = 500

/**
 * How long (ms) one connection attempt may take, and how long building waits for it.
 *
 * @since 0.1.0
 * @category timings
 */
export const defaultConnectTimeoutMillis = 2000

/** Recovery is noticed within a second of Redis coming back. */
const maxReconnectDelayMillis = 1000

/**
 * The reconnection backoff (ms before attempt `times`): 100 ms more per attempt, capped at 1 s.
 *
 * @since 0.1.0
 * @category timings
 */
export const retryStrategy = (times: number): number => Math.min(times * 100, maxReconnectDelayMillis)

/**
 * How often (ms) a Cluster's subscriber reads the slot map at the latest: after a failover it
 * subscribes again at the new master within this (plus a connection), even when no command of the
 * process touched the slot.
 *
 * @since 0.1.0
 * @category timings
 */
export const subscriberSlotsRefreshMillis = 500

/**
 * The ioredis settings that keep a command from hanging while Redis is down: fail at once when
 * disconnected, give up after the timeout, never resend (a script may have run).
 *
 * @since 0.1.0
 * @category timings
 */
export const noHang = (commandTimeout: number): {
  readonly enableOfflineQueue: false
  readonly commandTimeout: number
  readonly maxRetriesPerRequest: 0
} => ({ enableOfflineQueue: false, commandTimeout, maxRetriesPerRequest: 0 })

/**
 * The message of `RedisCommandError`: `Redis script take failed: Connection is closed.`
 *
 * @since 0.1.0
 * @category messages
 */
export const commandFailed = (command: string, cause: unknown): string => `Redis ${command} failed: ${errorText(cause)}`

/**
 * The defect of invalid options, from the reason `check` gave.
 *
 * @since 0.1.0
 * @category messages
 */
export const invalidOptions = (reason: string): string => `Redis connection: ${reason}`

/**
 * The warning logged for an application's client whose offline queue is on.
 *
 * @since 0.1.0
 * @category messages
 */
export const offlineQueueWarning = "Redis connection: the ioredis client given has enableOfflineQueue on, so a " +
  "command waits while Redis is down instead of failing at once; set enableOfflineQueue: false, " +
  "maxRetriesPerRequest: 0 and a commandTimeout on it for the store-down policy to answer"

/**
 * An option value as a reason shows it: text quoted, a duration by `showDuration` (the binding's
 * `Duration`, written by `OptionMessages.formatDuration`), anything else as `String` writes it.
 *
 * @since 0.1.0
 * @category messages
 */
export const showInput = (input: unknown, showDuration: (input: unknown) => string | undefined): string =>
  typeof input === "string" ? JSON.stringify(input) : showDuration(input) ?? String(input)

/**
 * A timeout option in milliseconds: `fallback` when absent, refused when negative (a duration
 * decoder reads `-5 seconds` as zero or as negative, both a mistake to name), when `toMillis` (the
 * binding's decoder, `undefined` for no duration) cannot read it, and unless finite and > 0.
 *
 * @since 0.1.0
 * @category checks
 */
export const readMillis = (
  label: string,
  input: unknown,
  fallback: number,
  decode: {
    readonly toMillis: (input: unknown) => number | undefined
    readonly showDuration: (input: unknown) => string | undefined
  }
): Reading<number> => {
  if (input === undefined) return read(fallback)
  const outOfRange = () =>
    refused(`${label} must be a finite duration > 0, got ${showInput(input, decode.showDuration)}`)
  if (isNegativeInput(input)) return outOfRange()
  const millis = decode.toMillis(input)
  if (millis === undefined) return refused(`${label} must be a duration, got ${showInput(input, decode.showDuration)}`)
  return millis > 0 && Number.isFinite(millis) ? read(millis) : outOfRange()
}

/**
 * A Redis URL, or why not. `url` is the text (unwrapped from `Redacted` by the binding, which says
 * so in `redacted`: such a URL is never shown); `undefined` when none was given.
 *
 * @since 0.1.0
 * @category checks
 */
export const readUrl = (url: unknown, redacted: boolean): Reading<string> => {
  // no default server: a connection that guessed localhost would hide a missing setting
  if (url === undefined) return refused("url is needed (redis://host:port), or cluster, or client")
  if (typeof url !== "string" || url.length === 0) return refused("url must be a non-empty string")
  const shown = redacted ? "(redacted)" : JSON.stringify(url)
  let parsed: InstanceType<typeof URL>
  try {
    parsed = new URL(url)
  } catch {
    return refused(`url must be a URL such as redis://host:6379, got ${shown}`)
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    if (parsed.password !== "") parsed.password = "***"
    return refused(`url must use redis:// or rediss://, got ${redacted ? shown : JSON.stringify(parsed.href)}`)
  }
  if (parsed.hostname === "") return refused(`url must name a host (redis://host:port), got ${shown}`)
  return read(url)
}

/**
 * Why Cluster startup nodes are refused (none given), or `undefined`.
 *
 * @since 0.1.0
 * @category checks
 */
export const clusterRefusal = (nodes: unknown): string | undefined =>
  Array.isArray(nodes) && nodes.length > 0
    ? undefined
    : `cluster must name at least one node, got ${JSON.stringify(nodes)}`

/**
 * Why an application's client is refused (no ioredis client: it has no `evalsha`), or `undefined`.
 *
 * @since 0.1.0
 * @category checks
 */
export const clientRefusal = (client: unknown): string | undefined =>
  typeof client === "object" && client !== null && "evalsha" in client
    ? undefined
    : `client must be an ioredis Redis or Cluster, got ${String(client)}`

/** Where one node listens, from a URL or `host:port` text, a port, or `{ host, port }`; never a password. */
const nodeAddress = (node: unknown): string => {
  if (typeof node === "number") return `127.0.0.1:${node}`
  if (typeof node === "string") {
    if (node.includes("://")) {
      try {
        const parsed = new URL(node)
        return `${parsed.hostname}:${parsed.port === "" ? "6379" : parsed.port}`
      } catch {
        return "(an unreadable URL)"
      }
    }
    return /^\d+$/.test(node) ? `127.0.0.1:${node}` : node.includes(":") ? node : `${node}:6379`
  }
  if (typeof node === "object" && node !== null) {
    const { host, path, port } = node as { readonly host?: unknown; readonly port?: unknown; readonly path?: unknown }
    if (typeof path === "string" && path !== "") return path
    return `${typeof host === "string" && host !== "" ? host : "127.0.0.1"}:${port ?? 6379}`
  }
  return String(node)
}

/** How many of a Cluster's startup nodes an address names: enough to find it, short enough to read. */
const nodesShown = 2

/**
 * The address a connection's errors name: `host:port` of a URL (unwrapped by the binding) or of a
 * client's options, or the first Cluster nodes (`Cluster 127.0.0.1:7000, 127.0.0.1:7001 (+4 more)`).
 * A password is never part of it.
 *
 * @since 0.1.0
 * @category messages
 */
export const address = (
  target:
    | { readonly _tag: "Node"; readonly node: unknown }
    | { readonly _tag: "Cluster"; readonly nodes: ReadonlyArray<unknown> }
): string => {
  if (target._tag === "Node") return nodeAddress(target.node)
  if (target.nodes.length === 0) return "a Cluster (no node known yet)"
  const shown = target.nodes.slice(0, nodesShown).map(nodeAddress).join(", ")
  const more = target.nodes.length - nodesShown
  return `Cluster ${shown}${more > 0 ? ` (+${more} more)` : ""}`
}

/**
 * Whether a command failed because the client has no connection: ioredis refuses a command at once
 * (no offline queue, a `Redis` or a `Cluster`), or sluice did not send it (`noConnection` without an address yet).
 *
 * @since 0.1.0
 * @category messages
 */
export const isNoConnection = (cause: unknown): boolean => {
  const text = errorText(cause)
  return text.startsWith("Stream isn't writeable") || text.startsWith("Cluster isn't ready") ||
    text.startsWith("no connection to Redis (")
}

/**
 * The connection error to keep after `next`: `next`, unless it only says that a connection closed
 * (`Connection is closed.`, a command on a node that failed to connect) and an earlier one said why.
 *
 * @since 0.1.0
 * @category messages
 */
export const keptError = (previous: unknown, next: unknown): unknown =>
  previous !== undefined && errorText(next) === "Connection is closed." ? previous : next

/**
 * The last connection error as a message shows it: the client's, with the last node's when a
 * Cluster reported one (`Failed to refresh slots cache.` alone says nothing of why); `undefined`
 * before any.
 *
 * @since 0.1.0
 * @category messages
 */
export const connectionErrorText = (error: unknown, nodeError?: unknown): string | undefined => {
  if (error === undefined) return nodeError === undefined ? undefined : errorText(nodeError)
  const node = nodeError ??
    (typeof error === "object" && error !== null ? (error as { lastNodeError?: unknown }).lastNodeError : undefined)
  return node === undefined ? errorText(error) : `${errorText(error)} (last node error: ${errorText(node)})`
}

/**
 * The text of a command failed for want of a connection: where, the last connection error when
 * there was one, and the client's status, e.g. `no connection to Redis at 127.0.0.1:1 (last error:
 * connect ECONNREFUSED 127.0.0.1:1; reconnecting)`. Without an address: `no connection to Redis
 * (reconnecting)`.
 *
 * @since 0.1.0
 * @category messages
 */
export const noConnection = (status: string, at?: string, lastError?: string): string =>
  `no connection to Redis${at === undefined ? "" : ` at ${at}`} (${
    lastError === undefined ? "" : `last error: ${lastError}; `
  }${status})`
