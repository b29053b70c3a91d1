/**
 * The HTTP pool's ledger on plain values: the limits per origin the user set, the connections each
 * provider reserved on an origin, the size each origin's pool was created with, and what that
 * allows (a reservation refused as too large, the connections a preconnect may open, the counters
 * of the pools). Both Effect lines' `HttpPool` keep only their effects around it: the undici
 * agent, the scope a reservation lasts for, the connections opened ahead.
 *
 * @since 0.1.0
 */

/**
 * The most connections per origin: one number for every origin, or a record by origin with `"*"`
 * for the others.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionsPerOrigin = number | Readonly<Record<string, number>>

/**
 * Why a reservation is refused: the fields of `PoolTooSmall` (`HttpMessages.poolTooSmall`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TooSmall {
  readonly origin: string
  /** The pool's limit: the user's, or the size of the pool already created. */
  readonly connections: number
  /** What the reservations add up to, the new one included. */
  readonly required: number
  /** The reservations by provider, the new one included. */
  readonly providers: Readonly<Record<string, number>>
  readonly reason: "limit" | "created"
}

/**
 * One origin's reservations and limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface OriginReservations {
  readonly origin: string
  /** Connections reserved, by provider. */
  readonly providers: Readonly<Record<string, number>>
  /** Their sum. */
  readonly reserved: number
  /** The user's limit for this origin, `undefined` when the pool is sized from the reservations. */
  readonly limit: number | undefined
  /** The pool's size once created (on the first request to the origin). */
  readonly poolSize: number | undefined
}

/**
 * undici's counters for one origin's pool.
 *
 * @since 0.1.0
 * @category models
 */
export interface PoolStats {
  /** Open connections. */
  readonly connected: number
  /** Open connections with no request on them. */
  readonly free: number
  /** Requests being sent or answered. */
  readonly running: number
  /** Requests waiting inside the pool for a connection: the invisible queue, 0 when sized right. */
  readonly pending: number
  /** Requests queued on connections (pipelining is off, so 0 in practice). */
  readonly queued: number
  readonly size: number
  /** Connections `preconnect` opened that the pool has not taken yet. */
  readonly preconnected: number
}

/**
 * The defect of a reservation that is not a count of connections.
 *
 * @since 0.1.0
 * @category messages
 */
export const reservedNotCount = (provider: string, connections: number): string =>
  `HttpPool: provider "${provider}" reserved ${connections} connections`

/**
 * The defect of a preconnect that is not asked a count of connections.
 *
 * @since 0.1.0
 * @category messages
 */
export const preconnectNotCount = (url: string, connections: number): string =>
  `HttpPool: preconnect to ${url} asked for ${connections} connections`

/**
 * Whether `n` counts connections, as a limit, a reservation or a preconnect takes them: an integer
 * ≥ 1.
 *
 * @since 0.1.0
 * @category checks
 */
export const isCount = (n: number): boolean => Number.isInteger(n) && n >= 1

/**
 * A reservation recorded, with the function that takes it back; or why it was refused.
 *
 * @since 0.1.0
 * @category models
 */
export type Reservation =
  | { readonly _tag: "Reserved"; readonly release: () => void }
  | { readonly _tag: "TooSmall"; readonly refusal: TooSmall }

/**
 * The user's limits: by origin, and for the others (`undefined`: sized from the reservations).
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly byOrigin: ReadonlyMap<string, number>
  readonly fallback: number | undefined
}

/**
 * Reads `connectionsPerOrigin`, or answers the sentence of its first count that is not an integer
 * ≥ 1.
 * `originOf` reads a key's origin: the binding's, which refuses a key that has none, naming it as
 * `label`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const limitsOf = (
  option: ConnectionsPerOrigin | undefined,
  originOf: (key: string, label: string) => string
): Limits | string => {
  const invalid = (n: number, where: string) =>
    `HttpPool: connectionsPerOrigin${where} must be an integer ≥ 1, got ${n}`
  if (option === undefined) return { byOrigin: new Map(), fallback: undefined }
  if (typeof option === "number") {
    return isCount(option)
      ? { byOrigin: new Map(), fallback: option }
      : invalid(option, "")
  }
  const byOrigin = new Map<string, number>()
  let fallback: number | undefined
  for (const [key, n] of Object.entries(option)) {
    if (key === "*") {
      if (!isCount(n)) return invalid(n, `["*"]`)
      fallback = n
    } else {
      const origin = originOf(key, "HttpPool: a connectionsPerOrigin key")
      if (!isCount(n)) return invalid(n, `[${JSON.stringify(key)}]`)
      byOrigin.set(origin, n)
    }
  }
  return { byOrigin, fallback }
}

/**
 * The ledger of one pool. Origins are as `originOf` writes them (scheme, host and port).
 *
 * @since 0.1.0
 * @category models
 */
export class Ledger {
  // origin → provider → connections; a provider may reserve on an origin more than once (two
  // layers for one name): the reservations add up, since each layer has its own bulkhead
  private readonly reserved = new Map<string, Map<string, number>>()
  // origin → the size its pool was created with (null: unbounded)
  private readonly created = new Map<string, number | null>()

  constructor(readonly limits: Limits) {}

  /** The user's limit for `origin`, if any. */
  limitFor(origin: string): number | undefined {
    return this.limits.byOrigin.get(origin) ?? this.limits.fallback
  }

  /** The connections reserved on `origin`. */
  total(origin: string): number {
    let sum = 0
    for (const n of this.reserved.get(origin)?.values() ?? []) sum += n
    return sum
  }

  /**
   * The size of the pool created for `origin` now (`null`: unbounded): the user's limit, else
   * what is reserved. Recorded, so that a later reservation must fit it.
   */
  create(origin: string): number | null {
    const total = this.total(origin)
    const size = this.limitFor(origin) ?? (total > 0 ? total : null)
    this.created.set(origin, size)
    return size
  }

  /**
   * Records `connections` on `origin` for `provider`, and answers the function that takes them
   * back; or, leaving the ledger as it was, why the origin cannot hold them: its limit, or its
   * pool already created smaller.
   */
  reserve(
    origin: string,
    provider: string,
    connections: number
  ): Reservation {
    const providers = Object.fromEntries(this.reserved.get(origin) ?? [])
    providers[provider] = (providers[provider] ?? 0) + connections
    const required = this.total(origin) + connections
    const limit = this.limitFor(origin)
    const poolSize = this.created.get(origin)
    if (limit !== undefined && required > limit) {
      return { _tag: "TooSmall", refusal: { origin, connections: limit, required, providers, reason: "limit" } }
    }
    if (poolSize !== undefined && poolSize !== null && required > poolSize) {
      return { _tag: "TooSmall", refusal: { origin, connections: poolSize, required, providers, reason: "created" } }
    }
    const byProvider = this.reserved.get(origin) ?? new Map<string, number>()
    byProvider.set(provider, (byProvider.get(provider) ?? 0) + connections)
    this.reserved.set(origin, byProvider)
    return {
      _tag: "Reserved",
      release: () => {
        const left = (byProvider.get(provider) ?? 0) - connections
        if (left > 0) byProvider.set(provider, left)
        else byProvider.delete(provider)
      }
    }
  }

  /** Every origin reserved on or created, in name order. */
  reservations(): Array<OriginReservations> {
    return [...new Set([...this.reserved.keys(), ...this.created.keys()])].sort().map((origin) => {
      const size = this.created.get(origin)
      return {
        origin,
        providers: Object.fromEntries(this.reserved.get(origin) ?? []),
        reserved: this.total(origin),
        limit: this.limitFor(origin),
        poolSize: size === null ? undefined : size
      }
    })
  }

  /**
   * How many of `connections` a preconnect to `origin` opens: no more than its pool could take,
   * its size (its limit, its created size, or what is reserved) less the connections it `held`
   * and those `waiting` for it already.
   */
  room(origin: string, connections: number, held: number, waiting: number): number {
    const total = this.total(origin)
    const size = this.limitFor(origin) ?? this.created.get(origin) ?? (total > 0 ? total : undefined)
    return Math.max(0, Math.min(connections, (size ?? connections) - held - waiting))
  }
}

/**
 * A pool's counters as undici's agent reports them (`stats`, by origin as undici writes it), with
 * the connections `preconnected` counts waiting for each origin; an origin with connections
 * waiting but no pool yet has zeros.
 *
 * @since 0.1.0
 * @category stats
 */
export const poolStats = (
  agentStats: Readonly<Record<string, unknown>>,
  originOf: (url: string) => string,
  preconnected: { readonly count: (origin: string) => number; readonly origins: () => ReadonlyArray<string> }
): Record<string, PoolStats> => {
  const out: Record<string, PoolStats> = {}
  for (const [origin, raw] of Object.entries(agentStats)) {
    // a Pool's counters; a lone Client (not used here) reports `connected` as a boolean
    const s = raw as Partial<Record<keyof PoolStats, number | boolean>>
    const key = originOf(origin)
    out[key] = {
      connected: Number(s.connected ?? 0),
      free: Number(s.free ?? 0),
      running: Number(s.running ?? 0),
      pending: Number(s.pending ?? 0),
      queued: Number(s.queued ?? 0),
      size: Number(s.size ?? 0),
      preconnected: preconnected.count(key)
    }
  }
  for (const origin of preconnected.origins()) {
    out[origin] ??= {
      connected: 0,
      free: 0,
      running: 0,
      pending: 0,
      queued: 0,
      size: 0,
      preconnected: preconnected.count(origin)
    }
  }
  return out
}

/**
 * The connections undici's pool for `origin` holds now, busy or idle (0 before it exists).
 *
 * @since 0.1.0
 * @category stats
 */
export const pooledConnections = (
  agentStats: Readonly<Record<string, unknown>>,
  originOf: (url: string) => string,
  origin: string
): number => {
  for (const [key, raw] of Object.entries(agentStats)) {
    if (originOf(key) === origin) return Number((raw as { readonly connected?: number }).connected ?? 0)
  }
  return 0
}
