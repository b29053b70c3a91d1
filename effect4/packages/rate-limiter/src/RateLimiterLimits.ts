/**
 * The limits a rate limiter enforces: one (`limit` starts per `window`, with its algorithm and
 * burst) or several at once, each on a dimension of its own, and the wait budget that goes with
 * them. `RateLimiter` re-exports them.
 *
 * @since 2.0.0
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import type * as Duration from "effect/Duration"
import type * as RateLimiterStore from "./RateLimiterStore.js"

/**
 * @since 2.0.0
 * @category models
 */
export type Algorithm = RateLimiterStore.Algorithm

/**
 * One limit: `limit` starts per `window`.
 *
 * @since 2.0.0
 * @category models
 */
export interface Limit {
  /**
   * The unit this limit counts (`"requests"`, `"tokens"`): a take's cost record charges it by
   * this name, and several limits may share one (tokens per minute and per day). Default
   * `"default"`.
   *
   * @since 2.0.0
   */
  readonly dimension?: string | undefined
  /** Starts (units of cost) per window, an integer ≥ 1. */
  readonly limit: number
  /** The window, > 0 and finite. */
  readonly window: Duration.Input
  /** Default `"gcra"`. */
  readonly algorithm?: Algorithm | undefined
  /**
   * GCRA only: how many starts may happen at the same instant (the bucket's depth), an integer
   * ≥ 1. Default 1: starts are evenly spaced, `window / limit` apart. Any window then holds at most
   * `limit + burst` starts.
   */
  readonly burst?: number | undefined
}

/**
 * A limit with its defaults filled in; `burst` of a window algorithm is its `limit`.
 *
 * @since 2.0.0
 * @category models
 */
export interface ResolvedLimit {
  /** @since 2.0.0 */
  readonly dimension: string
  readonly limit: number
  readonly window: Duration.Duration
  readonly algorithm: Algorithm
  readonly burst: number
}

/**
 * One limit.
 *
 * @since 2.0.0
 * @category models
 */
export interface SingleLimit extends Limit {
  /** The default wait budget of a take. `0` means never wait. Default: no bound. */
  readonly maxWait?: Duration.Input | undefined
  /**
   * The longest an observation's `resetAfter` holds a dimension (`tighten`); a longer one is read
   * as this, with a warning naming the limiter, the dimension and the value. A finite duration.
   * Default one hour (a daily quota is obeyed an hour at a time: the upstream says so again).
   *
   * @since 2.0.0
   */
  readonly maxResetAfter?: Duration.Input | undefined
  readonly limits?: undefined
}

/**
 * Several limits at once (say 10 per second and 1,000 per day), each with its own fields: a start
 * happens at the earliest instant all of them allow, and is charged on all of them or on none.
 *
 * @since 2.0.0
 * @category models
 */
export interface MultiLimit
  extends Partial<Record<keyof Limit, undefined>>, Pick<SingleLimit, "maxWait" | "maxResetAfter">
{
  readonly limits: NonEmptyReadonlyArray<Limit>
}

/**
 * Everything but the name: what a service tag's `layer` takes.
 *
 * @since 2.0.0
 * @category models
 */
export type Settings = SingleLimit | MultiLimit
