/**
 * The client's options as `Config`: the keys of `ClientOptions` (BASE_URL, USER_AGENT,
 * MAX_BODY_SIZE, ERROR_BODY_LIMIT, RETRY_AFTER_FALLBACK/MIN/MAX, STREAM_IDLE_TIMEOUT,
 * TRACE_PROPAGATION, PRECONNECT, SCHEDULER), each read as text and decoded through the same schema as the
 * options; only a wholly absent section is missing data.
 *
 * @internal
 */
import { OptionSchema } from "@sluice/options"
import type * as Config from "effect/Config"
import type * as Api from "../ProviderHttpClient.js"
import { ClientOptions } from "./options.js"

/** @internal */
export const config: Config.Config<Api.Options> = OptionSchema.config(ClientOptions, "an http client")
