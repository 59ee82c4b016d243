// Restores aws-cdk-lib's built-in CloudFormation validator from a snapshot instead of building it.
//
// Loaded with `node --require` in every jsii runtime of a sandboxed worker. The validator
// (@aws/cloudformation-validate, a Rust engine compiled to WebAssembly) spends about 3.4 CPU
// seconds building its rule engine in every fresh runtime; the engine is a pure function of
// the WebAssembly module and its configuration. A trusted host process (no model code, see
// `plumbline.cdk.runtime.ensure_validator_snapshot`) builds it once with this same file in
// "write" mode and saves the module's linear memory, the engine's address and the JS values of
// its reference table. A sandboxed runtime then restores that memory instead of building:
// the engine state is byte for byte the one construction produces, so findings are identical.
//
// The snapshot is used only for the exact configuration and WebAssembly bytes it was made
// from, only for the first engine of a runtime (before any other engine exists), and only when
// every table value can be recreated; otherwise the engine is built as usual.
'use strict';

// Baseline-compiled WebAssembly only: the validation itself is short, and V8's optimizing
// tier recompiled the 8.8 MB module's hot functions in background threads for about 1.5 CPU
// seconds per runtime, more than it saved (the only WebAssembly in a jsii runtime is this one).
// Not a NODE_OPTIONS flag: Node.js accepts few V8 flags there.
require('v8').setFlagsFromString('--liftoff-only');

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const Module = require('module');

const DIRECTORY = process.env.PLUMBLINE_CFN_VALIDATE_SNAPSHOT;
const WRITE = process.env.PLUMBLINE_CFN_VALIDATE_SNAPSHOT_WRITE === '1';
const PACKAGE_INDEX = path.join('@aws', 'cloudformation-validate', 'index.js');
const GLOBALS = ['globalThis', 'performance', 'crypto'];

const digest = (data) => crypto.createHash('sha256').update(data).digest('hex');

let instance = null; // the validator's WebAssembly instance, once created
let moduleDigest = null;
let engines = 0; // engines built or restored in this runtime

function watchWebAssembly() {
  const OriginalModule = WebAssembly.Module;
  const OriginalInstance = WebAssembly.Instance;
  const digests = new WeakMap();
  function PatchedModule(bytes) {
    const created = new OriginalModule(bytes);
    digests.set(created, digest(Buffer.from(bytes.buffer || bytes, bytes.byteOffset, bytes.byteLength)));
    return created;
  }
  PatchedModule.prototype = OriginalModule.prototype;
  Object.assign(PatchedModule, OriginalModule);
  for (const name of ['exports', 'imports', 'customSections']) PatchedModule[name] = OriginalModule[name];
  function PatchedInstance(compiled, imports) {
    const created = new OriginalInstance(compiled, imports);
    if (created.exports && typeof created.exports.wasmcompositeengine_new === 'function') {
      instance = created;
      moduleDigest = digests.get(compiled) || null;
    }
    return created;
  }
  PatchedInstance.prototype = OriginalInstance.prototype;
  WebAssembly.Module = PatchedModule;
  WebAssembly.Instance = PatchedInstance;
}

function describeTable(table) {
  const values = [];
  for (let index = 0; index < table.length; index++) {
    const value = table.get(index);
    const name = GLOBALS.find((candidate) => globalThis[candidate] === value && value !== undefined);
    if (name !== undefined) values.push({ global: name });
    else if (value === undefined) values.push({ undefined: true });
    else if (value === null || ['boolean', 'string', 'number'].includes(typeof value)) values.push({ value });
    else return null; // a value this file cannot recreate: no snapshot
  }
  return values;
}

function tableValue(entry) {
  if (entry.global !== undefined) return globalThis[entry.global];
  return entry.undefined ? undefined : entry.value;
}

function write(config, engine) {
  if (instance === null) return;
  const exports = instance.exports;
  const table = describeTable(exports.__wbindgen_externrefs);
  if (table === null || moduleDigest === null) return;
  fs.mkdirSync(DIRECTORY, { recursive: true });
  fs.writeFileSync(path.join(DIRECTORY, 'memory.bin'), Buffer.from(exports.memory.buffer));
  const meta = { module: moduleDigest, config: digest(config), pointer: engine.__wbg_ptr, table };
  fs.writeFileSync(path.join(DIRECTORY, 'snapshot.json'), JSON.stringify(meta));
}

function restore(config, WasmClass) {
  if (instance === null || engines > 0 || DIRECTORY === undefined) return null;
  let meta;
  try {
    meta = JSON.parse(fs.readFileSync(path.join(DIRECTORY, 'snapshot.json'), 'utf-8'));
  } catch {
    return null;
  }
  if (meta.module !== moduleDigest || meta.config !== digest(config)) return null;
  const memory = instance.exports.memory;
  const table = instance.exports.__wbindgen_externrefs;
  const file = path.join(DIRECTORY, 'memory.bin');
  const size = fs.statSync(file).size;
  if (size % 65536 !== 0 || size < memory.buffer.byteLength || table.length > meta.table.length) {
    return null;
  }
  memory.grow((size - memory.buffer.byteLength) / 65536);
  // Straight into the WebAssembly memory: no intermediate copy of its ~200 MB.
  const fd = fs.openSync(file, 'r');
  try {
    const target = new Uint8Array(memory.buffer);
    for (let done = 0; done < size; ) {
      const read = fs.readSync(fd, target, done, size - done, done);
      if (read <= 0) throw new Error(`validator snapshot ${file} ended early`);
      done += read;
    }
  } finally {
    fs.closeSync(fd);
  }
  if (table.length < meta.table.length) table.grow(meta.table.length - table.length);
  meta.table.forEach((entry, index) => table.set(index, tableValue(entry)));
  const engine = Object.create(WasmClass.prototype);
  engine.__wbg_ptr = meta.pointer;
  return engine;
}

function patchCompositeEngine(exported, bridge) {
  const Original = exported.CompositeEngine;
  const WasmClass = bridge.WasmCompositeEngine;
  if (typeof Original !== 'function' || typeof WasmClass !== 'function') return;
  class CompositeEngine extends Original {
    constructor(config) {
      const text = JSON.stringify(config === undefined ? null : config);
      const restored = WRITE ? null : restore(text, WasmClass);
      if (restored === null) {
        super(config);
        if (WRITE && engines === 0) write(text, this.inner);
      } else {
        const engine = Object.create(new.target.prototype);
        engine.inner = restored;
        engines += 1;
        CompositeEngine.restoredFromSnapshot += 1;
        return engine;
      }
      engines += 1;
    }
  }
  CompositeEngine.restoredFromSnapshot = 0; // engines restored rather than built (for tests)
  exported.CompositeEngine = CompositeEngine;
  // Restoring replaces the whole WebAssembly memory: never once anything else lives in it.
  for (const name of ['RegoEngine', 'CelEngine', 'SchemaValidator', 'TemplateModel']) {
    const Other = exported[name];
    if (typeof Other !== 'function') continue;
    exported[name] = class extends Other {
      constructor(...args) {
        super(...args);
        engines += 1;
      }
    };
  }
}

watchWebAssembly();
const originalLoad = Module._load;
Module._load = function load(request, parent, isMain) {
  const loaded = originalLoad.apply(this, arguments);
  if (typeof request !== 'string' || !request.includes('cloudformation-validate')) return loaded;
  try {
    const filename = Module._resolveFilename(request, parent, isMain);
    if (filename.endsWith(PACKAGE_INDEX) && !loaded.__plumblineSnapshot) {
      const bridge = originalLoad.call(this, path.join(path.dirname(filename), 'bindings_wasm.js'), parent, false);
      patchCompositeEngine(loaded, bridge);
      Object.defineProperty(loaded, '__plumblineSnapshot', { value: true });
    }
  } catch {
    // not the validator package, or not resolvable here: leave it alone
  }
  return loaded;
};
