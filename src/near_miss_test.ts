import assert from "node:assert/strict";
import { meantName } from "./near_miss.ts";

const WAIT = [
  "paneId",
  "patterns",
  "regex",
  "matchCase",
  "stop",
  "since",
  "timeoutMs",
  "socket_name",
];

Deno.test("meantName: case, _ and -, a plural, a unit, a slip", () => {
  assert.equal(meantName("pane_id", WAIT), "paneId");
  assert.equal(meantName("PANEID", WAIT), "paneId");
  assert.equal(meantName("socketName", WAIT), "socket_name");
  assert.equal(meantName("match-case", WAIT), "matchCase");
  assert.equal(meantName("pattern", WAIT), "patterns");
  assert.equal(meantName("timeout", WAIT), "timeoutMs");
  assert.equal(meantName("timeout_ms", WAIT), "timeoutMs");
  assert.equal(meantName("pane", WAIT), "paneId");
  assert.equal(meantName("lines", ["paneId", "maxLines"]), "maxLines");
  assert.equal(meantName("paneld", WAIT), "paneId"); // a slip
  assert.equal(meantName("pnaeId", WAIT), "paneId"); // two letters swapped
  assert.equal(meantName("regexp", WAIT), "regex");
  assert.equal(meantName("timeotMs", WAIT), "timeoutMs");
  assert.equal(meantName("windowId", ["session", "window"]), "window");
  assert.equal(meantName("sessionName", ["session", "name"]), "session", "its first word");
  // A common last word says nothing: name is not socket_name's, nor session_name buffer's name.
  assert.equal(meantName("name", ["paneId", "socket_name"]), null);
  assert.equal(meantName("session_name", ["name", "socket_name"]), null);
  // Nor is a last word of a long name: pane of maxMatchesPerPane.
  assert.equal(meantName("pane", ["pattern", "maxMatchesPerPane"]), null);
  assert.equal(meantName("directory", ["name", "startDirectory"]), "startDirectory");
  assert.equal(meantName("target", ["paneId", "targetPaneId"]), "targetPaneId");
});

Deno.test("meantName: nothing where nothing resembles, or where two do", () => {
  assert.equal(meantName("bogus", WAIT), null);
  assert.equal(meantName("x", WAIT), null);
  assert.equal(meantName("", WAIT), null);
  assert.equal(meantName("___", WAIT), null);
  assert.equal(meantName("paneId", WAIT), null, "a known field is no slip");
  // Short names are not stretched to a prefix or a slip ("id" could be anything).
  assert.equal(meantName("id", WAIT), null);
  assert.equal(meantName("stp", WAIT), null);
  // Two fields equally near: neither is named.
  assert.equal(meantName("target", ["targetPane", "targetWindow"]), null);
  assert.equal(meantName("size", ["sizeX", "sizeY"]), null);
  assert.equal(meantName("name", ["names", "named"]), "names", "a plural is nearer than a slip");
  // A nearer tier wins over a farther one with one candidate each.
  assert.equal(meantName("window", ["windowId", "windows"]), "windows");
});

Deno.test("meantName: a key of megabytes is compared with nothing", () => {
  // Compared letter by letter with every field, it held a call for minutes.
  assert.equal(meantName(`paneId${"x".repeat(8 << 20)}`, WAIT), null);
  assert.equal(meantName("pane_idx", WAIT), "paneId");
});
