/**
 * The declarations check of the packages' `declarations.test.ts`: a library built on a sluice
 * package emits declarations that name its types, and they must only point at paths the package
 * exports (`./internal/*` is blocked, so a `.d.ts` importing `@sluice/x/internal/...` breaks the
 * library's own users with TS2307).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"

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

/** What `consumerDeclarations` found. */
export interface ConsumerDeclarations {
  /** The consumer library's emitted declarations. */
  readonly dts: string
  /** The consumer's diagnostics, its declarations' emit included. */
  readonly consumerDiagnostics: ReadonlyArray<string>
  /** The diagnostics of the consumer's user and of the consumer's published declarations. */
  readonly userDiagnostics: ReadonlyArray<string>
  /** The module paths the declarations import that go through an `internal/` folder. */
  readonly internalImports: ReadonlyArray<string>
}

/**
 * In a scratch app outside the workspace, with the package (`packageDir`, as `@sluice/<name>`),
 * effect and the package's other `peers` linked as a package manager would: compiles
 * `consumerSource` as a library, publishes only its declarations as `consumer`, and compiles
 * `userSource` (which imports "consumer") against them.
 */
export const consumerDeclarations = (options: {
  readonly packageDir: string
  readonly consumerSource: string
  readonly userSource: string
  /** Peer dependencies besides effect, which the app installs beside the package. */
  readonly peers?: ReadonlyArray<string> | undefined
}): ConsumerDeclarations => {
  const { packageDir } = options
  const name = path.basename(packageDir)
  const resolve = createRequire(path.join(packageDir, "package.json")).resolve
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${name}-dts-`))
  try {
    fs.mkdirSync(path.join(root, "node_modules", "@sluice"), { recursive: true })
    fs.symlinkSync(packageDir, path.join(root, "node_modules", "@sluice", name), "dir")
    for (const peer of ["effect", ...(options.peers ?? [])]) {
      const dir = path.dirname(resolve(`${peer}/package.json`))
      fs.symlinkSync(fs.realpathSync(dir), path.join(root, "node_modules", peer), "dir")
    }

    // the consumer library: its declarations are what its users will read
    write(path.join(root, "consumer-src", "index.ts"), options.consumerSource)
    write(path.join(root, "consumer-src", "package.json"), JSON.stringify({ name: "consumer-src", type: "module" }))
    const consumer = emitDeclarations(path.join(root, "consumer-src", "index.ts"))

    // publish it: only the declarations, as `consumer` in node_modules
    const consumerDir = path.join(root, "node_modules", "consumer")
    write(path.join(consumerDir, "index.d.ts"), consumer.dts)
    write(path.join(consumerDir, "index.js"), "export {}\n")
    write(
      path.join(consumerDir, "package.json"),
      JSON.stringify({ name: "consumer", type: "module", exports: { ".": { types: "./index.d.ts" } } })
    )
    write(path.join(root, "user", "package.json"), JSON.stringify({ name: "user", type: "module" }))
    write(path.join(root, "user", "index.ts"), options.userSource)
    const user = emitDeclarations(path.join(root, "user", "index.ts"), [path.join(consumerDir, "index.d.ts")])
    return {
      dts: consumer.dts,
      consumerDiagnostics: consumer.diagnostics,
      userDiagnostics: user.diagnostics,
      internalImports: consumer.dts.match(/["'][^"']*internal\/[^"']*["']/g) ?? []
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}
