/** @internal */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Api from "../Report.js"
import { model } from "./data.js"
import { pageScript, pageStyle } from "./page.js"

/** Text placed in HTML, in an element or an attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * JSON placed in a `<script>` element: no `<`, `>` or `&` (so no `</script>` or `<!--` can end or
 * open anything), nor the two line separators older parsers end a string at.
 */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

/** A library's source inlined in a `<script>` or `<style>`: no closing tag inside it can end the element. */
const inlined = (source: string, element: "script" | "style"): string =>
  source.replace(new RegExp(`</(${element})`, "gi"), "<\\/$1").replace(/<!--/g, "<\\!--")

const uPlotFiles = (): { readonly script: string; readonly style: string } => {
  const require = createRequire(import.meta.url)
  return {
    script: require.resolve("uplot/dist/uPlot.iife.min.js"),
    style: require.resolve("uplot/dist/uPlot.min.css")
  }
}

const read = (path: string): Effect.Effect<string, Api.ReportError> =>
  Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (error) => new Api.ReportError({ path, reason: `read uPlot (${String(error)}) from` })
  })

const locate: Effect.Effect<{ readonly script: string; readonly style: string }, Api.ReportError> = Effect.try({
  try: uPlotFiles,
  catch: (error) => new Api.ReportError({ path: "uplot/dist", reason: `find uPlot (${String(error)}) at` })
})

const sectionHtml = (section: Api.Section, index: number): string => {
  const verdict = section.verdict === undefined
    ? ""
    : `<p class="verdict"><strong>${escapeHtml(section.verdict.binding)}</strong>: ${
      escapeHtml(section.verdict.reason)
    }</p>`
  const facts = section.facts.map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`)
    .join("")
  return `<section class="provider" id="provider-${index}">
<h2>${escapeHtml(section.provider)}</h2>
${verdict}
<dl class="facts">${facts}</dl>
<div class="plots" data-section="${index}"></div>
</section>`
}

/** The page, given uPlot's script and stylesheet. */
export const page = (input: Api.Input, uPlot: { readonly script: string; readonly style: string }): string => {
  const data = model(input)
  const notes = data.notes.map((note) => `<p class="note">${escapeHtml(note)}</p>`).join("\n")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.title)}</title>
<style>${inlined(uPlot.style, "style")}</style>
<style>${pageStyle}</style>
</head>
<body>
<header>
<h1>${escapeHtml(data.title)}</h1>
${notes}
<p class="legend-note">Lines: solid = the client's own figure, dashed = the server's or a maximum, dotted = a bound (quota, limit, permits). Vertical lines: 429s (labelled); shaded: pauses the upstream asked for.</p>
</header>
<main>
${data.sections.map(sectionHtml).join("\n")}
</main>
<script type="application/json" id="sluice-report-data">${scriptJson(data)}</script>
<script>${inlined(uPlot.script, "script")}</script>
<script>${inlined(pageScript, "script")}</script>
</body>
</html>
`
}

/** @internal */
export const render = (input: Api.Input): Effect.Effect<string, Api.ReportError> =>
  Effect.flatMap(
    locate,
    (files) => Effect.zipWith(read(files.script), read(files.style), (script, style) => page(input, { script, style }))
  )

/** @internal */
export const write = (path: string, input: Api.Input): Effect.Effect<void, Api.ReportError> =>
  Effect.flatMap(render(input), (text) =>
    Effect.tryPromise({
      try: () => Fs.writeFile(path, text, "utf8"),
      catch: (error) => new Api.ReportError({ path, reason: `write the report (${String(error)}) to` })
    }))
