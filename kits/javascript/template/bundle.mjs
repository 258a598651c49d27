// Makes one ES module of the bot for componentize-js, which takes one file.
//   node bundle.mjs ENTRY [--wasi] [--rolldown DIR] > OUT
// Every local module ('./x.js') is wrapped in a function, in dependency
// order, and hands its exports to its importers as an object; imports of
// 'wasi:...' move to the top; the entry's own code stays at the top level,
// so its exports are the component's. --wasi puts io-wasi.js in io.js's
// place. Names never clash between modules.
//
// npm packages (a bare import: 'lodash-es', '@scope/pkg'), installed in the
// bot folder's node_modules/ with `npm install PACKAGE`, are bundled in by
// rolldown (the producer's own copy, DIR: build.sh passes the kit cache's),
// with the 'wasi:' imports left as they are. Without node_modules/ or
// without rolldown a bare import is refused with what to do; so is a
// 'node:' import in --wasi (the component has no Node).
//
// It reads the ES module syntax the kit uses, line by line: import
// {a, b as c} / * as ns / a side effect from './x.js' (from a package too,
// and import x / import x, { a } from a package); export function,
// class, const, let or var NAME; export { a, b as c }. Anything else with
// import or export at the start of a line is refused with its place.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const wasi = args.includes('--wasi');
const rolldownAt = args.indexOf('--rolldown');
const rolldownDir = rolldownAt >= 0 ? args[rolldownAt + 1] : null;
const entry = resolve(args.find((a, i) => !a.startsWith('--') && i !== rolldownAt + 1) ?? 'component.js');
const root = dirname(entry);
const packages = new Set(); // bare specifiers imported

const modules = new Map(); // path → { name, code, exports }, dependencies first
const hoisted = new Set(); // import lines of non-local modules
const visiting = new Set();

function fail(path, line, why) {
  console.error(`bundle.mjs: ${relative(root, path)}:${line}: ${why}`);
  process.exit(1);
}

function place(from, spec) {
  let path = resolve(dirname(from), spec);
  if (wasi && path === join(root, 'io.js')) path = join(root, 'io-wasi.js');
  return path;
}

const bindingsOf = (list) =>
  list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const [name, alias] = s.split(/\s+as\s+/);
    return alias ? `${name}: ${alias}` : name;
  });

// Whether a one-line declaration has a comma outside brackets and strings
// (`const a = 1, b = 2`).
function declaresMore(line) {
  let depth = 0, quote = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '/' && line[i + 1] === '/') break;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) return true;
  }
  return false;
}

// Turns one module into statements: imports become destructurings of
// earlier modules, `export` keywords go, export names are collected.
function load(path, isEntry) {
  if (modules.has(path)) return modules.get(path);
  if (visiting.has(path)) fail(path, 1, 'circular imports are not supported');
  visiting.add(path);
  const out = [];
  const exports = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (/^import\b/.test(line)) {
      let stmt = line;
      while (!/['"][^'"]+['"]\s*;?\s*$/.test(stmt) && i + 1 < lines.length) stmt += ' ' + lines[++i];
      const flat = stmt.replace(/\s+/g, ' ');
      const bare = /^import\s+(?:[^'"]*\s+from\s+)?['"]([^'"]+)['"]\s*;?\s*$/.exec(flat);
      if (bare && !bare[1].startsWith('.')) {
        const spec = bare[1];
        if (spec.startsWith('wasi:')) {
          if (!isEntry && !wasi) fail(path, i + 1, 'wasi: imports belong in io-wasi.js');
        } else if (spec.startsWith('node:')) {
          if (wasi) fail(path, i + 1, `${spec} exists natively only: the component has no Node (keep node: imports to io.js)`);
        } else {
          packageImport(path, i + 1, spec);
        }
        hoisted.add(stmt.trim().replace(/;?$/, ';'));
        continue;
      }
      const m = /^import\s+(?:(?:\{([^}]*)\}|\*\s+as\s+([\w$]+))\s+from\s+)?['"]([^'"]+)['"]\s*;?\s*$/.exec(flat);
      if (!m) fail(path, i + 1, `cannot read this import: ${stmt}`);
      const [, named, namespace, spec] = m;
      const dep = load(place(path, spec), false);
      for (const b of named === undefined ? [] : bindingsOf(named)) {
        const name = b.split(':')[0];
        if (!dep.exports.some((e) => e.split(':')[0] === name)) fail(path, i + 1, `${spec} does not export ${name}`);
      }
      if (named !== undefined) out.push(`const { ${bindingsOf(named).join(', ')} } = ${dep.name};`);
      else if (namespace) out.push(`const ${namespace} = ${dep.name};`);
      continue;
    }
    if (!isEntry && /^export\b/.test(line)) {
      let m;
      if ((m = /^export\s+((?:async\s+)?function\*?\s+([\w$]+)|class\s+([\w$]+)|(?:const|let|var)\s+([\w$]+)\s*=)/.exec(line))) {
        if (m[4] && declaresMore(line)) fail(path, i + 1, 'export one name per declaration');
        exports.push(m[2] ?? m[3] ?? m[4]);
        line = line.replace(/^export\s+/, '');
      } else if ((m = /^export\s*\{([^}]*)\}\s*;?\s*$/.exec(line))) {
        for (const s of m[1].split(',').map((x) => x.trim()).filter(Boolean)) {
          const [name, alias] = s.split(/\s+as\s+/);
          exports.push(alias ? `${alias}: ${name}` : name);
        }
        continue;
      } else {
        fail(path, i + 1, `cannot read this export: ${line}`);
      }
    }
    out.push(line);
  }
  visiting.delete(path);
  const mod = { name: `__module${modules.size}`, code: out.join('\n'), exports };
  modules.set(path, mod);
  return mod;
}

// A bare import of an npm package: it must be installed in the bot folder,
// and rolldown must be there to bundle it.
function packageImport(path, line, spec) {
  const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  if (!existsSync(join(root, 'node_modules', name))) {
    fail(path, line, `'${spec}' is an npm package, not in ${relative(process.cwd(), join(root, 'node_modules')) || 'node_modules'}/: ` +
      `install it in the bot folder first (npm install ${name}); build.sh then bundles it in with rolldown (KIT-README.md, "npm packages")`);
  }
  if (!rolldownDir) {
    fail(path, line, `'${spec}' is an npm package: bundling it needs rolldown (sh build.sh passes the producer's: --rolldown DIR)`);
  }
  packages.add(spec);
}

const top = load(entry, true);
modules.delete(entry);
const parts = [...hoisted];
for (const [path, mod] of modules) {
  parts.push(`// ${relative(root, path)}`);
  parts.push(`const ${mod.name} = (() => {\n${mod.code}\nreturn { ${mod.exports.join(', ')} };\n})();`);
}
parts.push(`// ${relative(root, entry)}`, top.code);
const local = parts.join('\n') + '\n';
if (packages.size === 0) {
  process.stdout.write(local);
} else {
  // rolldown resolves the packages from the bot folder's node_modules/ and
  // keeps the wasi: imports (the component's) as they are.
  const input = join(root, 'build', 'local.mjs');
  mkdirSync(dirname(input), { recursive: true });
  writeFileSync(input, local);
  const manifest = JSON.parse(readFileSync(join(rolldownDir, 'package.json'), 'utf8'));
  const main = typeof manifest.exports?.['.'] === 'string' ? manifest.exports['.'] : manifest.exports?.['.']?.import ?? manifest.module;
  const { rolldown } = await import(pathToFileURL(join(rolldownDir, main)).href);
  try {
    const bundle = await rolldown({
      input,
      cwd: root,
      platform: 'browser',
      external: (id) => id.startsWith('wasi:'),
      logLevel: 'warn',
    });
    const { output } = await bundle.generate({ format: 'esm' });
    await bundle.close();
    process.stdout.write(output[0].code);
  } catch (e) {
    console.error(`bundle.mjs: rolldown could not bundle ${[...packages].join(', ')}: ${e.message}`);
    process.exit(1);
  }
}
