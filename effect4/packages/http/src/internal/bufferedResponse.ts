/**
 * A response whose body was read whole inside the permit, handed on from memory: the upstream's
 * status and headers, and the bytes. Reading it again costs no I/O and no web stream: `text`
 * decodes once, `json` parses that text, `stream` is one chunk.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Cookies from "effect/http/Cookies"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as IncomingMessage from "effect/http/HttpIncomingMessage"
import * as UrlParams from "effect/http/UrlParams"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import type * as Schema from "effect/Schema"
import type * as Socket from "effect/socket/Socket"
import * as Stream from "effect/Stream"

const utf8 = new TextDecoder()

/** @internal */
export class BufferedResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse {
  readonly [IncomingMessage.TypeId]: typeof IncomingMessage.TypeId = IncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId = HttpClientResponse.TypeId
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
      _id: "HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status
    })
  }

  pipe() {
    // eslint-disable-next-line prefer-rest-params
    return pipeArguments(this, arguments)
  }

  get url(): string {
    const url = HttpClientRequest.toUrl(this.request)
    if (Option.isNone(url)) return ""
    url.value.hash = ""
    return url.value.href
  }

  private decodeError(cause: unknown) {
    return new HttpClientError.HttpClientError({
      reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause })
    })
  }

  private cachedCookies: Cookies.Cookies | undefined
  get cookies(): Cookies.Cookies {
    return this.cachedCookies ??= Cookies.fromSetCookie(this.headers["set-cookie"] ?? [])
  }

  private cachedText: string | undefined
  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.sync(() => this.cachedText ??= utf8.decode(this.body))
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({
        try: () => text === "" ? null : JSON.parse(text) as Schema.Json,
        catch: (cause) => this.decodeError(cause)
      }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return Effect.sync(() =>
      this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength) as ArrayBuffer
    )
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    return this.body.byteLength === 0 ? Stream.empty : Stream.succeed(this.body)
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return Effect.tryPromise({
      try: () => new Response(this.body as Uint8Array<ArrayBuffer>, { headers: this.headers }).formData(),
      catch: (cause) => this.decodeError(cause)
    })
  }

  get upgrade(): Effect.Effect<Socket.Socket, HttpClientError.HttpClientError> {
    return Effect.fail(
      new HttpClientError.HttpClientError({
        reason: new HttpClientError.StatusCodeError({
          request: this.request,
          response: this,
          description: "a response read whole hands over no connection"
        })
      })
    )
  }
}
