/**
 * A library built on the bulkhead emits declarations that name our types. Those declarations must
 * only point at paths the package exports: `./internal/*` is blocked, so a `.d.ts` importing
 * `@sluice/bulkhead/internal/...` breaks the library's own users with TS2307.
 *
 * The check itself is the Effect 3 line's: test-utils/src/declarations.ts, run here on the 2.x package.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
// the root workspace's check, by path: it is Effect-free (node:* and typescript only), and one
// copy serves both lines
import { consumerDeclarations } from "../../../../test-utils/src/declarations.js"

const packageDir = path.resolve(import.meta.dirname, "..")

/** Every way a consumer's exported types come to name a bulkhead type by inference. */
const consumerSource = `
import { Bulkhead } from "@sluice/bulkhead"
import { Effect } from "effect"

export const asTimeout = (e: unknown) => (e instanceof Bulkhead.PermitWaitTimeout ? e : undefined)
export const asFull = (e: unknown) => (e instanceof Bulkhead.BulkheadFull ? e : undefined)
export const asError = (e: unknown) => (Bulkhead.isBulkheadError(e) ? e : undefined)
export const failure = (bulkhead: Bulkhead.Bulkhead) => Effect.flip(bulkhead.run(Effect.succeed(1)))
export const caught = (bulkhead: Bulkhead.Bulkhead) =>
  bulkhead.run(Effect.succeed(1)).pipe(Effect.catchTag("PermitWaitTimeout", (e) => Effect.succeed(e)))
export const made = Bulkhead.make({ name: "geocoder", permits: 2 })
export const stats = (bulkhead: Bulkhead.Bulkhead) => bulkhead.stats
export class Geocoder extends Bulkhead.Tag("geocoder")<Geocoder>() {}
export const layer = Geocoder.layer({ permits: 2 })
export const layerConfig = Geocoder.layerConfig(Bulkhead.config)
export const metrics = [Bulkhead.permitWaitSeconds, Bulkhead.inFlight, Bulkhead.waiting] as const
`

/** The user of the consumer library: it only type-checks if the library's declarations resolve. */
const userSource = `
import { asTimeout, caught, failure, Geocoder, made } from "consumer"

type IsAny<T> = 0 extends 1 & T ? true : false
// an import the library's declarations cannot resolve would turn these into \`any\`
export const waited = (e: unknown) => asTimeout(e)?.waited
const typed: [IsAny<ReturnType<typeof asTimeout>>, IsAny<ReturnType<typeof waited>>] = [false, false]
export { caught, failure, Geocoder, made, typed }
`

describe("declarations", () => {
  it("a consumer's emitted declarations name only exported paths, and its own users compile", () => {
    const result = consumerDeclarations({ packageDir, consumerSource, userSource })
    expect(result.consumerDiagnostics).toEqual([])
    expect(result.dts).toContain("asTimeout")
    expect(result.internalImports).toEqual([])
    expect(result.userDiagnostics).toEqual([])
  }, 120_000)
})
