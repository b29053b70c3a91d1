/**
 * How many permits a provider's bulkhead needs, from Little's law: to sustain `rate` calls per
 * second that each take `medianLatency`, `rate × medianLatency` calls must be in flight. Fewer,
 * and the bulkhead binds before the quota; many more only queue work inside the process. The
 * result carries its derivation as text, so a configuration can carry its reason.
 *
 * @since 2.0.0
 */
import type * as Duration from "effect/Duration"
import type * as Result from "effect/Result"
import * as internal from "./internal/sizing.js"

/**
 * @since 2.0.0
 * @category models
 */
export interface Options {
  /** The permitted rate, in calls per second: a finite number > 0. */
  readonly rate: number
  /** The provider's median latency: a finite duration > 0. */
  readonly medianLatency: Duration.Input
  /** A factor ≥ 1 over the required figure, so that a slowdown does not bind at once. Default 2. */
  readonly headroom?: number | undefined
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Sizing {
  /** `required × headroom`, rounded up. */
  readonly permits: number
  /** `rate × medianLatency`, rounded up, at least 1. */
  readonly required: number
  /** `rate 50/s × median 200 ms = 10, ×2 headroom = 20` */
  readonly derivation: string
}

/**
 * A bad input: `field` names it, the message says what was expected and what was given.
 *
 * @since 2.0.0
 * @category errors
 */
export const InvalidSizing: typeof internal.InvalidSizing = internal.InvalidSizing

/**
 * @since 2.0.0
 * @category errors
 */
export interface InvalidSizing extends InstanceType<typeof internal.InvalidSizing> {}

/**
 * Permits from rate × median latency with headroom. Bad inputs (≤ 0, NaN, infinite) are an
 * `InvalidSizing` error, not a defect: sizing often runs on measured figures, and an empty
 * measurement should be handled, not crash. A `Result` can be yielded in `Effect.gen`.
 *
 * @example
 * ```ts
 * import { Sizing } from "@sluice/provider"
 * import { Result } from "effect"
 *
 * const sized = Sizing.permits({ rate: 50, medianLatency: "200 millis" })
 * // Result.succeed({ permits: 20, required: 10, derivation: "rate 50/s × median 200 ms = 10, ×2 headroom = 20" })
 * if (Result.isSuccess(sized)) console.log(sized.success.derivation)
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const permits: (options: Options) => Result.Result<Sizing, InvalidSizing> = internal.permits
