// The Effect 3 line's messages for the parity table, printed as JSON: parity.test.ts runs this
// with tsx. Effect 3 is loaded from packages/options' own dependency, the copy its source imports.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { cases, configCases, settings } from "./cases.ts"

const options = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/options")
const effect = dirname(createRequire(join(options, "package.json")).resolve("effect/package.json"))
const load = (module) => import(pathToFileURL(join(effect, "dist/esm", `${module}.js`)).href)
const [{ OptionSchema }, Schema, Duration, Either, Effect, Config, ConfigProvider] = await Promise.all([
  import(pathToFileURL(join(options, "src/index.ts")).href),
  ...["Schema", "Duration", "Either", "Effect", "Config", "ConfigProvider"].map(load)
])

const refuse = (schema, who, input) => {
  const result = OptionSchema.decodeEither(schema, who)(input)
  return Either.isLeft(result) ? result.left : undefined
}
const line = { OptionSchema, Schema, Duration, refuse }

const section = Config.nested(OptionSchema.config(settings(line), "a bulkhead"), "GEO")
const read = (entries) => {
  const provider = ConfigProvider.fromMap(new Map(Object.entries(entries).map(([k, v]) => [`GEO.${k}`, v])))
  const result = Effect.runSync(Effect.either(Effect.withConfigProvider(Config.option(section), provider)))
  // an InvalidData error carries the sentence as its message
  return Either.isLeft(result) ? result.left.message : undefined
}

process.stdout.write(JSON.stringify({
  schemas: cases(line).map(([, schema, input]) => refuse(schema, `thing "t"`, input) ?? null),
  config: configCases.map((entries) => read(entries) ?? null)
}))
