/** @internal */
export { Recorder } from "@sluice/core/Recording"
