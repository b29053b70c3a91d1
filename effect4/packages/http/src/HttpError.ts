/**
 * The errors of the HTTP package, as values: the upstream's answers (`UpstreamRateLimited`,
 * `UpstreamStatus`), a body that could not be decoded (`DecodeError`), the body's bounds
 * (`BodyTooLarge`, `StreamIdleTimeout`) and a pool too small for its bulkheads (`PoolTooSmall`).
 * `ProviderHttpClient` and `HttpPool` re-export them; messages come from `@sluice/core`, so both
 * lines print the same sentences.
 *
 * @since 2.0.0
 */
import * as HttpMessages from "@sluice/core/HttpMessages"
import { RetryableTypeId } from "@sluice/provider/Provider"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * @since 2.0.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/http/HttpError")

/**
 * @since 2.0.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/** A duration as the core's sentences take it: nanoseconds, undefined when infinite. */
const nanosOf = (d: Duration.Duration): bigint | undefined => Option.getOrUndefined(Duration.toNanos(d))

/**
 * The upstream answered 429 (or 503 with Retry-After): the provider's limiter was paused for
 * `retryAfter`, for every caller, and the call may be retried through bulkhead and limiter again.
 *
 * @since 2.0.0
 * @category errors
 */
export class UpstreamRateLimited extends Schema.TaggedError<UpstreamRateLimited>()("UpstreamRateLimited", {
  provider: Schema.String,
  status: Schema.Number,
  url: Schema.String,
  /** The pause applied, after clamping the upstream's Retry-After to the configured bounds. */
  retryAfter: Schema.Duration,
  /** Retry-After as the upstream sent it, if it did. */
  retryAfterHeader: Schema.UndefinedOr(Schema.String)
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  readonly [RetryableTypeId] = true
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.upstreamRateLimited({ ...this, retryAfterNanos: nanosOf(this.retryAfter) })
  }
}

/**
 * The upstream answered with a status that is not a success. 5xx and 408 are marked retryable;
 * other 4xx are not (the same request would fail the same way).
 *
 * @since 2.0.0
 * @category errors
 */
export class UpstreamStatus extends Schema.TaggedError<UpstreamStatus>()("UpstreamStatus", {
  provider: Schema.String,
  status: Schema.Number,
  url: Schema.String,
  /** The start of the response body (at most 512 characters), for the message and logs. */
  body: Schema.String
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  get [RetryableTypeId](): boolean {
    return this.status >= 500 || this.status === 408
  }
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.upstreamStatus(this)
  }
}

/**
 * The upstream pushing back: a 429 (or 503 with Retry-After), or a 5xx. Other 4xx are the
 * request's own fault and say nothing about the upstream's health.
 *
 * @since 2.0.0
 * @category errors
 */
export const isUpstreamError = (error: unknown): boolean =>
  error instanceof UpstreamRateLimited || (error instanceof UpstreamStatus && error.status >= 500)

/**
 * The body could not be read as what the caller expected: not JSON, or not matching its schema.
 *
 * @since 2.0.0
 * @category errors
 */
export class DecodeError extends Schema.TaggedError<DecodeError>()("DecodeError", {
  provider: Schema.String,
  url: Schema.String,
  /** What went wrong, e.g. the schema's report. */
  reason: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.decodeError(this)
  }
}

/**
 * The body grew past the limit while it arrived; the request was aborted at that point.
 *
 * @since 2.0.0
 * @category errors
 */
export class BodyTooLarge extends Schema.TaggedError<BodyTooLarge>()("BodyTooLarge", {
  provider: Schema.String,
  url: Schema.String,
  limit: Schema.Number,
  /** Bytes received when the limit was crossed. */
  received: Schema.Number
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.bodyTooLarge(this)
  }
}

/**
 * A stream went `idleTimeout` without a chunk; the request was aborted.
 *
 * @since 2.0.0
 * @category errors
 */
export class StreamIdleTimeout extends Schema.TaggedError<StreamIdleTimeout>()("StreamIdleTimeout", {
  provider: Schema.String,
  url: Schema.String,
  idleTimeout: Schema.Duration,
  /** Bytes received before the stream went quiet. */
  received: Schema.Number
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.streamIdleTimeout({ ...this, idleTimeoutNanos: nanosOf(this.idleTimeout) })
  }
}

/**
 * The connections that the bulkheads on an origin need exceed the pool's limit for it.
 *
 * @since 2.0.0
 * @category errors
 */
export class PoolTooSmall extends Schema.TaggedError<PoolTooSmall>()("PoolTooSmall", {
  origin: Schema.String,
  /** The pool's limit: the user's, or the size of the pool already created. */
  connections: Schema.Number,
  /** What the reservations add up to, the new one included. */
  required: Schema.Number,
  /** The reservations by provider, the new one included. */
  providers: Schema.Record(Schema.String, Schema.Number),
  /** Why the limit is what it is. */
  reason: Schema.Literals(["limit", "created"])
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return HttpMessages.poolTooSmall(this)
  }
}
