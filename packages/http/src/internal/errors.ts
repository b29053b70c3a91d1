import * as HttpMessages from "@sluice/core/HttpMessages"
import { RetryableTypeId } from "@sluice/provider/Provider"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** @internal */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/http/HttpError")

/** @internal */
export type ErrorTypeId = typeof ErrorTypeId

/** A duration as the core's sentences take it: nanoseconds, undefined when infinite. */
const nanosOf = (d: Duration.Duration): bigint | undefined => Option.getOrUndefined(Duration.toNanos(d))

/**
 * The upstream answered 429 (or 503 with Retry-After): the provider's limiter was paused for
 * `retryAfter`, for every caller, and the call may be retried through bulkhead and limiter again.
 *
 * @internal
 */
export class UpstreamRateLimited extends Data.TaggedError("UpstreamRateLimited")<{
  readonly provider: string
  readonly status: number
  readonly url: string
  /** The pause applied, after clamping the upstream's Retry-After to the configured bounds. */
  readonly retryAfter: Duration.Duration
  /** Retry-After as the upstream sent it, if it did. */
  readonly retryAfterHeader: string | undefined
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  readonly [RetryableTypeId] = true
  override get message(): string {
    return HttpMessages.upstreamRateLimited({ ...this, retryAfterNanos: nanosOf(this.retryAfter) })
  }
}

/**
 * The upstream answered with a status that is not a success. 5xx and 408 are marked retryable;
 * other 4xx are not (the same request would fail the same way).
 *
 * @internal
 */
export class UpstreamStatus extends Data.TaggedError("UpstreamStatus")<{
  readonly provider: string
  readonly status: number
  readonly url: string
  /** The start of the response body (at most 512 characters), for the message and logs. */
  readonly body: string
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  get [RetryableTypeId](): boolean {
    return this.status >= 500 || this.status === 408
  }
  override get message(): string {
    return HttpMessages.upstreamStatus(this)
  }
}

/**
 * The upstream pushing back: a 429 (or 503 with Retry-After), or a 5xx. Other 4xx are the
 * request's own fault and say nothing about the upstream's health.
 *
 * @internal
 */
export const isUpstreamError = (error: unknown): boolean =>
  error instanceof UpstreamRateLimited || (error instanceof UpstreamStatus && error.status >= 500)

/**
 * The body could not be read as what the caller expected: not JSON, or not matching its schema.
 *
 * @internal
 */
export class DecodeError extends Data.TaggedError("DecodeError")<{
  readonly provider: string
  readonly url: string
  /** What went wrong, e.g. the schema's report. */
  readonly reason: string
  readonly cause?: unknown
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return HttpMessages.decodeError(this)
  }
}

/**
 * The body grew past the limit while it arrived; the request was aborted at that point.
 *
 * @internal
 */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{
  readonly provider: string
  readonly url: string
  readonly limit: number
  /** Bytes received when the limit was crossed. */
  readonly received: number
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return HttpMessages.bodyTooLarge(this)
  }
}

/**
 * A stream went `idleTimeout` without a chunk; the request was aborted.
 *
 * @internal
 */
export class StreamIdleTimeout extends Data.TaggedError("StreamIdleTimeout")<{
  readonly provider: string
  readonly url: string
  readonly idleTimeout: Duration.Duration
  /** Bytes received before the stream went quiet. */
  readonly received: number
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return HttpMessages.streamIdleTimeout({ ...this, idleTimeoutNanos: nanosOf(this.idleTimeout) })
  }
}

/**
 * The connections that the bulkheads on an origin need exceed the pool's limit for it.
 *
 * @internal
 */
export class PoolTooSmall extends Data.TaggedError("PoolTooSmall")<{
  readonly origin: string
  /** The pool's limit: the user's, or the size of the pool already created. */
  readonly connections: number
  /** What the reservations add up to, the new one included. */
  readonly required: number
  /** The reservations by provider, the new one included. */
  readonly providers: Readonly<Record<string, number>>
  /** Why the limit is what it is. */
  readonly reason: "limit" | "created"
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return HttpMessages.poolTooSmall(this)
  }
}
