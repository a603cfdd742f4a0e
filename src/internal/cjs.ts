import { createRequire } from 'node:module';

/**
 * requireCjs loads a CommonJS package (commander, find-my-way, better-sqlite3,
 * and on first use yaml and fast-json-patch) through Node's CommonJS loader. An
 * `import` of such a package goes through the ES module loader, which parses the
 * source of each of its files for named exports: ~75 ms of a `kevents serve`
 * start on a small machine, for nothing we use. Types come from `import type`.
 */
export const requireCjs: NodeJS.Require = createRequire(import.meta.url);
