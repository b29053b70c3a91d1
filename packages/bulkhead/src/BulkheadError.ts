/**
 * The errors of a bulkhead: each way a call can be refused a permit. Every one names its bulkhead
 * in the field `bulkhead`.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 0.2.0
 */
import * as BulkheadMessages from "@sluice/core/BulkheadMessages"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"

/**
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/bulkhead/BulkheadError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * The queue was at `maxWaiting` when the caller arrived; it failed at once and holds nothing.
 *
 * @since 0.2.0
 * @category errors
 */
export class BulkheadFull extends Data.TaggedError("BulkheadFull")<{
  /** The name of the bulkhead that refused. */
  readonly bulkhead: string
  /**
   * The call's lane, for a bulkhead with lanes; `waiting` and `maxWaiting` are then the lane's
   * when its own bound refused (`bound: "lane"`), the whole queue's otherwise.
   *
   * @since 0.4.0
   */
  readonly lane?: string | undefined
  /**
   * With lanes, which `maxWaiting` refused: the lane's own or the bulkhead's, across its lanes.
   *
   * @since 0.4.0
   */
  readonly bound?: "lane" | "bulkhead" | undefined
  /** The permits the refused call asked for. */
  readonly requested: number
  /** @deprecated Use `requested` (the same number). */
  readonly cost: number
  /** The bulkhead's permits. */
  readonly permits: number
  readonly inFlight: number
  readonly waiting: number
  readonly maxWaiting: number
}> {
  /**
   * @since 0.2.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 0.2.0
   */
  override get message(): string {
    return BulkheadMessages.full(this)
  }
}

/**
 * The caller waited `maxWait` for a permit without getting one; it left the queue and holds
 * nothing. `aheadWhenQueued` is how many callers were queued before it when it arrived.
 *
 * @since 0.2.0
 * @category errors
 */
export class PermitWaitTimeout extends Data.TaggedError("PermitWaitTimeout")<{
  /** The name of the bulkhead that refused. */
  readonly bulkhead: string
  /**
   * The call's lane, for a bulkhead with lanes; `aheadWhenQueued` then counts its lane.
   *
   * @since 0.4.0
   */
  readonly lane?: string | undefined
  readonly waited: Duration.Duration
  /** The permits the caller asked for. */
  readonly requested: number
  /** @deprecated Use `requested` (the same number). */
  readonly cost: number
  /** The bulkhead's permits. */
  readonly permits: number
  readonly inFlight: number
  readonly aheadWhenQueued: number
}> {
  /**
   * @since 0.2.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 0.2.0
   */
  override get message(): string {
    return BulkheadMessages.waitTimeout({
      ...this,
      waitedNanos: Option.getOrUndefined(Duration.toNanos(this.waited))
    })
  }
}

/**
 * @since 0.2.0
 * @category errors
 */
export type BulkheadError = BulkheadFull | PermitWaitTimeout

/**
 * @since 0.2.0
 * @category guards
 */
export const isBulkheadError = (u: unknown): u is BulkheadError => Predicate.hasProperty(u, ErrorTypeId)
