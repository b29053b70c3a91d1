/**
 * A bulkhead as a service: one tag per protected resource, and the layers that build it.
 *
 * @internal
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Api from "../Bulkhead.js"
import { make } from "./bulkhead.js"

/** @internal */
export const layer = <I, E = never>(tag: Context.Tag<I, Api.Bulkhead<E>>, options: Api.Options): Layer.Layer<I> =>
  Layer.effect(tag, make(options))

/** @internal */
export const layerConfig = <I, E = never>(
  tag: Context.Tag<I, Api.Bulkhead<E>>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, ConfigError.ConfigError> => Layer.effect(tag, Effect.flatMap(config, make))

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self, E = never>(): Api.TagClass<Self, Id, E> => {
  const tag = Context.Tag(`@sluice/bulkhead/${id}`)<Self, Api.Bulkhead<E>>()
  return Object.assign(tag, {
    id,
    layer: (settings: Api.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<Api.Settings>) =>
      layerConfig(tag, Config.map(config, (options) => ({ ...options, name: id })))
  })
}
