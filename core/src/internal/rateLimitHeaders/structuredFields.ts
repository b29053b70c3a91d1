// Pure: imports nothing from Effect, so that a build for another Effect major reuses it unchanged.
// Structured Field lists of items (RFC 9651), the syntax of the IETF RateLimit and RateLimit-Policy
// fields (draft-ietf-httpapi-ratelimit-headers-10).

/** @internal */
export type BareItem =
  | { readonly type: "integer"; readonly value: number }
  | { readonly type: "decimal"; readonly value: number }
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "token"; readonly value: string }
  | { readonly type: "bytes"; readonly value: string }
  | { readonly type: "boolean"; readonly value: boolean }
  | { readonly type: "date"; readonly value: number }

/** @internal */
export interface SfItem {
  readonly value: BareItem
  readonly params: ReadonlyMap<string, BareItem>
}

/**
 * Parses a Structured Field List of Items (RFC 9651 §4.2.1), or answers why not. Inner lists are
 * refused: neither field uses them. A field that fails to parse is ignored as a whole, as §4.2 asks.
 *
 * @internal
 */
export const parseSfList = (input: string): ReadonlyArray<SfItem> | string => {
  let i = 0
  const peek = () => input[i]
  const fail = (what: string) => `${what} at offset ${i}`
  const skipSp = () => {
    while (input[i] === " ") i++
  }
  const skipOws = () => {
    while (input[i] === " " || input[i] === "\t") i++
  }

  const parseNumber = (): BareItem | string => {
    const match = /^-?\d+(?:\.\d+)?/.exec(input.slice(i))
    if (match === null) return fail("expected a number")
    const text = match[0]
    const [integer, fraction] = text.replace("-", "").split(".")
    if (fraction === undefined ? integer.length > 15 : integer.length > 12 || fraction.length > 3) {
      return fail("number too long")
    }
    if (input[i + text.length] === ".") return fail("expected digits after '.'")
    i += text.length
    return { type: fraction === undefined ? "integer" : "decimal", value: Number(text) }
  }

  const parseBareItem = (): BareItem | string => {
    const c = peek()
    if (c === undefined) return fail("expected an item")
    if (c === "-" || (c >= "0" && c <= "9")) return parseNumber()
    if (c === "\"") {
      i++
      let out = ""
      for (;;) {
        const ch = input[i++]
        if (ch === undefined) return fail("unterminated string")
        if (ch === "\\") {
          const next = input[i++]
          if (next !== "\"" && next !== "\\") return fail("bad escape in string")
          out += next
        } else if (ch === "\"") {
          return { type: "string", value: out }
        } else if (ch < " " || ch > "~") {
          return fail("character not allowed in a string")
        } else {
          out += ch
        }
      }
    }
    if (c === ":") {
      const end = input.indexOf(":", i + 1)
      if (end < 0) return fail("unterminated byte sequence")
      const bytes = input.slice(i + 1, end)
      if (!/^[A-Za-z0-9+/=]*$/.test(bytes)) return fail("not base64 in a byte sequence")
      i = end + 1
      return { type: "bytes", value: bytes }
    }
    if (c === "?") {
      const b = input[i + 1]
      if (b !== "0" && b !== "1") return fail("expected ?0 or ?1")
      i += 2
      return { type: "boolean", value: b === "1" }
    }
    if (c === "@") {
      i++
      const n = parseNumber()
      if (typeof n === "string") return n
      if (n.type !== "integer") return fail("a date must be an integer")
      return { type: "date", value: n.value }
    }
    const token = /^[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*/.exec(input.slice(i))
    if (token === null) return fail("expected an item")
    i += token[0].length
    return { type: "token", value: token[0] }
  }

  const parseParams = (): ReadonlyMap<string, BareItem> | string => {
    const params = new Map<string, BareItem>()
    while (peek() === ";") {
      i++
      skipSp()
      const key = /^[a-z*][a-z0-9_\-.*]*/.exec(input.slice(i))
      if (key === null) return fail("expected a parameter key")
      i += key[0].length
      let value: BareItem = { type: "boolean", value: true }
      if (peek() === "=") {
        i++
        const parsed = parseBareItem()
        if (typeof parsed === "string") return parsed
        value = parsed
      }
      params.set(key[0], value) // a repeated key: the last one wins (§4.2.3.2)
    }
    return params
  }

  const items: Array<SfItem> = []
  skipSp()
  if (i >= input.length) return "empty field"
  for (;;) {
    if (peek() === "(") return fail("an inner list where an item is expected")
    const value = parseBareItem()
    if (typeof value === "string") return value
    const params = parseParams()
    if (typeof params === "string") return params
    items.push({ value, params })
    skipOws()
    if (i >= input.length) return items
    if (peek() !== ",") return fail("expected ','")
    i++
    skipOws()
    if (i >= input.length) return fail("trailing ','")
  }
}
