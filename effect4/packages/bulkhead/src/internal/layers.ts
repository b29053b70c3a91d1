/**
 * A bulkhead as a service: one key per protected resource, and the layers that build it. Each
 * layer builds its bulkhead in its own `Layer.effect`, so two keys never share one.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Api from "../Bulkhead.js"
import { make } from "./bulkhead.js"

/** @internal */
export const layer = <I, E = never>(tag: Context.Key<I, Api.Bulkhead<E>>, options: Api.Options): Layer.Layer<I> =>
  Layer.effect(tag, make(options))

/** @internal */
export const layerConfig = <I, E = never>(
  tag: Context.Key<I, Api.Bulkhead<E>>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, Config.ConfigError> => Layer.effect(tag, Effect.flatMap(config, make))

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self, E = never>(): Api.TagClass<Self, Id, E> => {
  const tag = Context.Service<Self, Api.Bulkhead<E>>()(`@sluice/bulkhead/${id}`)
  return Object.assign(tag, {
    id,
    layer: (settings: Api.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<Api.Settings>) =>
      layerConfig(tag, Config.map(config, (options) => ({ ...options, name: id })))
  })
}
