/**
 * The errors of a bulkhead: each way a call can be refused a permit. Every one names its bulkhead
 * in the field `bulkhead`.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 2.0.0
 */
import * as BulkheadMessages from "@sluice/core/BulkheadMessages"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * @since 2.0.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/bulkhead/BulkheadError")

/**
 * @since 2.0.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * The queue was at `maxWaiting` when the caller arrived; it failed at once and holds nothing.
 *
 * @since 2.0.0
 * @category errors
 */
export class BulkheadFull extends Schema.TaggedError<BulkheadFull>()("BulkheadFull", {
  /** The name of the bulkhead that refused. */
  bulkhead: Schema.String,
  /**
   * The call's lane, for a bulkhead with lanes; `waiting` and `maxWaiting` are then the lane's
   * when its own bound refused (`bound: "lane"`), the whole queue's otherwise.
   */
  lane: Schema.optional(Schema.String),
  /** With lanes, which `maxWaiting` refused: the lane's own or the bulkhead's, across its lanes. */
  bound: Schema.optional(Schema.Literals(["lane", "bulkhead"])),
  /** The permits the refused call asked for. */
  requested: Schema.Number,
  /** The 0.x line's name for `requested` (the same number). */
  cost: Schema.Number,
  /** The bulkhead's permits. */
  permits: Schema.Number,
  inFlight: Schema.Number,
  waiting: Schema.Number,
  maxWaiting: Schema.Number
}) {
  /**
   * @since 2.0.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 2.0.0
   */
  override get message(): string {
    return BulkheadMessages.full(this)
  }
}

/**
 * The caller waited `maxWait` for a permit without getting one; it left the queue and holds
 * nothing. `aheadWhenQueued` is how many callers were queued before it when it arrived.
 *
 * @since 2.0.0
 * @category errors
 */
export class PermitWaitTimeout extends Schema.TaggedError<PermitWaitTimeout>()("PermitWaitTimeout", {
  /** The name of the bulkhead that refused. */
  bulkhead: Schema.String,
  /** The call's lane, for a bulkhead with lanes; `aheadWhenQueued` then counts its lane. */
  lane: Schema.optional(Schema.String),
  waited: Schema.Duration,
  /** The permits the caller asked for. */
  requested: Schema.Number,
  /** The 0.x line's name for `requested` (the same number). */
  cost: Schema.Number,
  /** The bulkhead's permits. */
  permits: Schema.Number,
  inFlight: Schema.Number,
  aheadWhenQueued: Schema.Number
}) {
  /**
   * @since 2.0.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 2.0.0
   */
  override get message(): string {
    return BulkheadMessages.waitTimeout({
      ...this,
      waitedNanos: Duration.isFinite(this.waited) ? Duration.toNanosUnsafe(this.waited) : undefined
    })
  }
}

/**
 * @since 2.0.0
 * @category errors
 */
export type BulkheadError = BulkheadFull | PermitWaitTimeout

/**
 * @since 2.0.0
 * @category guards
 */
export const isBulkheadError = (u: unknown): u is BulkheadError => Predicate.hasProperty(u, ErrorTypeId)
