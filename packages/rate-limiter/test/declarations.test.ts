/**
 * A library built on the rate limiter emits declarations that name our types. Those declarations
 * must only point at paths the package exports: `./internal/*` is blocked, so a `.d.ts` importing
 * `@sluice/rate-limiter/internal/...` breaks the library's own users with TS2307.
 *
 * The compile helper is the bulkhead's (`packages/bulkhead/test/declarations.test.ts`), repeated
 * here: importing another package's test file would tie the two packages' test builds together.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"
import { RateLimiter, RateLimiterError, RateLimiterStore } from "../src/index.js"

const packageDir = path.resolve(import.meta.dirname, "..")
const effectDir = path.dirname(createRequire(path.join(packageDir, "package.json")).resolve("effect/package.json"))

/** Every way a consumer's exported types come to name a rate-limiter type by inference. */
const consumerSource = `
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Duration, Effect } from "effect"

export const asExceeded = (e: unknown) => (e instanceof RateLimiter.RateLimitExceeded ? e : undefined)
export const asStoreError = (e: unknown) => (e instanceof RateLimiterStore.RateLimiterStoreError ? e : undefined)
export const asError = (e: unknown) => (RateLimiter.isRateLimiterError(e) ? e : undefined)
export const exceeded = new RateLimiter.RateLimitExceeded({
  name: "geocoder", reason: "paused", retryAfter: Duration.zero, limit: undefined, cost: 1, maxWait: Duration.zero
})
export const storeError = new RateLimiterStore.RateLimiterStoreError({ message: "down" })
export const failure = (limiter: RateLimiter.RateLimiter) => Effect.flip(limiter.take())
export const pauseFailure = (limiter: RateLimiter.RateLimiter) => Effect.flip(limiter.pauseFor("1 second"))
export const caught = (limiter: RateLimiter.RateLimiter) =>
  limiter.run(Effect.succeed(1)).pipe(Effect.catchTag("RateLimitExceeded", (e) => Effect.succeed(e)))
export const caughtStore = (limiter: RateLimiter.RateLimiter) =>
  limiter.take().pipe(Effect.catchTag("RateLimiterStoreError", (e) => Effect.succeed(e)))
export const limited = (limiter: RateLimiter.RateLimiter) => Effect.succeed(1).pipe(RateLimiter.withRateLimiter(limiter))
export const made = RateLimiter.make({ name: "geocoder", limit: 2, window: "1 second" })
export const memory = RateLimiterStore.makeMemory
export const reserve = (store: RateLimiterStore.Service) =>
  store.reserve({ key: "k", limits: [], cost: 1, maxWaitMillis: 0 })
export class Geocoder extends RateLimiter.Tag("geocoder")<Geocoder>() {}
export const layer = Geocoder.layer({ limit: 2, window: "1 second" })
export const layerConfig = Geocoder.layerConfig(RateLimiter.config)
export const storeLayer = RateLimiterStore.layerMemory
export const metrics = [RateLimiter.waitSeconds, RateLimiter.rejectedTotal, RateLimiter.timerLatenessSeconds] as const
`

/** The user of the consumer library: it only type-checks if the library's declarations resolve. */
const userSource = `
import { asExceeded, asStoreError, caught, caughtStore, exceeded, failure, Geocoder, made, storeError } from "consumer"

type IsAny<T> = 0 extends 1 & T ? true : false
// an import the library's declarations cannot resolve would turn these into \`any\`
export const retryAfter = (e: unknown) => asExceeded(e)?.retryAfter
export const storeMessage = (e: unknown) => asStoreError(e)?.message
const typed: [
  IsAny<ReturnType<typeof asExceeded>>,
  IsAny<ReturnType<typeof retryAfter>>,
  IsAny<ReturnType<typeof asStoreError>>,
  IsAny<typeof exceeded>,
  IsAny<typeof storeError>
] = [false, false, false, false, false]
export const tag: "RateLimitExceeded" = exceeded._tag
export const storeTag: "RateLimiterStoreError" = storeError._tag
export { caught, caughtStore, failure, Geocoder, made, typed }
`

const compilerOptions: ts.CompilerOptions = {
  strict: true,
  exactOptionalPropertyTypes: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  types: [],
  skipLibCheck: true,
  declaration: true,
  emitDeclarationOnly: true
}

/**
 * Compiles `file`, returning the declarations emitted for it and the diagnostics of it and of
 * `alsoCheck` (declaration files, which `skipLibCheck` would otherwise pass over unread).
 */
const emitDeclarations = (
  file: string,
  alsoCheck: ReadonlyArray<string> = []
): { readonly dts: string; readonly diagnostics: ReadonlyArray<string> } => {
  const program = ts.createProgram([file], {
    ...compilerOptions,
    skipLibCheck: alsoCheck.length === 0,
    outDir: path.join(path.dirname(file), "out")
  })
  let dts = ""
  const emitted = program.emit(program.getSourceFile(file), (name, text) => {
    if (name.endsWith(".d.ts") && path.basename(name, ".d.ts") === path.basename(file, ".ts")) dts = text
  })
  const checked = [file, ...alsoCheck].map((name) => program.getSourceFile(name))
  const diagnostics = [...checked.flatMap((source) => program.getSemanticDiagnostics(source)), ...emitted.diagnostics]
    .map((d) => `${d.file?.fileName ?? ""} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`)
  return { dts, diagnostics }
}

const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

describe("declarations", () => {
  it("the old names are the public module's classes, values and instances alike", () => {
    expect(RateLimiter.RateLimitExceeded).toBe(RateLimiterError.RateLimitExceeded)
    expect(RateLimiterStore.RateLimiterStoreError).toBe(RateLimiterError.RateLimiterStoreError)
    const error: RateLimiter.RateLimiterError = new RateLimiterStore.RateLimiterStoreError({ message: "down" })
    expect(error).toBeInstanceOf(RateLimiterError.RateLimiterStoreError)
    expect(RateLimiter.isRateLimiterError(error)).toBe(true)
    expect(RateLimiterError.isRateLimiterError(error)).toBe(true)
  })

  it("a consumer's emitted declarations name only exported paths, and its own users compile", () => {
    // a scratch app outside the workspace, with the packages linked as a package manager would
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-rate-limiter-dts-"))
    try {
      fs.mkdirSync(path.join(root, "node_modules", "@sluice"), { recursive: true })
      fs.symlinkSync(packageDir, path.join(root, "node_modules", "@sluice", "rate-limiter"), "dir")
      fs.symlinkSync(effectDir, path.join(root, "node_modules", "effect"), "dir")

      // the consumer library: its declarations are what its users will read
      const consumerDir = path.join(root, "node_modules", "consumer")
      write(path.join(root, "consumer-src", "index.ts"), consumerSource)
      write(path.join(root, "consumer-src", "package.json"), JSON.stringify({ name: "consumer-src", type: "module" }))
      const consumer = emitDeclarations(path.join(root, "consumer-src", "index.ts"))
      expect(consumer.diagnostics).toEqual([])
      expect(consumer.dts).toContain("asExceeded")
      expect(consumer.dts.match(/["'][^"']*internal\/[^"']*["']/g) ?? []).toEqual([])

      // publish it: only the declarations, as `consumer` in node_modules
      write(path.join(consumerDir, "index.d.ts"), consumer.dts)
      write(path.join(consumerDir, "index.js"), "export {}\n")
      write(
        path.join(consumerDir, "package.json"),
        JSON.stringify({ name: "consumer", type: "module", exports: { ".": { types: "./index.d.ts" } } })
      )
      write(path.join(root, "user", "package.json"), JSON.stringify({ name: "user", type: "module" }))
      write(path.join(root, "user", "index.ts"), userSource)
      const user = emitDeclarations(path.join(root, "user", "index.ts"), [path.join(consumerDir, "index.d.ts")])
      expect(user.diagnostics).toEqual([])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
