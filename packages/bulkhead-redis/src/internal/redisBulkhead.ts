/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import * as Connection from "@sluice/redis/RedisConnection"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as Api from "../RedisBulkhead.js"
import * as S from "./scripts.js"

// -----------------------------------------------------------------------------
// metrics
// -----------------------------------------------------------------------------

/** @internal */
export const leaseLostTotal = Metric.counter("sluice_bulkhead_lease_lost_total", {
  description: "Leases of a distributed bulkhead that their holder found gone at renewal (paused past the lease TTL)",
  incremental: true
})

/** @internal */
export const storeDegraded = Metric.gauge("sluice_bulkhead_store_degraded", {
  description: "1 while a distributed bulkhead cannot reach Redis"
})

/** @internal */
export const storeErrorsTotal = Metric.counter("sluice_bulkhead_store_errors_total", {
  description: "Commands of a distributed bulkhead that Redis did not answer",
  incremental: true
})

/** @internal */
export const keysOf = S.keysOf

// -----------------------------------------------------------------------------
// options
// -----------------------------------------------------------------------------

const defaultPrefix = "sluice:bh:"
const defaultLeaseTtlMillis = 10_000
/** Three renewals per TTL leave two chances for a late one; below 300 ms a busy event loop loses leases. */
const minLeaseTtlMillis = 300

interface Settings {
  readonly name: string
  readonly permits: number
  readonly maxPermits: number
  readonly maxWaiting: number
  readonly maxWait: Duration.Duration
  readonly leaseTtlMillis: number
  readonly onLeaseLost: Api.OnLeaseLost
  readonly prefix: string
}

const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

const illegal = (message: string) => new Cause.IllegalArgumentException(message)

const decodeDuration = (
  name: string,
  what: string,
  input: Duration.DurationInput | undefined
): Duration.Duration | undefined => {
  if (input === undefined) return undefined
  const negative = (typeof input === "number" && !(input >= 0)) ||
    (typeof input === "bigint" && input < BigInt(0)) ||
    (typeof input === "string" && input.trim().startsWith("-"))
  const decoded = negative ? undefined : Option.getOrUndefined(Duration.decodeUnknown(input))
  if (decoded === undefined) {
    throw illegal(`bulkhead "${name}": ${what} must be a duration ≥ 0, got ${JSON.stringify(String(input))}`)
  }
  return decoded
}

const resolve = (options: Api.Options): Settings => {
  const name = options.name
  if (typeof name !== "string" || name.length === 0 || /[{}]/.test(name)) {
    throw illegal(`a Redis bulkhead needs a non-empty name without braces, got ${JSON.stringify(name)}`)
  }
  if (!isPositiveInteger(options.permits)) {
    throw illegal(`bulkhead "${name}": permits must be an integer ≥ 1, got ${options.permits}`)
  }
  const maxPermits = options.maxPermits ?? options.permits
  if (!isPositiveInteger(maxPermits) || maxPermits < options.permits) {
    throw illegal(
      `bulkhead "${name}": maxPermits must be an integer ≥ permits (${options.permits}), got ${options.maxPermits}`
    )
  }
  const maxWaiting = options.maxWaiting ?? Infinity
  if (!(maxWaiting === Infinity || (Number.isSafeInteger(maxWaiting) && maxWaiting >= 0))) {
    throw illegal(`bulkhead "${name}": maxWaiting must be an integer ≥ 0 or Infinity, got ${options.maxWaiting}`)
  }
  const maxWait = decodeDuration(name, "maxWait", options.maxWait) ?? Duration.infinity
  const ttl = decodeDuration(name, "leaseTtl", options.leaseTtl)
  const leaseTtlMillis = ttl === undefined ? defaultLeaseTtlMillis : Duration.toMillis(ttl)
  if (!(Number.isFinite(leaseTtlMillis) && leaseTtlMillis >= minLeaseTtlMillis)) {
    throw illegal(
      `bulkhead "${name}": leaseTtl must be a finite duration ≥ ${minLeaseTtlMillis}ms, got ${String(options.leaseTtl)}`
    )
  }
  const onLeaseLost = options.onLeaseLost ?? "log"
  if (onLeaseLost !== "log" && onLeaseLost !== "interrupt") {
    throw illegal(`bulkhead "${name}": onLeaseLost must be "log" or "interrupt", got ${JSON.stringify(onLeaseLost)}`)
  }
  const storeDown = options.storeDown ?? "fail-closed"
  if (storeDown !== "fail-closed") {
    throw illegal(
      `bulkhead "${name}": storeDown must be "fail-closed" (fail-open and local are not available yet), got ${
        JSON.stringify(storeDown)
      }`
    )
  }
  const prefix = options.prefix ?? defaultPrefix
  if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
    throw illegal(`bulkhead "${name}": prefix must be a string without braces, got ${JSON.stringify(prefix)}`)
  }
  return {
    name,
    permits: options.permits,
    maxPermits,
    maxWaiting,
    maxWait,
    leaseTtlMillis: Math.round(leaseTtlMillis),
    onLeaseLost,
    prefix
  }
}

// -----------------------------------------------------------------------------
// replies
// -----------------------------------------------------------------------------

const int = (u: unknown): number => (typeof u === "number" ? u : Number(u))

const isArray = (u: unknown): u is ReadonlyArray<unknown> => Array.isArray(u)

// -----------------------------------------------------------------------------
// the bulkhead
// -----------------------------------------------------------------------------

/** A ticket's life in this process: asked for, queued, granted (told), held, gone. */
const ASKING = 0
const QUEUED = 1
const GRANTED = 2
const HELD = 3
const GONE = 4

interface Ticket {
  readonly nonce: string
  readonly cost: number
  /** `<ticket>:<nonce>`, the lease id; empty until Redis answered. */
  member: string
  state: typeof ASKING | typeof QUEUED | typeof GRANTED | typeof HELD | typeof GONE
  /** Completed with true at the grant, false when the waiting lease was lost. */
  readonly signal: Deferred.Deferred<boolean>
  /** Completed when the held lease is found lost, with `onLeaseLost: "interrupt"`. */
  lostSignal: Deferred.Deferred<void> | undefined
  lost: boolean
  /** When the lease was last extended (this process's clock, ms): how late a lost renewal was. */
  renewedAt: number
}

const loadScripts = () => ({
  acquire: Connection.script("acquire", S.scripts.acquire),
  leave: Connection.script("leave", S.scripts.leave),
  renew: Connection.script("renew", S.scripts.renew),
  stats: Connection.script("stats", S.scripts.stats),
  resize: Connection.script("resize", S.scripts.resize)
})

type Scripts = ReturnType<typeof loadScripts>

const newNonce = (): string => randomBytes(8).toString("hex")

class Impl {
  readonly tickets = new Map<string, Ticket>()
  readonly keys: ReadonlyArray<string>
  readonly channel: string
  readonly labels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly fullLabels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly timeoutLabels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly renewEveryMillis: number
  permits: number
  degraded = false
  lastStats: Bulkhead.Stats

  constructor(
    readonly settings: Settings,
    readonly connection: Connection.Service,
    readonly scripts: Scripts
  ) {
    const { channel, keys } = S.keysOf(settings.prefix, settings.name)
    this.keys = keys
    this.channel = channel
    const nameLabel = MetricLabel.make("name", settings.name)
    this.labels = [nameLabel]
    this.fullLabels = [nameLabel, MetricLabel.make("reason", "full")]
    this.timeoutLabels = [nameLabel, MetricLabel.make("reason", "timeout")]
    this.renewEveryMillis = Math.floor(settings.leaseTtlMillis / 3)
    this.permits = settings.permits
    this.lastStats = {
      name: settings.name,
      permits: settings.permits,
      maxPermits: settings.maxPermits,
      inFlight: 0,
      holders: 0,
      waiting: 0,
      waitingPermits: 0,
      maxWaiting: settings.maxWaiting
    }
  }

  // --- Redis --------------------------------------------------------------------------------

  /** Runs one script; a failure is a `BulkheadStoreError` and puts the bulkhead in degraded mode. */
  call(
    operation: string,
    script: Connection.Script,
    extra: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<unknown>, Api.BulkheadStoreError> {
    return Effect.suspend(() =>
      this.connection.runScript(script, this.keys, [this.channel, String(this.permits), ...extra])
    ).pipe(
      Effect.flatMap((reply) =>
        isArray(reply) ? Effect.succeed(reply) : Effect.fail(new Error(`unexpected reply ${JSON.stringify(reply)}`))
      ),
      Effect.matchEffect({
        onFailure: (error) => {
          const storeError = new Api.BulkheadStoreError({
            bulkhead: this.settings.name,
            operation,
            cause: error instanceof Connection.RedisCommandError ? error.cause : error
          })
          return Effect.zipRight(this.wentDown(storeError), Effect.fail(storeError))
        },
        onSuccess: (reply) => this.degraded ? Effect.as(this.cameBack, reply) : Effect.succeed(reply)
      })
    )
  }

  wentDown(error: Api.BulkheadStoreError): Effect.Effect<void> {
    return Effect.suspend(() => {
      storeErrorsTotal.unsafeUpdate(1, this.labels)
      if (this.degraded) return Effect.void
      this.degraded = true
      storeDegraded.unsafeUpdate(1, this.labels)
      return Effect.logWarning(`${error.message}: calls fail until Redis answers again`)
    })
  }

  get cameBack(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.degraded) return Effect.void
      this.degraded = false
      storeDegraded.unsafeUpdate(0, this.labels)
      return Effect.logInfo(`bulkhead "${this.settings.name}": Redis answers again, permits are shared again`)
    })
  }

  // --- grants and leases --------------------------------------------------------------------

  /** A grant message: one member per granted ticket, space-separated. */
  onGrants(message: string): void {
    for (const member of message.split(" ")) {
      const ticket = this.tickets.get(member.slice(member.indexOf(":") + 1))
      if (ticket !== undefined) this.granted(ticket, member)
    }
  }

  granted(ticket: Ticket, member: string): void {
    if (ticket.state !== ASKING && ticket.state !== QUEUED) return
    ticket.member = member
    ticket.state = GRANTED
    Deferred.unsafeDone(ticket.signal, Exit.succeed(true))
  }

  /**
   * Renews the leases of every ticket of this process in one script, which also expires what is
   * due and grants: the safety net for a grant message that was lost. Answers how long to sleep:
   * a third of the TTL, or until the first held lease ends when this process has waiters (so a
   * dead holder's permits pass on as soon as its lease ends).
   */
  get beat(): Effect.Effect<number> {
    return Effect.suspend(() => {
      const live: Array<Ticket> = []
      for (const ticket of this.tickets.values()) {
        if (ticket.member !== "" && ticket.state !== GONE && !ticket.lost) live.push(ticket)
      }
      if (live.length === 0) return Effect.succeed(this.renewEveryMillis)
      return this.call("renew", this.scripts.renew, live.map((t) => t.member)).pipe(
        Effect.flatMap((reply) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const effects: Array<Effect.Effect<void>> = []
            let waiters = false
            live.forEach((ticket, i) => {
              const status = reply[i + 1]
              if (status === "h") {
                if (ticket.state === ASKING || ticket.state === QUEUED) this.granted(ticket, ticket.member)
                ticket.renewedAt = now
              } else if (status === "w") {
                waiters = true
                ticket.renewedAt = now
              } else if (ticket.state === QUEUED || ticket.state === ASKING) {
                // the waiting lease ended (this process was paused past it): the waiter queues again
                ticket.state = GONE
                this.tickets.delete(ticket.nonce)
                Deferred.unsafeDone(ticket.signal, Exit.succeed(false))
              } else if (ticket.state !== GONE) {
                effects.push(this.leaseLost(ticket, now))
              }
            })
            const next = int(reply[0])
            const delay = waiters && next >= 0 ? Math.min(this.renewEveryMillis, next + 10) : this.renewEveryMillis
            return Effect.as(Effect.all(effects, { discard: true }), delay)
          })
        ),
        Effect.orElseSucceed(() => this.renewEveryMillis)
      )
    })
  }

  leaseLost(ticket: Ticket, now: number): Effect.Effect<void> {
    ticket.lost = true
    leaseLostTotal.unsafeUpdate(1, this.labels)
    if (ticket.lostSignal !== undefined) Deferred.unsafeDone(ticket.lostSignal, Exit.void)
    return Effect.logWarning(
      `bulkhead "${this.settings.name}": the lease of ticket ${ticket.member} (${ticket.cost} permit${
        ticket.cost === 1 ? "" : "s"
      }) was lost: renewed last ${now - ticket.renewedAt}ms ago, past its TTL of ${this.settings.leaseTtlMillis}ms; ` +
        `its permits may be held by another call, so the fleet may exceed ${this.permits} permits until this call ends` +
        (this.settings.onLeaseLost === "interrupt" && ticket.lostSignal !== undefined ? " (interrupting it)" : "")
    )
  }

  // --- acquire and release ------------------------------------------------------------------

  costOf(options: Bulkhead.RunOptions | undefined): number {
    const cost = options?.cost ?? 1
    if (!isPositiveInteger(cost) || cost > this.settings.maxPermits) {
      throw illegal(
        `bulkhead "${this.settings.name}": cost must be an integer from 1 to maxPermits (${this.settings.maxPermits}), got ${cost}`
      )
    }
    return cost
  }

  /**
   * Takes the permits, queueing in the global order when they are not free. Runs inside
   * `uninterruptibleMask`: only the wait is interruptible, and an interrupted or timed-out waiter
   * leaves the queue, or gives back a grant it was not told of yet.
   */
  acquireMasked(
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    options: Bulkhead.RunOptions | undefined
  ): Effect.Effect<Ticket, Bulkhead.BulkheadError | Api.BulkheadStoreError> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this
    return Effect.gen(function*() {
      let cost: number
      let maxWait: Duration.Duration
      try {
        cost = self.costOf(options)
        maxWait = decodeDuration(self.settings.name, "maxWait", options?.maxWait) ?? self.settings.maxWait
      } catch (defect) {
        return yield* Effect.die(defect)
      }
      const start = yield* Clock.currentTimeMillis
      const maxWaitMillis = Duration.toMillis(maxWait)
      for (;;) {
        const ticket: Ticket = {
          nonce: newNonce(),
          cost,
          member: "",
          state: ASKING,
          signal: Deferred.unsafeMake<boolean>(FiberId.none),
          lostSignal: undefined,
          lost: false,
          renewedAt: 0
        }
        self.tickets.set(ticket.nonce, ticket)
        const maxWaiting = self.settings.maxWaiting === Infinity ? "-1" : String(self.settings.maxWaiting)
        const reply = yield* self.call("acquire", self.scripts.acquire, [
          ticket.nonce,
          String(cost),
          String(self.settings.leaseTtlMillis),
          maxWaiting,
          maxWaitMillis === 0 ? "0" : "1"
        ]).pipe(Effect.tapError(() => Effect.sync(() => self.forget(ticket))))
        const kind = int(reply[0])
        const used = int(reply[2])
        const permits = int(reply[3])
        const ahead = int(reply[4])
        const now = yield* Clock.currentTimeMillis
        ticket.renewedAt = now
        if (kind === S.ACQUIRE_GRANTED) {
          ticket.member = String(reply[1])
          ticket.state = HELD
          Bulkhead.permitWaitSeconds.unsafeUpdate((now - start) / 1000, self.labels)
          return ticket
        }
        if (kind === S.ACQUIRE_FULL) {
          self.forget(ticket)
          Bulkhead.rejectedTotal.unsafeUpdate(1, self.fullLabels)
          return yield* Effect.fail(
            new Bulkhead.BulkheadFull({
              bulkhead: self.settings.name,
              cost,
              permits,
              inFlight: used,
              waiting: ahead,
              maxWaiting: self.settings.maxWaiting
            })
          )
        }
        if (kind === S.ACQUIRE_REFUSED) {
          self.forget(ticket)
          Bulkhead.rejectedTotal.unsafeUpdate(1, self.timeoutLabels)
          return yield* Effect.fail(self.timeoutError(cost, Duration.zero, permits, used, ahead))
        }
        // queued (a grant message may already have come: then the signal is already done)
        if (ticket.member === "") ticket.member = String(reply[1])
        if (ticket.state === ASKING) ticket.state = QUEUED
        const granted = Deferred.await(ticket.signal)
        const remaining = maxWaitMillis - (now - start)
        const outcome = yield* restore(
          Duration.isFinite(maxWait)
            ? Effect.timeoutOption(granted, Duration.millis(Math.max(0, remaining)))
            : Effect.asSome(granted)
        ).pipe(Effect.onInterrupt(() => self.release(ticket)))
        if (Option.isNone(outcome)) {
          // maxWait ran out; a grant that came meanwhile (told or not) is kept rather than wasted
          const left = yield* self.call("leave", self.scripts.leave, [ticket.member, "1"]).pipe(
            Effect.tapError(() => Effect.sync(() => self.forget(ticket)))
          )
          if (int(left[0]) === S.LEFT_HELD) {
            ticket.state = HELD
            Bulkhead.permitWaitSeconds.unsafeUpdate(maxWaitMillis / 1000, self.labels)
            return ticket
          }
          self.forget(ticket)
          Bulkhead.rejectedTotal.unsafeUpdate(1, self.timeoutLabels)
          return yield* Effect.fail(self.timeoutError(cost, maxWait, int(left[2]), int(left[1]), ahead))
        }
        if (outcome.value) {
          ticket.state = HELD
          const held = yield* Clock.currentTimeMillis
          Bulkhead.permitWaitSeconds.unsafeUpdate((held - start) / 1000, self.labels)
          return ticket
        }
        yield* Effect.logWarning(
          `bulkhead "${self.settings.name}": the waiting ticket ${ticket.member} outlived its lease ` +
            `(${self.settings.leaseTtlMillis}ms without renewal: was this process paused?); it queues again at the tail`
        )
      }
    })
  }

  timeoutError(
    cost: number,
    waited: Duration.Duration,
    permits: number,
    inFlight: number,
    ahead: number
  ): Bulkhead.PermitWaitTimeout {
    return new Bulkhead.PermitWaitTimeout({
      bulkhead: this.settings.name,
      waited,
      cost,
      permits,
      inFlight,
      aheadWhenQueued: ahead
    })
  }

  forget(ticket: Ticket): void {
    ticket.state = GONE
    this.tickets.delete(ticket.nonce)
  }

  /**
   * Gives the ticket's permits back, or takes it off the queue: exactly once, never failing. When
   * Redis cannot answer, the lease ends on its own within the TTL. A lost lease is not released:
   * its member is gone, and fencing would make the release a no-op anyway.
   */
  release(ticket: Ticket): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (ticket.state === GONE) return Effect.void
      const lost = ticket.lost
      this.forget(ticket)
      if (lost || ticket.member === "") return Effect.void
      return Effect.ignore(this.call("release", this.scripts.leave, [ticket.member, "0"]))
    })
  }

  run<A, E, R>(
    self: Effect.Effect<A, E, R>,
    options: Bulkhead.RunOptions | undefined
  ): Effect.Effect<A, E | Bulkhead.BulkheadError | Api.BulkheadStoreError, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(this.acquireMasked(restore, options), (ticket) => {
        if (this.settings.onLeaseLost !== "interrupt") return Effect.ensuring(restore(self), this.release(ticket))
        const lost = Deferred.unsafeMake<void>(FiberId.none)
        ticket.lostSignal = lost
        return Effect.ensuring(
          restore(Effect.raceFirst(self, Effect.zipRight(Deferred.await(lost), Effect.interrupt))),
          this.release(ticket)
        )
      })
    )
  }

  acquire(
    options: Bulkhead.RunOptions | undefined
  ): Effect.Effect<void, Bulkhead.BulkheadError | Api.BulkheadStoreError, Scope.Scope> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        this.acquireMasked(restore, options),
        (ticket) => Effect.addFinalizer(() => this.release(ticket))
      )
    )
  }

  resize(permits: number): Effect.Effect<void, Api.BulkheadStoreError> {
    return Effect.suspend(() => {
      if (!isPositiveInteger(permits) || permits > this.settings.maxPermits) {
        return Effect.die(
          illegal(
            `bulkhead "${this.settings.name}": resize needs an integer from 1 to maxPermits (${this.settings.maxPermits}), got ${permits}`
          )
        )
      }
      this.permits = permits
      return Effect.asVoid(this.call("resize", this.scripts.resize, []))
    })
  }

  get stats(): Effect.Effect<Bulkhead.Stats, Api.BulkheadStoreError> {
    return Effect.map(this.call("stats", this.scripts.stats, []), (reply) => {
      const stats: Bulkhead.Stats = {
        name: this.settings.name,
        permits: int(reply[0]),
        maxPermits: this.settings.maxPermits,
        inFlight: int(reply[1]),
        holders: int(reply[2]),
        waiting: int(reply[3]),
        waitingPermits: int(reply[4]),
        maxWaiting: this.settings.maxWaiting
      }
      this.lastStats = stats
      return stats
    })
  }
}

/**
 * The same bulkhead as a `Bulkhead.Bulkhead`: its interface has no store errors, so they are
 * defects. A plain object of bound functions, as the local bulkhead is, so `const { run } = b` works.
 */
const viewOf = (impl: Impl): Bulkhead.Bulkhead => {
  const view = {
    [Bulkhead.TypeId]: Bulkhead.TypeId as Bulkhead.TypeId,
    name: impl.settings.name,
    maxPermits: impl.settings.maxPermits,
    maxWait: impl.settings.maxWait,
    run: <A, E, R>(
      self: Effect.Effect<A, E, R>,
      options?: Bulkhead.RunOptions
    ): Effect.Effect<A, E | Bulkhead.BulkheadError, R> =>
      Effect.catchIf(impl.run(self, options), Api.isBulkheadStoreError, Effect.die),
    acquire: (options?: Bulkhead.RunOptions): Effect.Effect<void, Bulkhead.BulkheadError, Scope.Scope> =>
      Effect.catchIf(impl.acquire(options), Api.isBulkheadStoreError, Effect.die),
    resize: (permits: number): Effect.Effect<void> => Effect.orDie(impl.resize(permits)),
    stats: Effect.orElseSucceed(impl.stats, () => impl.lastStats)
  }
  return view
}

/** @internal */
export const make = (
  options: Api.Options
): Effect.Effect<Api.RedisBulkhead, never, Scope.Scope | Connection.RedisConnection> =>
  Effect.gen(function*() {
    const settings = yield* Effect.try({ try: () => resolve(options), catch: (e) => e }).pipe(Effect.orDie)
    const connection = yield* Connection.RedisConnection
    const impl = new Impl(settings, connection, loadScripts())
    yield* connection.subscribe(impl.channel, (message) => impl.onGrants(message))
    // the renewal loop: leases, waiting leases and the safety-net check, one script per beat
    yield* Effect.forkScoped(
      Effect.iterate(impl.renewEveryMillis, {
        while: () => true,
        body: (delay) => Effect.zipRight(Effect.sleep(Duration.millis(delay)), impl.beat)
      })
    )
    storeDegraded.unsafeUpdate(0, impl.labels)
    // this process's K becomes the fleet's (the last to start sets it); Redis down: it starts degraded
    yield* Effect.ignore(impl.resize(settings.permits))
    const view = viewOf(impl)
    const bulkhead: Api.RedisBulkhead = {
      name: settings.name,
      maxPermits: settings.maxPermits,
      maxWait: settings.maxWait,
      leaseTtl: Duration.millis(settings.leaseTtlMillis),
      run: (self, runOptions) => impl.run(self, runOptions),
      acquire: (runOptions) => impl.acquire(runOptions),
      resize: (permits) => impl.resize(permits),
      stats: impl.stats,
      bulkhead: view
    }
    return bulkhead
  })

/** @internal */
export const layer = <I>(
  tag: Context.Tag<I, Bulkhead.Bulkhead>,
  options: Api.Options
): Layer.Layer<I, never, Connection.RedisConnection> =>
  Layer.scoped(tag, Effect.map(make(options), (bulkhead) => bulkhead.bulkhead))

/** @internal */
export const layerConfig = <I>(
  tag: Context.Tag<I, Bulkhead.Bulkhead>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, ConfigError.ConfigError, Connection.RedisConnection> =>
  Layer.scoped(tag, Effect.flatMap(config, (options) => Effect.map(make(options), (bulkhead) => bulkhead.bulkhead)))

const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)

/** @internal */
export const config: Config.Config<Omit<Api.Options, "name">> = Config.all({
  permits: Config.integer("PERMITS"),
  maxPermits: optional(Config.integer("MAX_PERMITS")),
  maxWaiting: optional(Config.integer("MAX_WAITING")),
  maxWait: optional(Config.duration("MAX_WAIT")),
  leaseTtl: optional(Config.duration("LEASE_TTL")),
  onLeaseLost: optional(Config.literal("log", "interrupt")("ON_LEASE_LOST")),
  storeDown: optional(Config.literal("fail-closed")("STORE_DOWN")),
  prefix: optional(Config.string("PREFIX"))
}).pipe(
  // the same checks as `make`, as invalid data rather than a defect
  Config.mapOrFail((options) => {
    try {
      resolve({ ...options, name: "config" })
      return Either.right(options)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return Either.left(ConfigError.InvalidData([], message.replace(/^bulkhead "config": /, "")))
    }
  })
)
