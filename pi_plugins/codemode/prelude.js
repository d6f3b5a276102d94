// The globals of a codemode script (pi 1.6's docs/codemode.md), evaluated in a fresh
// QuickJS context before each script. The host gives one function, __pi_send(json),
// that hands a message to the harness; answers come back through __pi_settle.
(function () {
  "use strict";
  const send = globalThis.__pi_send;
  const config = JSON.parse(globalThis.__pi_config);
  delete globalThis.__pi_send;
  delete globalThis.__pi_config;
  const MAX_OUTPUT_CALLS = 100000;
  const MAX_VALUE = 262144;
  const MAX_STORE = 1048576;
  const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
  const EXIT = { exit: true };
  const pending = new Map();
  const stored = Object.assign({}, config.store);  // key -> JSON text
  const writes = {};  // key -> JSON text, or null for a deleted key
  let nextId = 0;
  let outputCalls = 0;
  let finished = false;

  function show(value) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  }

  function emit(kind, value) {
    if (finished) return;
    if (++outputCalls > MAX_OUTPUT_CALLS) {
      throw new RangeError("The script made more than " + MAX_OUTPUT_CALLS +
        " text(), image() and console calls; write large data to a file with a tool instead.");
    }
    send(JSON.stringify({ op: "out", kind: kind, value: value }));
  }

  function request(kind, name, args) {
    if (finished) return new Promise(function () {});
    const id = ++nextId;
    return new Promise(function (resolve, reject) {
      pending.set(id, { resolve: resolve, reject: reject });
      send(JSON.stringify({ op: "req", id: id, kind: kind, name: name, args: args === undefined ? null : args }));
    });
  }

  function finish(ok, error) {
    if (finished) return;
    finished = true;
    send(JSON.stringify({ op: "done", ok: ok, error: error, store: ok ? writes : {} }));
  }

  const INTERNAL = /^ {4}at (show|emit|request|finish|describeError|imageOf|line|text|image|store|load|exit|__pi_start|__pi_settle|<eval>) /;

  function describeError(error) {
    if (error === null || typeof error !== "object" || typeof error.message !== "string") {
      return "Error: " + show(error);
    }
    const head = (error.name || "Error") + ": " + error.message;
    const frames = String(error.stack || "").split("\n")
      .filter(function (frame) { return frame.trim() !== "" && !INTERNAL.test(frame) && frame.indexOf("(native)") < 0; })
      .map(function (frame) { return frame.split("<input>").join("codemode.js"); });
    return frames.length ? head + "\n" + frames.join("\n") : head;
  }

  function imageOf(value) {
    let url = value;
    if (value !== null && typeof value === "object") {
      if (value.type === "image" && typeof value.data === "string") {
        url = "data:" + value.mimeType + ";base64," + value.data;
      } else if (value.image_url !== undefined) {
        url = typeof value.image_url === "string" ? value.image_url : value.image_url && value.image_url.url;
      }
    }
    if (typeof url !== "string") {
      throw new TypeError("image() takes a base64 data: URL, an { image_url } object, or an image block { type: \"image\", data, mimeType }");
    }
    if (/^https?:/i.test(url)) {
      throw new TypeError("image() does not fetch remote URLs; pass a base64 data: URL or an image block");
    }
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (!match) throw new TypeError("image() needs a base64 data: URL (data:image/png;base64,...)");
    const mimeType = match[1].toLowerCase();
    if (IMAGE_TYPES.indexOf(mimeType) < 0) {
      throw new TypeError("image() accepts PNG, JPEG, GIF and WebP, not " + mimeType);
    }
    return { mimeType: mimeType, data: match[2] };
  }

  const toolFunctions = {};
  for (const tool of config.tools) {
    toolFunctions[tool.ident] = function (args) { return request("tool", tool.name, args === undefined ? {} : args); };
  }
  globalThis.tools = new Proxy(toolFunctions, {
    get: function (target, name) {
      if (typeof name !== "string" || Object.prototype.hasOwnProperty.call(target, name)) return target[name];
      if (name === "then" || name === "toJSON") return undefined;
      throw new TypeError("tools." + name + " is not a tool here. Tools: " + Object.keys(target).join(", ") +
        ". ALL_TOOLS lists every tool and searchTools(query) finds tools by topic.");
    },
  });

  globalThis.text = function text(value) { emit("text", show(value)); };
  globalThis.image = function image(value) { emit("image", imageOf(value)); };
  const line = function line() { emit("console", Array.prototype.map.call(arguments, show).join(" ")); };
  globalThis.console = { log: line, info: line, warn: line, error: line, debug: line };
  globalThis.exit = function exit() { finish(true); throw EXIT; };

  globalThis.store = function store(key, value) {
    if (typeof key !== "string") throw new TypeError("store() takes a string key");
    if (value === undefined) {
      delete stored[key];
      writes[key] = null;
      return;
    }
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError("store(\"" + key + "\") needs a JSON value");
    if (json.length > MAX_VALUE) {
      throw new RangeError("store(\"" + key + "\") value is " + json.length + " characters of JSON, over the limit of " +
        MAX_VALUE + ". Keep small state (IDs, cursors, summaries); show images with image() and write large data to a file with a tool.");
    }
    let total = json.length;
    for (const other in stored) if (other !== key) total += stored[other].length;
    if (total > MAX_STORE) {
      throw new RangeError("store(\"" + key + "\") would make the stored values " + total +
        " characters of JSON, over the limit of " + MAX_STORE + " for all values together.");
    }
    stored[key] = json;
    writes[key] = json;
  };
  globalThis.load = function load(key) {
    return Object.prototype.hasOwnProperty.call(stored, key) ? JSON.parse(stored[key]) : undefined;
  };

  globalThis.ALL_TOOLS = config.all_tools;
  globalThis.searchTools = function (query, options) { return request("searchTools", String(query), options || {}); };
  globalThis.describeTool = function (name) { return request("describeTool", String(name), null); };
  globalThis.describeNamespace = function (name) { return request("describeNamespace", String(name), null); };
  const model = function (method) { return function () { return request("models", method, Array.prototype.slice.call(arguments)); }; };
  globalThis.models = {
    getModelsOfType: model("getModelsOfType"), getAvailableOfType: model("getAvailableOfType"),
    getModelOfType: model("getModelOfType"), classify: model("classify"), generateImages: model("generateImages"),
  };

  globalThis.__pi_settle = function __pi_settle(id, ok, json) {
    const waiting = pending.get(id);
    if (waiting === undefined) return;
    pending.delete(id);
    const value = json === "" ? undefined : JSON.parse(json);
    if (ok) waiting.resolve(value);
    else waiting.reject(new Error(value));
  };
  globalThis.__pi_pending = function () { return pending.size; };
  globalThis.__pi_start = function __pi_start(main) {
    main().then(
      function (value) { if (value !== undefined) emit("text", show(value)); finish(true); },
      function (error) { if (error === EXIT) finish(true); else finish(false, describeError(error)); });
  };
  globalThis.__pi_fail = function (error) { finish(false, describeError(error)); };
})();
