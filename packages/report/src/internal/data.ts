/** @internal */
import type { ProviderRecording } from "@sluice/provider"
import type * as Api from "../Report.js"

/**
 * Colours apart in lightness as well as hue, each with its own dash or marker: the client's
 * figures dark and solid, the server's and the maxima lighter and dashed, bounds black dotted.
 */
const INK = {
  client: "#1f3f8f",
  server: "#e07b00",
  bound: "#000000",
  limit: "#6b6b6b",
  second: "#2a9d8f",
  retries: "#a8329b"
} as const

const seconds = (millis: number): number => millis / 1000

const round = (x: number, digits = 2): number => Number(x.toFixed(digits))

const ms = (millis: number): string =>
  millis >= 1000 ? `${round(millis / 1000)} s` : `${round(millis, millis >= 10 ? 0 : 1)} ms`

const sum = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0)

/** The mean of a phase over the run, from its per-bucket counts and means. */
const meanOf = (series: ProviderRecording.TimeSeries): number => {
  const n = sum(series.count)
  return n === 0 ? 0 : sum(series.count.map((c, i) => c * series.meanMillis[i])) / n
}

/** Bucket `i` of a recording, in seconds since `origin`. */
const xsOf = (recording: ProviderRecording.Recording, origin: number): Array<number> =>
  Array.from(
    { length: recording.buckets },
    (_, i) => round(seconds((recording.startMillis ?? origin) - origin + i * recording.bucketMillis), 3)
  )

const flat = (value: number, n: number): Array<number> => Array.from({ length: n }, () => value)

/** Per second of each bucket. */
const rate = (recording: ProviderRecording.Recording, counts: ReadonlyArray<number>): Array<number> =>
  counts.map((n) => round((n * 1000) / recording.bucketMillis, 3))

/** A phase's mean per bucket, `null` where nothing ended (a gap, not a zero). */
const means = (series: ProviderRecording.TimeSeries): Array<number | null> =>
  series.meanMillis.map((m, i) => (series.count[i] > 0 ? round(m, 3) : null))

/**
 * The server's arrivals on the recording's buckets: each arrival bucket spread over the buckets
 * it overlaps, in proportion (its arrivals are not known more finely than that); what falls
 * outside the recording counts in its first or last bucket, so that every arrival is drawn.
 */
const arrivalsOn = (
  recording: ProviderRecording.Recording,
  arrivals: NonNullable<Api.ServerSide["arrivals"]>
): Array<number> => {
  const counts = flat(0, recording.buckets)
  const start = recording.startMillis ?? arrivals.startMillis
  const width = recording.bucketMillis
  const last = counts.length - 1
  if (last < 0) return []
  arrivals.counts.forEach((n, j) => {
    const from = arrivals.startMillis + j * arrivals.bucketMillis - start
    const to = from + arrivals.bucketMillis
    const first = Math.min(last, Math.max(0, Math.floor(from / width)))
    const end = Math.min(last, Math.max(0, Math.floor(to / width)))
    for (let i = first; i <= end; i++) {
      // the first and last buckets reach as far out as the arrivals do
      const lo = i === 0 ? -Infinity : i * width
      const hi = i === last ? Infinity : (i + 1) * width
      const overlap = Math.min(to, hi) - Math.max(from, lo)
      if (overlap > 0) counts[i] += (n * overlap) / arrivals.bucketMillis
    }
  })
  return rate(recording, counts)
}

const boundLabel = (millis: number): string => (millis === 0 ? "0" : `≤${ms(millis)}`)

/**
 * The two waits' histograms on the same x: the buckets from the first to the last either one
 * used, so that they read side by side.
 */
const histograms = (recording: ProviderRecording.Recording, name: string): Array<Api.Plot> => {
  const { limiterWait, permitWait } = recording.histograms
  const used = (counts: ReadonlyArray<number>) => counts.flatMap((c, i) => (c > 0 ? [i] : []))
  const indexes = [...used(permitWait.counts), ...used(limiterWait.counts)]
  const first = indexes.length === 0 ? 0 : Math.min(...indexes)
  const last = Math.max(first + 3, indexes.length === 0 ? 3 : Math.max(...indexes))
  const range = Array.from({ length: last - first + 1 }, (_, k) => first + k)
  const ticks = range.map((i) =>
    i < permitWait.boundsMillis.length
      ? boundLabel(permitWait.boundsMillis[i])
      : `>${ms(permitWait.boundsMillis[permitWait.boundsMillis.length - 1])}`
  )
  const plot = (id: string, title: string, histogram: ProviderRecording.Histogram, color: string): Api.Plot => ({
    id: `${name}-${id}`,
    title,
    xLabel: "wait (upper bound of the bucket)",
    yLabel: "attempts",
    x: range.map((_, k) => k),
    xTicks: ticks,
    series: [{ label: "attempts", values: range.map((i) => histogram.counts[i] ?? 0), style: "bars", color }],
    markers: false
  })
  return [
    plot(
      "permit-wait-histogram",
      "Permit wait (rising: the provider slowed, or too few permits)",
      permitWait,
      INK.client
    ),
    plot("limiter-wait-histogram", "Limiter wait (rising: the quota is saturated)", limiterWait, INK.server)
  ]
}

const windowName = (millis: number): string =>
  millis === 1000
    ? "second"
    : millis === 60_000
    ? "minute"
    : millis === 3_600_000
    ? "hour"
    : millis === 86_400_000
    ? "day"
    : ms(millis)

const section = (input: Api.ProviderInput, origin: number, index: number): Api.Section => {
  const { recording, server } = input
  const name = `p${index}`
  const x = xsOf(recording, origin)
  const n = recording.buckets
  const at = (i: number) => x[i] ?? 0
  const plots: Array<Api.Plot> = []

  const starts: Array<Api.Series> = [
    { label: "starts/s (client)", values: rate(recording, recording.starts), style: "solid", color: INK.client }
  ]
  if (server?.arrivals !== undefined) {
    starts.push({
      label: "arrivals/s (server)",
      values: arrivalsOn(recording, server.arrivals),
      style: "dashed",
      color: INK.server
    })
  }
  if (recording.limiterRate !== undefined) {
    starts.push({
      label: `client limit ${round(recording.limiterRate, 1)}/s`,
      values: flat(recording.limiterRate, n),
      style: "dotted",
      color: INK.limit
    })
  }
  if (input.quotaPerSecond !== undefined) {
    starts.push({
      label: `quota ${round(input.quotaPerSecond, 1)}/s`,
      values: flat(input.quotaPerSecond, n),
      style: "dotted",
      color: INK.bound
    })
  }
  if (sum(recording.retries) > 0) {
    // a marker where there were retries, none elsewhere
    const retries = rate(recording, recording.retries).map((r) => (r > 0 ? r : null))
    starts.push({ label: "retries/s", values: retries, style: "points", color: INK.retries })
  }
  plots.push({
    id: `${name}-starts`,
    title: "Starts per second against the quota",
    xLabel: "time since the run began (s)",
    yLabel: "calls per second",
    x,
    series: starts,
    markers: true
  })

  plots.push({
    id: `${name}-waits`,
    title: "Waits and call time over the run (mean per bucket)",
    xLabel: "time since the run began (s)",
    yLabel: "milliseconds",
    x,
    series: [
      { label: "permit wait (ms)", values: means(recording.permitWait), style: "solid", color: INK.client },
      { label: "limiter wait (ms)", values: means(recording.limiterWait), style: "dashed", color: INK.server },
      { label: "call (ms)", values: means(recording.callTime), style: "dotted", color: INK.limit }
    ],
    markers: true
  })

  plots.push(...histograms(recording, name))

  plots.push({
    id: `${name}-permits`,
    title: "Permits held against the permits",
    xLabel: "time since the run began (s)",
    yLabel: "permits",
    x,
    series: [
      {
        label: "held (mean)",
        values: recording.permitsHeld.mean.map((v) => round(v, 3)),
        style: "solid",
        color: INK.client
      },
      { label: "held (most at once)", values: recording.permitsHeld.max, style: "dashed", color: INK.second },
      { label: `permits ${recording.permits}`, values: flat(recording.permits, n), style: "dotted", color: INK.bound }
    ],
    markers: true
  })

  for (const dimension of recording.dimensions) {
    // the units in the trailing window, as the limit counts them (a window shorter than a bucket: the bucket's)
    const span = Math.max(1, Math.round(dimension.windowMillis / recording.bucketMillis))
    const trailing = dimension.units.map((_, i) => {
      let total = 0
      for (let k = Math.max(0, i - span + 1); k <= i; k++) total += dimension.units[k]
      return round(Math.max(0, total), 1)
    })
    const window = windowName(dimension.windowMillis)
    plots.push({
      id: `${name}-dimension-${plots.length}`,
      title: `${dimension.dimension} used against its limit of ${dimension.limit} per ${window}`,
      xLabel: "time since the run began (s)",
      yLabel: `${dimension.dimension} in the last ${window}`,
      x,
      series: [
        {
          label: `${dimension.dimension} charged in the last ${window}`,
          values: trailing,
          style: "solid",
          color: INK.client
        },
        { label: `limit ${dimension.limit}`, values: flat(dimension.limit, n), style: "dotted", color: INK.bound }
      ],
      markers: true
    })
  }

  const outcomes = Object.entries(recording.outcomes)
    .map(([outcome, counts]) => [outcome, sum(counts ?? [])] as const)
    .filter(([, count]) => count > 0)
  const facts: Array<readonly [string, string]> = [
    ["starts", `${sum(recording.starts)}`],
    ["calls ended", outcomes.map(([outcome, count]) => `${outcome} ${count}`).join(", ") || "none"],
    ["retries", `${sum(recording.retries)}`],
    ["upstream pushback (429/5xx)", `${sum(recording.upstreamErrors)}`],
    [
      "pauses asked by the upstream",
      `${sum(recording.pauses)}${sum(recording.pauses) > 0 ? ` (${ms(sum(recording.pausedMillis))} in all)` : ""}`
    ],
    ["permits", `${recording.permits}, at most ${Math.max(0, ...recording.permitsHeld.max)} held at once`],
    [
      "mean waits",
      `permit ${ms(meanOf(recording.permitWait))}, limiter ${ms(meanOf(recording.limiterWait))}, call ${
        ms(meanOf(recording.callTime))
      }`
    ]
  ]
  for (const dimension of recording.dimensions) {
    if (dimension.estimated > 0 && dimension.misestimated > 0) {
      const bias = dimension.corrected / dimension.estimated
      facts.push([
        `${dimension.dimension} estimate error`,
        `${round(Math.abs(bias) * 100, 1)} % ${bias < 0 ? "less" : "more"} used than estimated (${
          round(dimension.estimated, 0)
        } estimated, ${round(dimension.estimated + dimension.corrected, 0)} used), mean size of a correction ${
          round((dimension.misestimated / dimension.estimated) * 100, 1)
        } %`
      ])
    }
  }
  for (const lane of input.lanes ?? []) {
    facts.push([`lane "${lane.lane}"`, lane.reason.replace(`lane "${lane.lane}": `, "")])
  }
  if (server !== undefined) {
    facts.push([
      "server side",
      `${server.requests} requests, ${server.rateLimited} answered 429${
        server.peakInWindow === undefined
          ? ""
          : `, peak ${server.peakInWindow} arrivals in one window${
            server.admitsPerWindow === undefined
              ? ""
              : ` (a window admits ${server.admitsPerWindow}: the quota plus the burst it allows)`
          }`
      }`
    ])
  }
  return {
    provider: recording.provider,
    verdict: input.verdict,
    facts,
    plots,
    upstream: recording.upstreamErrors.flatMap((count, i) => (count > 0 ? [[at(i), count] as const] : [])),
    pauses: recording.pausedMillis.flatMap((
      millis,
      i
    ) => (millis > 0 ? [[at(i), round(at(i) + seconds(millis), 3)] as const] : []))
  }
}

/** @internal */
export const model = (input: Api.Input): Api.Model => {
  const starts = input.providers.flatMap((
    p
  ) => (p.recording.startMillis === undefined ? [] : [p.recording.startMillis]))
  const origin = starts.length === 0 ? 0 : Math.min(...starts)
  return {
    title: input.title,
    notes: input.notes ?? [],
    sections: input.providers.map((p, i) => section(p, origin, i))
  }
}
