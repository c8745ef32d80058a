/**
 * Tools declared lazily: listed and selected from the start, their code and schemas loaded on
 * first use. What the registry (registry.ts) holds for one until its family loads, and what it
 * gives the SDK as such a tool's schemas.
 *
 * @module
 */

import type { z } from "zod";
import type { AnyTool, LazyTool } from "./tool_spec.ts";

/**
 * What stands in for `lazy` among the tools on offer until its family loads: its name, title,
 * toolset, description and annotations; its schemas and its run throw (the registry loads the
 * tool first).
 */
export function lazyStub(lazy: LazyTool): AnyTool {
  const notLoaded = (): never => {
    throw new Error(`${lazy.name} is not loaded yet (ToolRegistry.loaded loads it)`);
  };
  return {
    name: lazy.name,
    title: lazy.title,
    toolset: lazy.toolset,
    description: lazy.description,
    annotations: lazy.annotations,
    get inputSchema() {
      return notLoaded();
    },
    get outputSchema() {
      return notLoaded();
    },
    run: notLoaded,
  };
}

/**
 * What the SDK is given as a lazily declared tool's schema: a Standard Schema whose checks
 * load the tool (`loaded`, the registry's) and use its real schema. The SDK never converts it
 * (tools/list comes from the list built with the source, and so does the output schema it
 * projects results with).
 */
export function lazySchema(
  name: string,
  which: "input" | "output",
  loaded: (name: string) => Promise<AnyTool | undefined>,
): z.ZodObject {
  const validate = async (value: unknown) => {
    const tool = await loaded(name);
    if (!tool) throw new Error(`${name} is not on offer`);
    return await (which === "input" ? tool.inputSchema : tool.outputSchema)["~standard"]
      .validate(value);
  };
  return { "~standard": { version: 1, vendor: "tmux-mcp", validate } } as unknown as z.ZodObject;
}
