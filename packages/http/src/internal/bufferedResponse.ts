/**
 * A response whose body was read whole inside the permit, handed on from memory: the upstream's
 * status and headers, and the bytes. Reading it again costs no I/O and no web stream: `text`
 * decodes once, `json` parses that text, `stream` is one chunk.
 *
 * @internal
 */
import * as Cookies from "@effect/platform/Cookies"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

const utf8 = new TextDecoder()

/** @internal */
export class BufferedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: HttpClientResponse.TypeId = HttpClientResponse.TypeId
  readonly remoteAddress: Option.Option<string> = Option.none()

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly status: number,
    readonly headers: HttpClientResponse.HttpClientResponse["headers"],
    readonly body: Uint8Array
  ) {
    super()
  }

  toJSON(): unknown {
    return IncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.ResponseError({ request: this.request, response: this, reason: "Decode", cause })
  }

  private cachedCookies: Cookies.Cookies | undefined
  get cookies(): Cookies.Cookies {
    return this.cachedCookies ??= Cookies.fromSetCookie(this.headers["set-cookie"] ?? [])
  }

  private cachedText: string | undefined
  get text(): Effect.Effect<string, HttpClientError.ResponseError> {
    return Effect.sync(() => this.cachedText ??= utf8.decode(this.body))
  }

  get json(): Effect.Effect<unknown, HttpClientError.ResponseError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => text === "" ? null : JSON.parse(text) as unknown,
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.ResponseError> {
    return Effect.sync(() =>
      this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength) as ArrayBuffer
    )
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.ResponseError> {
    return this.body.byteLength === 0 ? Stream.empty : Stream.succeed(this.body)
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.ResponseError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.ResponseError> {
    return Effect.tryPromise({
      try: () => new Response(this.body, { headers: this.headers }).formData(),
      catch: (cause) => this.decodeError(cause)
    })
  }
}
