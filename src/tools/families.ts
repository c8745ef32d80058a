/**
 * The tool families, each loaded when first needed: a server offers every tool from the start
 * (its name, description and schemas come from the list built with the source) but loads a
 * family's code and schemas only when one of its tools is called. In registration order,
 * which is the order of tools/list.
 *
 * @module
 */

import type { ToolRegistry } from "../mcp/registry.ts";

/** What registers a family's tools. */
type Register = (registry: ToolRegistry) => void;

/** Each family's loader. The batch goes last: it reaches the others through the registry. */
export const FAMILIES = {
  discovery: () => import("./discovery.ts").then((m): Register => m.registerDiscoveryTools),
  input: () => import("./input.ts").then((m): Register => m.registerInputTools),
  jobs: () => import("./jobs.ts").then((m): Register => m.registerJobTools),
  wait: () => import("./wait.ts").then((m): Register => m.registerWaitTools),
  capture: () => import("./capture.ts").then((m): Register => m.registerCaptureTools),
  search: () => import("./search.ts").then((m): Register => m.registerSearchTools),
  lifecycle: () => import("./lifecycle.ts").then((m): Register => m.registerLifecycleTools),
  layout: () => import("./layout.ts").then((m): Register => m.registerLayoutTools),
  moves: () => import("./moves.ts").then((m): Register => m.registerMoveTools),
  buffers: () => import("./buffers.ts").then((m): Register => m.registerBufferTools),
  settings: () => import("./settings.ts").then((m): Register => m.registerSettingsTools),
  display: () => import("./display.ts").then((m): Register => m.registerDisplayTools),
  teardown: () => import("./teardown.ts").then((m): Register => m.registerTeardownTools),
  batch: () => import("./batch.ts").then((m): Register => m.registerBatchTools),
} as const;

/** One family's name. */
export type Family = keyof typeof FAMILIES;
