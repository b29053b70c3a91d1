/**
 * A library built on the provider emits declarations that name our types, some of them re-exported
 * by `Provider` from `ProviderOptions` and `ProviderError`. Those declarations must only point at
 * paths the package exports: `./internal/*` is blocked, so a `.d.ts` importing
 * `@sluice/provider/internal/...` breaks the library's own users with TS2307.
 *
 * The check itself is shared: `@sluice/test-utils/declarations` (test-utils/src/declarations.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { consumerDeclarations } from "@sluice/test-utils/declarations"
import * as path from "node:path"

const packageDir = path.resolve(import.meta.dirname, "..")

/** Every way a consumer's exported types come to name a provider type by inference. */
const consumerSource = `
import { Provider, ProviderError, ProviderOptions } from "@sluice/provider"
import { Effect } from "effect"

export const asTimeout = (e: unknown) => (e instanceof Provider.CallTimeout ? e : undefined)
export const asFull = (e: unknown) => (e instanceof Provider.BulkheadFull ? e : undefined)
export const asClosed = (e: unknown) => (e instanceof ProviderError.ProviderClosed ? e : undefined)
export const asError = (e: unknown) => (Provider.isProviderError(e) ? e : undefined)
export const made = Provider.make({ name: "geocoder", bulkhead: { permits: 2 }, attemptTimeout: "1 second" })
export const called = (provider: Provider.Provider) => provider.call(Effect.succeed(1), { totalTimeout: "1 second" })
export const caught = (provider: Provider.Provider<Provider.CallTimeout>) =>
  provider.call(Effect.succeed(1)).pipe(Effect.catchTag("CallTimeout", (e) => Effect.succeed(e)))
export const options = { name: "geocoder", bulkhead: { permits: 2 } } satisfies ProviderOptions.Options
export const retry = { maxAttempts: 2, backoff: { initial: "10 millis" } } satisfies Provider.RetryOptions
export const stats = (provider: Provider.Provider) => provider.stats
export class Geocoder extends Provider.Tag("geocoder")<Geocoder>() {}
export const layer = Geocoder.layer({ bulkhead: { permits: 2 }, circuitBreaker: {} })
export const layerConfig = Geocoder.layerConfig(Provider.config)
export const metrics = [Provider.callSeconds, Provider.outcomesTotal, Provider.interruptedTotal, Provider.circuitState] as const
`

/** The user of the consumer library: it only type-checks if the library's declarations resolve. */
const userSource = `
import { asTimeout, called, caught, Geocoder, made, stats } from "consumer"

type IsAny<T> = 0 extends 1 & T ? true : false
// an import the library's declarations cannot resolve would turn these into \`any\`
export const attempt = (e: unknown) => asTimeout(e)?.attempt
const typed: [IsAny<ReturnType<typeof asTimeout>>, IsAny<ReturnType<typeof attempt>>, IsAny<typeof made>] = [
  false,
  false,
  false
]
export { called, caught, Geocoder, made, stats, typed }
`

describe("declarations", () => {
  it("a consumer's emitted declarations name only exported paths, and its own users compile", () => {
    const result = consumerDeclarations({
      packageDir,
      consumerSource,
      userSource,
      peers: ["@sluice/bulkhead", "@sluice/rate-limiter"]
    })
    expect(result.consumerDiagnostics).toEqual([])
    expect(result.dts).toContain("asTimeout")
    expect(result.internalImports).toEqual([])
    expect(result.userDiagnostics).toEqual([])
  }, 120_000)
})
