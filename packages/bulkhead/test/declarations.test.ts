/**
 * A library built on the bulkhead emits declarations that name our types. Those declarations must
 * only point at paths the package exports: `./internal/*` is blocked, so a `.d.ts` importing
 * `@sluice/bulkhead/internal/...` breaks the library's own users with TS2307.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"

const packageDir = path.resolve(import.meta.dirname, "..")
const effectDir = path.dirname(createRequire(path.join(packageDir, "package.json")).resolve("effect/package.json"))

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
  it("a consumer's emitted declarations name only exported paths, and its own users compile", () => {
    // a scratch app outside the workspace, with the packages linked as a package manager would
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "sluice-bulkhead-dts-"))
    try {
      fs.mkdirSync(path.join(root, "node_modules", "@sluice"), { recursive: true })
      fs.symlinkSync(packageDir, path.join(root, "node_modules", "@sluice", "bulkhead"), "dir")
      fs.symlinkSync(effectDir, path.join(root, "node_modules", "effect"), "dir")

      // the consumer library: its declarations are what its users will read
      const consumerDir = path.join(root, "node_modules", "consumer")
      write(path.join(root, "consumer-src", "index.ts"), consumerSource)
      write(path.join(root, "consumer-src", "package.json"), JSON.stringify({ name: "consumer-src", type: "module" }))
      const consumer = emitDeclarations(path.join(root, "consumer-src", "index.ts"))
      expect(consumer.diagnostics).toEqual([])
      expect(consumer.dts).toContain("asTimeout")
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
