// Pure: imports nothing from Effect, so that a build for another Effect major reuses it unchanged.
// The value syntaxes of rate-limit headers: counts, Go durations, RFC 3339 instants.
/**
 * A count: a non-negative decimal integer, exactly representable.
 *
 * @internal
 */
export const parseCount = (text: string): number | undefined => {
  const value = text.trim()
  if (!/^\d+$/.test(value)) return undefined
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : undefined
}

const goUnitMillis: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "\u00b5s": 1e-3, // MICRO SIGN, as Go accepts
  "\u03bcs": 1e-3, // GREEK SMALL LETTER MU, as Go accepts
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000
}

/**
 * A duration in Go's `time.Duration.String` / `time.ParseDuration` syntax, in milliseconds:
 * `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with units ns, us (µs), ms, s, m, h, or a bare `0`. OpenAI's
 * reset headers are written this way (`1s`, `6m0s`, `20ms`, `1h2m3.5s`); reading only the first
 * number would take `6m0s` for 6 seconds.
 *
 * @internal
 */
export const parseGoDuration = (text: string): number | undefined => {
  let rest = text.trim()
  let sign = 1
  if (rest.startsWith("-") || rest.startsWith("+")) {
    sign = rest.startsWith("-") ? -1 : 1
    rest = rest.slice(1)
  }
  if (rest === "0") return 0
  if (rest === "") return undefined
  let total = 0
  const segment = /^(\d*)(?:\.(\d*))?([a-z\u00b5\u03bc]+)/
  while (rest !== "") {
    const match = segment.exec(rest)
    if (match === null) return undefined
    const [whole, integer = "", fraction = "", unit = ""] = match
    if (integer === "" && fraction === "") return undefined // "." or "s" alone
    const millis = goUnitMillis[unit]
    if (millis === undefined) return undefined
    total += Number(integer === "" ? "0" : integer) * millis
    if (fraction !== "") total += Number(`0.${fraction}`) * millis
    rest = rest.slice(whole.length)
  }
  // Rounded to the nanosecond, Go's own resolution, so that binary fractions do not leak
  // (0.3 × 1000 is 300.00000000000006 in floating point)
  return sign * Math.round(total * 1e6) / 1e6
}

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/**
 * An RFC 3339 date-time (`2025-08-21T12:40:59Z`, `2026-09-27T07:08:00-05:00`, fractions allowed) as
 * epoch milliseconds, fractions rounded up to the millisecond. Stricter than `Date.parse`, which
 * accepts many shapes RFC 3339 does not.
 *
 * @internal
 */
export const parseRfc3339 = (text: string): number | undefined => {
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/
    .exec(text.trim())
  if (match === null) return undefined
  const [, y, mo, d, h, mi, s, fraction, zulu, offsetSign, oh, om] = match
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number)
  if (
    month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 ||
    second > 60 // 60: a leap second, as RFC 3339 allows
  ) return undefined
  let offsetMinutes = 0
  if (zulu === undefined) {
    const [offsetHours, offsetMins] = [Number(oh), Number(om)]
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (offsetSign === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const fractionMillis = fraction === undefined ? 0 : Math.ceil(Number(`0.${fraction}`) * 1000)
  return Date.UTC(year, month - 1, day, hour, minute, second) + fractionMillis - offsetMinutes * 60_000
}
