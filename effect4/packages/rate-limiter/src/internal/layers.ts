/**
 * A limiter as a service: its layers, from options or from `Config`, and its keys. Each layer
 * builds its limiter in its own `Layer.effect`, so two keys never share one.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as RateLimiter from "../RateLimiter.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"
import { make } from "./rateLimiter.js"

/** @internal */
export const layer = <I>(
  tag: Context.Key<I, RateLimiter.RateLimiter>,
  options: RateLimiter.Options
): Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> => Layer.effect(tag, make(options))

/** @internal */
export const layerConfig = <I>(
  tag: Context.Key<I, RateLimiter.RateLimiter>,
  config: Config.Config<RateLimiter.Options>
): Layer.Layer<I, Config.ConfigError, RateLimiterStore.RateLimiterStore> =>
  Layer.effect(tag, Effect.flatMap(config, make))

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): RateLimiter.TagClass<Self, Id> => {
  const tag = Context.Service<Self, RateLimiter.RateLimiter>()(`@sluice/rate-limiter/${id}`)
  return Object.assign(tag, {
    id,
    layer: (settings: RateLimiter.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<RateLimiter.Settings>) =>
      layerConfig(tag, Config.map(config, (settings): RateLimiter.Options => ({ ...settings, name: id })))
  })
}
