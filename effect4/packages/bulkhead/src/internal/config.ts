/**
 * The options as `Config`: the keys of `Settings` (PERMITS, MAX_PERMITS, MAX_WAITING, MAX_WAIT,
 * ORDER), each read as text and decoded through the same schema as the options; only a wholly
 * absent section is missing data.
 *
 * @internal
 */
import { OptionSchema } from "@sluice/options"
import type * as Config from "effect/Config"
import type * as Api from "../Bulkhead.js"
import { Settings } from "./validation.js"

/** @internal */
export const config: Config.Config<Api.Settings> = OptionSchema.config(Settings, "a bulkhead")
