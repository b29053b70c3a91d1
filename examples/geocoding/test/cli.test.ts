/**
 * What the CLI accepts is validated where it is read, and every error is a tagged one: a quota
 * period that is not a positive duration is refused with the flag and the value named (it used to
 * be passed on unchecked, and `Duration` reads "-5 seconds" as 0), sizing figures that cannot size
 * a bulkhead fail with `InvalidSizing` instead of throwing, and a lookup every provider refused is
 * a tagged `Unresolved`. An output path that is the input is refused (`--fresh` deleted the input).
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { positiveDuration } from "../harness/Cli.js"
import { Unresolved } from "../src/Router.js"
import * as Scenario from "../src/Scenario.js"
import { distinctInput, runCli, tempDir } from "./utils.js"

describe("the CLI's inputs", () => {
  const decode = Schema.decodeUnknownEither(positiveDuration("--quota-period"))

  it("reads a positive duration", () => {
    expect(Either.map(decode("1 day"), Duration.toMillis)).toEqual(Either.right(86_400_000))
    expect(Either.map(decode("30 minutes"), Duration.toMillis)).toEqual(Either.right(1_800_000))
  })

  it("refuses anything else, naming the flag and the value", () => {
    for (const input of ["-5 seconds", "0 millis", "garbage", "", "5", "1 fortnight"]) {
      const decoded = decode(input)
      expect(Either.isLeft(decoded), input).toBe(true)
      if (Either.isLeft(decoded)) {
        expect(decoded.left.message).toContain(`--quota-period must be a positive duration`)
        expect(decoded.left.message).toContain(`got ${JSON.stringify(input)}`)
      }
    }
  })

  it("sizes a provider or fails with InvalidSizing, never throws", () => {
    const tuning: Scenario.Tuning = {
      burst: undefined,
      margin: 0.02,
      headroom: 2,
      userAgent: "tests",
      apiKey: undefined
    }
    const endpoint = { baseUrl: "http://127.0.0.1:1", rate: 100, where: "stand-in" as const }
    const sized = Scenario.settingsFor("photon", { ...endpoint, medianMillis: 60 }, tuning, undefined)
    expect(Either.map(sized, (settings) => settings.permits)).toEqual(Either.right(12))
    const invalid = Scenario.settingsFor("photon", { ...endpoint, medianMillis: Number.NaN }, tuning, undefined)
    expect(Either.isLeft(invalid) && invalid.left._tag).toBe("InvalidSizing")
  })

  it("a lookup every provider refused is a tagged error", () => {
    const unresolved = new Unresolved({ refusals: [{ provider: "photon", reason: "500", message: "HTTP 500" }] })
    expect(unresolved._tag).toBe("Unresolved")
    expect(unresolved).toBeInstanceOf(Error)
    expect(unresolved.message).toBe("photon: HTTP 500")
  })
})

describe("the CLI's files", () => {
  it("refuses an output that is the input, and leaves the input as it was", async () => {
    const dir = tempDir()
    const input = Path.join(dir, "in.jsonl")
    distinctInput(input, 3)
    const before = Fs.readFileSync(input, "utf8")
    for (const output of [input, Path.join(dir, ".", "in.jsonl")]) {
      const result = await runCli(["run", "--input", input, "--output", output, "--fresh", "--no-progress"], 60_000)
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`error: --output ${output} is the input file`)
      expect(Fs.readFileSync(input, "utf8")).toBe(before)
    }
  }, 120_000)
})
