/**
 * The parity table of the Redis connection: options each line checks (accepted, or refused with a
 * reason), command errors built from their fields, and a script sent on connections that cannot
 * reach Redis (a port nothing listens on; a wrong password, the server's port given at run time),
 * run by both lines (`parity.test.ts` here,
 * `effect3.mjs` for the 0.x line). `{ redacted }` stands for a `Redacted` of the text, `{ millis }`
 * for a `Duration` of the milliseconds, each built by the line that runs the case.
 */
export type Value =
  | string
  | number
  | { readonly redacted: string }
  | { readonly millis: number }
  | ReadonlyArray<number>

const options: ReadonlyArray<Record<string, Value | undefined>> = [
  { url: "redis://127.0.0.1:6379" },
  { url: "rediss://user:secret@h:6380/2" },
  { url: "localhost:6379" },
  { url: "not a url" },
  { url: "http://user:secret@127.0.0.1:6379" },
  { url: { redacted: "http//:secret@host" } },
  { url: { redacted: "https://user:secret@host:6379" } },
  { url: { redacted: "redis://host:6379" } },
  {},
  { url: "" },
  { url: "redis://" },
  { url: "redis://h", commandTimeout: "-5 seconds" },
  { url: "redis://h", commandTimeout: "soon" },
  { url: "redis://h", commandTimeout: "300 millis", connectTimeout: "3 seconds" },
  { url: "redis://h", commandTimeout: 0 },
  { url: "redis://h", commandTimeout: Infinity },
  { url: "redis://h", connectTimeout: { millis: 0 } },
  { url: "redis://h", connectTimeout: { millis: 1500 } },
  { url: "redis://h", connectTimeout: [-1, 0] },
  { cluster: [7000], connectTimeout: -1 },
  { cluster: [7000, 7001] },
  { cluster: [] },
  { client: "redis://127.0.0.1:6379" }
]

const errors: ReadonlyArray<{ readonly command: string; readonly cause: string; readonly asError: boolean }> = [
  { command: "script take", cause: "Connection is closed.", asError: true },
  { command: "SCRIPT LOAD take", cause: "Command timed out", asError: true },
  { command: "script settle", cause: "ERR unknown command", asError: false }
]

/** Each refused for want of a connection: the error names the address and the last connection error. */
const offline = (port: number): ReadonlyArray<Record<string, Value>> => [
  { url: "redis://127.0.0.1:1", connectTimeout: { millis: 300 } },
  { url: { redacted: `redis://:wrong-secret@127.0.0.1:${port}` }, connectTimeout: { millis: 300 } }
]

export const table = { options, errors, offline }
