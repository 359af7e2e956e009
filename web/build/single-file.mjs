#!/usr/bin/env node
// Turns a built page (HTML + its ES modules + the wasm-bindgen output) into one
// self-contained HTML file that works opened straight from disk (file://),
// where a page can neither import modules nor fetch a .wasm (origin null).
//
//   node web/build/single-file.mjs IN.html OUT.html
//
// What it does, and nothing more:
//   * <link rel="stylesheet" href="X"> becomes <style>…</style>;
//   * <script type="module" src="X"></script> becomes one inline module script:
//     X and every module it imports (relative paths only) are wrapped, in
//     dependency order, in functions that return their exports;
//   * wasm-bindgen's default `new URL('…_bg.wasm', import.meta.url)` is replaced
//     by the .wasm's bytes, inlined as base64, so init() needs no fetch.
// The module syntax accepted is deliberately small (single-line `import … from`,
// `export function|class|const|let|async function`, `export { a, b as default }`);
// anything else is an error naming the file and line, never a silently broken page.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';

const die = (msg) => {
  console.error(`[single-file] ERROR: ${msg}`);
  process.exit(1);
};

const [inHtml, outHtml] = process.argv.slice(2);
if (!inHtml || !outHtml) die('usage: node web/build/single-file.mjs IN.html OUT.html');
const baseDir = path.dirname(path.resolve(inHtml));
const read = (file) => {
  if (!existsSync(file)) die(`${path.relative(process.cwd(), file)} not found`);
  return readFileSync(file);
};

const IDENT = '[A-Za-z_$][\\w$]*';
const IMPORT_RE = /^import\s+(.+?)\s+from\s+(['"])(\.{1,2}\/[^'"]+)\2\s*;?\s*$/;
const EXPORT_DECL_RE = new RegExp(`^export\\s+((?:async\\s+)?function\\*?|class|const|let)\\s+(${IDENT})`);
const EXPORT_LIST_RE = /^export\s*\{([^}]*)\}\s*;?\s*$/;
const WASM_URL_RE = /new URL\((['"])([\w.-]+_bg\.wasm)\1,\s*import\.meta\.url\)/g;

function importBindings(clause, modVar, where) {
  // `def`, `{ a, b as c }`, `def, { a }`, `* as ns`
  const m = clause.match(new RegExp(`^(?:(${IDENT})\\s*,?\\s*)?(?:\\{([^}]*)\\}|\\*\\s+as\\s+(${IDENT}))?$`));
  if (!m || (!m[1] && m[2] === undefined && !m[3])) die(`${where}: unsupported import clause "${clause}"`);
  const out = [];
  if (m[3]) out.push(`const ${m[3]} = ${modVar};`);
  const props = [];
  if (m[1]) props.push(`default: ${m[1]}`);
  for (const part of (m[2] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const p = part.match(new RegExp(`^(${IDENT})(?:\\s+as\\s+(${IDENT}))?$`));
    if (!p) die(`${where}: unsupported import specifier "${part}"`);
    props.push(p[2] ? `${p[1]}: ${p[2]}` : p[1]);
  }
  if (props.length) out.push(`const { ${props.join(', ')} } = ${modVar};`);
  return out.join(' ');
}

const modules = new Map(); // absolute path -> { varName, code }
let wasmInlined = 0;

function load(file, stack = []) {
  if (modules.has(file)) return modules.get(file).varName;
  if (stack.includes(file)) die(`import cycle: ${[...stack, file].join(' -> ')}`);
  const rel = path.relative(baseDir, file);
  let src = read(file).toString('utf8');
  src = src.replace(WASM_URL_RE, (_m, _q, name) => {
    const wasmFile = path.join(path.dirname(file), name);
    const b64 = read(wasmFile).toString('base64');
    wasmInlined += 1;
    return `__tickwiseWasmBytes(${JSON.stringify(b64)})`;
  });
  const exportsList = [];
  const lines = src.split('\n').map((line, i) => {
    const where = `${rel}:${i + 1}`;
    const im = line.match(IMPORT_RE);
    if (im) {
      const target = path.resolve(path.dirname(file), im[3]);
      return importBindings(im[1].trim(), load(target, [...stack, file]), where);
    }
    const ed = line.match(EXPORT_DECL_RE);
    if (ed) {
      exportsList.push(ed[2]);
      return line.replace(/^export\s+/, '');
    }
    const el = line.match(EXPORT_LIST_RE);
    if (el) {
      for (const part of el[1].split(',').map((s) => s.trim()).filter(Boolean)) {
        const p = part.match(new RegExp(`^(${IDENT})(?:\\s+as\\s+(${IDENT}))?$`));
        if (!p) die(`${where}: unsupported export specifier "${part}"`);
        exportsList.push(p[2] ? `${p[2]}: ${p[1]}` : p[1]);
      }
      return '';
    }
    if (/^\s*(import|export)\b(?!\.meta)/.test(line) || /\bimport\s*\(/.test(line)) {
      die(`${where}: unsupported module syntax: ${line.trim()}`);
    }
    if (/\bimport\.meta\b/.test(line)) die(`${where}: import.meta left after inlining: ${line.trim()}`);
    return line;
  });
  const varName = `__module${modules.size}`;
  const code = `// ---- ${rel}\nconst ${varName} = (() => {\n${lines.join('\n')}\nreturn { ${exportsList.join(', ')} };\n})();\n`;
  modules.set(file, { varName, code });
  return varName;
}

let html = read(path.resolve(inHtml)).toString('utf8');

html = html.replace(/<link\s+rel="stylesheet"\s+href="([^"]+)"\s*>/g, (_m, href) => {
  const css = read(path.resolve(baseDir, href)).toString('utf8');
  if (/<\/style/i.test(css)) die(`${href} contains "</style"`);
  return `<style>\n${css}</style>`;
});

let scripts = 0;
html = html.replace(/<script\s+type="module"\s+src="([^"]+)"\s*><\/script>/g, (_m, src) => {
  scripts += 1;
  load(path.resolve(baseDir, src));
  const helper = `const __tickwiseWasmBytes = (b64) => {
  const s = atob(b64);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i += 1) bytes[i] = s.charCodeAt(i);
  return bytes;
};\n`;
  const js = helper + [...modules.values()].map((m) => m.code).join('\n');
  if (/<\/script|<!--/i.test(js)) die(`the bundle for ${src} contains "</script" or "<!--"`);
  return `<script type="module">\n${js}</script>`;
});
if (scripts !== 1) die(`expected exactly one <script type="module" src=…> in ${inHtml}, found ${scripts}`);
if (wasmInlined !== 1) die(`expected exactly one wasm-bindgen wasm URL to inline, found ${wasmInlined}`);
if (/<(?:script|link)[^>]+(?:src|href)="(?!data:)[^"]*"/i.test(html)) {
  die(`${inHtml} still references an external script or stylesheet after inlining`);
}
writeFileSync(outHtml, html);
console.error(`[single-file] ${outHtml}: ${html.length} bytes (${modules.size} modules, wasm inlined)`);
